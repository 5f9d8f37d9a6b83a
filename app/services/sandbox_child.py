"""The embedded sandbox as a child process of the terminal (``tradeterm --sandbox``).

Started the way tests start it (``python -m app sandbox --port 0``), its URL read from the one
line it prints; stopped with SIGTERM when the terminal exits (killed if it does not stop). In
the PyInstaller bundle ``sys.executable`` is the bundle's own ``tradeterm``, not a Python, so
the child is ``tradeterm sandbox ...`` there.

One database has one sandbox (its writer lock, ``<db>.lock``): a second terminal on the same
database finds the lock held, reads the URL the running sandbox wrote next to it
(``<db>.url``), checks that ``/api/v1/routing/time`` answers there and uses that sandbox
instead of starting a child — and, not owning it, leaves it running when it exits.

A child that exits without being asked (killed, crashed) is seen at once: ``stopped`` says how,
in words ("killed by signal 9"), and ``restart`` starts it again on the same database and the
same port, so the terminal's connection, tokens and journal carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections import deque
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from app.api import ClientSettings, RetryPolicy, ServiceClient, ServiceError
from app.services.events import Topic

log = logging.getLogger("tradeterm.sandbox")

PREFIX = "Sandbox listening on "


def sandbox_command() -> list[str]:
    """The argv that runs ``tradeterm sandbox`` with the code this process is running."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "sandbox"]
    return [sys.executable, "-m", "app", "sandbox"]


#: How long the child may take to say where it listens, and to exit when asked.
START_SECONDS = 30.0
STOP_SECONDS = 10.0


#: How long to wait for a running sandbox (lock held) to publish a URL that answers.
JOIN_SECONDS = 10.0


def exit_words(code: int) -> str:
    """How a process ended, for a trader: ``killed by signal 9 (SIGKILL)``, ``exited with
    code 1``."""
    if code < 0:
        try:
            name = f" ({signal.Signals(-code).name})"
        except ValueError:
            name = ""
        return f"killed by signal {-code}{name}"
    return f"exited with code {code}"


class SandboxStartFailed(Exception):
    """The child did not come up; the message says what it printed."""


def default_db_path() -> str:
    """The sandbox's default database (``app.sandbox.cli.default_db_path``: the services may
    not import the sandbox, so the rule is repeated here)."""
    folder = Path(platformdirs.user_data_dir("tradeterm", appauthor=False))
    return str(folder / "sandbox.db")


def lock_held(db: str) -> bool:
    """Whether a sandbox process holds ``db``'s writer lock (``<db>.lock``) right now."""
    if db == ":memory:" or not os.path.exists(db + ".lock"):
        return False
    handle = os.open(db + ".lock", os.O_RDWR)
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            try:
                msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
            except OSError:
                return True
            msvcrt.locking(handle, msvcrt.LK_UNLCK, 1)
            return False
        import fcntl

        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False
    finally:
        os.close(handle)


def published_url(db: str) -> str | None:
    try:
        return Path(db + ".url").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


async def answers(url: str) -> bool:
    """Whether a service answers its time endpoint at ``url`` within two seconds."""
    settings = ClientSettings(url, connect_timeout=2.0, read_timeout=2.0)
    async with ServiceClient(settings, retry=RetryPolicy(attempts=1)) as client:
        try:
            await client.service_time()
        except ServiceError:
            return False
    return True


