"""The embedded sandbox as a child process of the terminal (``tradeterm --sandbox``).

Started the way tests start it (``python -m app sandbox --port 0``), its URL read from the one
line it prints; stopped with SIGTERM when the terminal exits (killed if it does not stop). In
the PyInstaller bundle ``sys.executable`` is the bundle's own ``tradeterm``, not a Python, so
the child is ``tradeterm sandbox ...`` there.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import deque

PREFIX = "Sandbox listening on "


def sandbox_command() -> list[str]:
    """The argv that runs ``tradeterm sandbox`` with the code this process is running."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "sandbox"]
    return [sys.executable, "-m", "app", "sandbox"]


#: How long the child may take to say where it listens, and to exit when asked.
START_SECONDS = 30.0
STOP_SECONDS = 10.0


class SandboxStartFailed(Exception):
    """The child did not come up; the message says what it printed."""


class SandboxChild:
    def __init__(self, db: str | None = None, extra_args: tuple[str, ...] = ()) -> None:
        self._db = db
        self._extra = extra_args
        self._process: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[None] | None = None
        self.stderr_tail: deque[str] = deque(maxlen=20)
        self.url = ""
        #: Set once the process exists (before it is ready): the caller may do other work
        #: while the sandbox boots.
        self.spawned = asyncio.Event()

    async def start(self) -> str:
        timeout = START_SECONDS
        argv = [*sandbox_command(), "--port", "0", *self._extra]
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
            raise SandboxStartFailed(f"the sandbox did not start: {line.strip() or detail}")
        self.url = line[len(PREFIX) :].strip()
        self._drain = asyncio.get_running_loop().create_task(
            self._read_pipes(self._process), name="sandbox child pipes"
        )
        return self.url

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
        drain, self._drain = self._drain, None
        if drain is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(drain, 2)
        return process.returncode