class SandboxChild:
    def __init__(
        self,
        db: str | None = None,
        extra_args: tuple[str, ...] = (),
        *,
        join_seconds: float = JOIN_SECONDS,
    ) -> None:
        self._db = db
        self._extra = extra_args
        self._join_seconds = join_seconds
        #: True when another process's sandbox on the same database is used (not stopped here).
        self.reused = False
        self._process: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[None] | None = None
        self.stderr_tail: deque[str] = deque(maxlen=20)
        self.url = ""
        #: Set once the process exists (before it is ready): the caller may do other work
        #: while the sandbox boots.
        self.spawned = asyncio.Event()
        #: The child exited without being asked: how, in words.
        self.stopped: Topic[str] = Topic("sandbox stopped")
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> str:
        db = self._db or default_db_path()
        if lock_held(db):
            return await self._join(db)
        return await self._spawn(db)

    async def _join(self, db: str) -> str:
        """Use the sandbox that holds ``db``'s lock, once its URL answers; wait a little for a
        sandbox that is still starting. Its owner stops it, not this terminal."""
        deadline = asyncio.get_running_loop().time() + self._join_seconds
        url = published_url(db)
        while True:
            if url is not None and await answers(url):
                log.info("the sandbox on %s is already running at %s: using it", db, url)
                self.url, self.reused = url, True
                self.spawned.set()
                return url
            if not lock_held(db):  # it stopped meanwhile: start our own
                return await self._spawn(db, may_join=False)
            if asyncio.get_running_loop().time() > deadline:
                raise SandboxStartFailed(
                    f"the sandbox database {db} is in use by another process that does not "
                    f"answer (at {url or 'no published URL'}); stop it, or use another database"
                )
            await asyncio.sleep(0.2)
            url = published_url(db)

    async def _spawn(self, db: str, *, may_join: bool = True) -> str:
        """Start the child; if another sandbox took the database first (two terminals
        starting together), join that one instead."""
        timeout = START_SECONDS
        argv = [*sandbox_command(), "--port", "0", *self._extra]  # a later --port wins
        if self._db:
            argv += ["--db", self._db]
        self._process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
        self.spawned.set()
        assert self._process.stdout is not None
        try:
            line = (await asyncio.wait_for(self._process.stdout.readline(), timeout)).decode()
        except TimeoutError:
            await self.stop()
            raise SandboxStartFailed(f"the sandbox did not start within {timeout:.0f} s") from None
        if not line.startswith(PREFIX):
            detail = await self._stderr_tail()
            await self.stop()
            if may_join and "in use by another sandbox" in detail:
                return await self._join(db)
            raise SandboxStartFailed(f"the sandbox did not start: {line.strip() or detail}")
        self.url = line[len(PREFIX) :].strip()
        loop = asyncio.get_running_loop()
        self._drain = loop.create_task(self._read_pipes(self._process), name="sandbox child pipes")
        self._watch = loop.create_task(self._watch_exit(self._process), name="sandbox child exit")
        return self.url

    async def _watch_exit(self, process: asyncio.subprocess.Process) -> None:
        """Say at once when the child exits unasked (``stop`` takes it away first)."""
        code = await process.wait()
        if self._process is process:
            words = f"The embedded sandbox stopped: {exit_words(code)}"
            log.error("%s", words)
            self.stopped.publish(words)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def restart(self) -> str:
        """Start the child again on the same database and the same port (the terminal's
        client keeps its URL). SandboxStartFailed when it does not come up."""
        if self.reused or not self.url:
            raise SandboxStartFailed("this terminal did not start the sandbox it uses")
        await self.stop()
        port = urlsplit(self.url).port
        extra = self._extra
        self._extra = (*extra, "--port", str(port)) if port else extra
        try:
            return await self._spawn(self._db or default_db_path(), may_join=False)
        finally:
            self._extra = extra

    async def _read_pipes(self, process: asyncio.subprocess.Process) -> None:
        """Keep reading the child's output until it closes: a pipe nobody reads fills up
        (about 64 KB) and would freeze the sandbox mid-write. Keeps the last stderr lines."""

        async def stderr() -> None:
            assert process.stderr is not None
            async for raw in process.stderr:
                self.stderr_tail.append(raw.decode(errors="replace").rstrip())

        async def stdout() -> None:
            assert process.stdout is not None
            async for _ in process.stdout:
                pass

        await asyncio.gather(stderr(), stdout())

    async def _stderr_tail(self) -> str:
        if self._process is None or self._process.stderr is None:
            return ""
        with contextlib.suppress(TimeoutError):
            data = await asyncio.wait_for(self._process.stderr.read(4000), 2)
            return data.decode(errors="replace").strip().splitlines()[-1:][0] if data else ""
        return ""

    async def stop(self) -> int | None:
        timeout = STOP_SECONDS
        process, self._process = self._process, None
        if process is None:
            return None
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout)
            except TimeoutError:
                process.kill()
                await process.wait()
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
        drain, self._drain = self._drain, None
        if drain is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(drain, 2)
        return process.returncode
