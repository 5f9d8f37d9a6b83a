"""Start real sandbox processes the way users do and talk to them over loopback HTTP; or run the
sandbox's ASGI application inside the test's process (``AppSandbox``) for client and service
tests that need no socket."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from app.api import ServiceClient
from app.sandbox.config import SandboxConfig
from app.sandbox.context import Sandbox
from app.sandbox.server import create_app
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.services.terminal import Terminal

ROOT = Path(__file__).resolve().parents[1]
ADMIN_TOKEN = "test-admin-token"
ADMIN_ENV = "TRADETERM_SANDBOX_ADMIN_TOKEN"
STARTUP_TIMEOUT = 30.0
_counter = itertools.count(1)


def body(response: httpx.Response) -> Any:
    """The response's JSON with every number as Decimal or int (never float), as money wants."""
    return json.loads(response.text, parse_float=Decimal)


def digest(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()


class SandboxProcess:
    """``python -m app sandbox --port 0 ...`` in a child process; ``url`` once it listens."""

    def __init__(
        self,
        *args: str,
        db: str | None = ":memory:",
        admin_token: str | None = ADMIN_TOKEN,
        env: dict[str, str] | None = None,
    ):
        self.args = [*args]
        self.db = db
        self.admin_token = admin_token
        self.env = env or {}
        self.url = ""
        self.proc: subprocess.Popen[str] | None = None
        # Lives as long as the process; closed in stop().
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115

    def start(self) -> SandboxProcess:
        argv = [sys.executable, "-m", "app", "sandbox", "--port", "0", *self.args]
        if self.db is not None:
            argv += ["--db", self.db]
        # The admin token travels in the environment: argv is visible to every user in ps.
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        env.pop(ADMIN_ENV, None)
        if self.admin_token:
            env[ADMIN_ENV] = self.admin_token
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            env=env,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if ready:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        prefix = "Sandbox listening on "
        if not line.startswith(prefix):
            self.stop()
            raise RuntimeError(f"sandbox did not start: {line!r}; stderr: {self.stderr()}")
        self.url = line[len(prefix) :].strip()
        return self

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, wait; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode

    def close(self) -> None:
        self.stop()
        self._stderr.close()

    def admin(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, timeout=30, headers={"X-Sandbox-Admin": self.admin_token or ""}
        )

    def logins(self, user: str) -> int:
        """Successful logins of ``user`` so far, from the sandbox's admin stats."""
        with self.admin() as admin:
            response = admin.get("/api/v1/sandbox/admin/stats")
            assert response.status_code == 200, response.text
            count: int = response.json()["logins"].get(user, 0)
        return count


class _LoggedIn:
    """What both kinds of test user share: the login request, the token it gives, the
    Authorization header."""

    user: str
    password: str
    token: str

    def login_body(self) -> dict[str, str]:
        return {"user": self.user, "password": digest(self.password)}

    def _took(self, response: httpx.Response) -> str:
        assert response.status_code == 200, response.text
        self.token = response.json()["token"]
        return self.token

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Session(_LoggedIn):
    """A logged-in client of one sandbox: ``get``/``post`` with ``{account}`` in paths."""

    base_url: str
    user: str
    password: str
    account: str
    token: str = ""
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = httpx.Client(base_url=self.base_url, timeout=30)
        if not self.token:
            self.login()

    def login(self) -> str:
        return self._took(self.http.post("/api/v1/identity/jwt", json=self.login_body()))

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(
            path.format(account=self.account), params=params or None, headers=self.headers
        )

    def post(self, path: str, body: Any = None, *, content: bytes | None = None) -> httpx.Response:
        url = path.format(account=self.account)
        if content is not None:
            return self.http.post(
                url, content=content, headers={**self.headers, "Content-Type": "application/json"}
            )
        return self.http.post(url, json=body, headers=self.headers)

    def limit_order(self, source: str, destination: str, size: str, **extra: Any) -> httpx.Response:
        body = {
            "accountId": {"value": self.account},
            "type": "limit",
            "source": source,
            "destination": destination,
            "size": size,
            **extra,
        }
        return self.post("/api/v1/routing/account/{account}/order/limit", body)

    def close(self) -> None:
        self.http.close()


def new_client_request(
    balances: dict[str, str] | None, credit: dict[str, str] | None
) -> tuple[str, dict[str, Any]]:
    """A fresh user's name and the admin request that creates it (USD 100000 and BTC 2 unless
    told; the password is the name, hashed as the login form hashes it)."""
    name = f"t{next(_counter)}-{uuid.uuid4().hex[:8]}"
    return name, {
        "user": name,
        "password": digest(name),
        "accountId": f"acct-{name}",
        "balances": balances if balances is not None else {"USD": "100000", "BTC": "2"},
        "credit": credit or {},
    }


def add_client(
    sandbox: SandboxProcess,
    user: str,
    password: str,
    balances: dict[str, str],
    credit: dict[str, str] | None = None,
) -> None:
    """Create ``user`` (account ``acct-<user>``) with a password of its own: the tests that look
    for a leaked secret need one unlike every name."""
    request: dict[str, Any] = {
        "user": user,
        "password": digest(password),
        "accountId": f"acct-{user}",
        "balances": balances,
    }
    if credit is not None:
        request["credit"] = credit
    with sandbox.admin() as admin:
        response = admin.post("/api/v1/sandbox/admin/clients", json=request)
        assert response.status_code == 200, response.text


def new_client(
    sandbox: SandboxProcess,
    balances: dict[str, str] | None = None,
    credit: dict[str, str] | None = None,
) -> Session:
    """A fresh user and account on ``sandbox`` (admin route), logged in."""
    name, request = new_client_request(balances, credit)
    with sandbox.admin() as admin:
        response = admin.post("/api/v1/sandbox/admin/clients", json=request)
        assert response.status_code == 200, response.text
    return Session(sandbox.url, name, name, f"acct-{name}")


async def terminal_session(
    sandbox: SandboxProcess,
    account: Session,
    client: ServiceClient,
    intervals: FeedIntervals,
    watchlist: list[str] | None = None,
) -> TerminalSession:
    """The terminal's session of ``account`` on ``sandbox`` through ``client`` (its transport,
    retries and clock are the caller's), logged in but not started: the caller starts and stops
    it and closes the client."""
    await client.login(account.user, account.password, account.account)
    environment = Environment(sandbox.url, account.user, account.account, sandbox=True)
    return TerminalSession(client, environment, intervals, watchlist)


async def open_terminal(
    sandbox: SandboxProcess,
    account: Session,
    client: ServiceClient,
    intervals: FeedIntervals,
    watchlist: list[str] | None = None,
) -> Terminal:
    """The terminal of ``account`` on ``sandbox`` as ``connect`` builds it (one task owner for
    all its loops), through ``client``, logged in but not started: the caller starts it and
    ends it with ``aclose`` (which closes the client)."""
    await client.login(account.user, account.password, account.account)
    environment = Environment(sandbox.url, account.user, account.account, sandbox=True)
    return Terminal.build(client, environment, intervals, watchlist)


@contextmanager
def bench_sandbox(balances: dict[str, str]) -> Iterator[tuple[SandboxProcess, Session]]:
    """A bench's sandbox on a database file (as users run it) with one funded, logged-out client;
    the process and its folder are gone afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        sandbox = SandboxProcess(db=str(Path(folder) / "bench.db")).start()
        try:
            session = new_client(sandbox, balances=balances)
            session.close()
            yield sandbox, session
        finally:
            sandbox.close()


def user_env(home: Path) -> dict[str, str]:
    """A user's environment for a real terminal: no TRADETERM_ settings of ours, Qt offscreen,
    its config, logs and data under ``home``, so a launch test or bench leaves nothing behind."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("TRADETERM_")}
    return {
        **env,
        "QT_QPA_PLATFORM": "offscreen",
        "TRADETERM_CONFIG_DIR": str(home / "config"),
        "TRADETERM_LOG_DIR": str(home / "log"),
        "XDG_DATA_HOME": str(home / "data"),
        "HOME": str(home),
    }


def run_captured(
    argv: list[str], *, env: dict[str, str] | None = None, timeout: float, cwd: Path | str = ROOT
) -> subprocess.CompletedProcess[str]:
    """A child run to its end, its output captured as text: the caller asserts on the exit code."""
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=timeout, check=False, cwd=cwd
    )


def launch(
    *args: str, env: dict[str, str] | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """``python -m app ARGS`` from the checkout as a user runs it, its output captured."""
    return run_captured([sys.executable, "-m", "app", *args], env=env, timeout=timeout)


def own_sandbox(*args: str) -> Iterator[SandboxProcess]:
    """The body of a fixture with a sandbox process of its own: started, yielded, closed."""
    process = SandboxProcess(*args).start()
    yield process
    process.close()


def fresh_client(sandbox: SandboxProcess) -> Iterator[Session]:
    """The body of a fixture giving a fresh funded client: created, yielded, closed."""
    session = new_client(sandbox)
    yield session
    session.close()


def invariant(sandbox: SandboxProcess, account: str) -> dict[str, Any]:
    """Balances next to ledger sums, from the admin route."""
    with sandbox.admin() as admin:
        response = admin.get(f"/api/v1/sandbox/admin/account/{account}/invariant")
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result


def wait_until(condition: Any, timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail after ``timeout`` seconds.

    For waiting on the sandbox's own clock (quote expiry, token expiry, resting orders): the
    condition asks the server, so the test waits exactly as long as the server needs.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


async def until(condition: Any, timeout: float = 10.0) -> Any:
    """``wait_until`` for async tests: awaits, so the loop's tasks (feeds, desks) keep running
    while the condition is polled."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.02)
    return result


def free_port() -> int:
    """A loopback port free right now (for a sandbox that must come back on the same port)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Faults:
    """A sandbox's fault switches for one test: ``faults(rule, ...)`` sets the rules,
    ``clear()`` lifts them (the fixture clears them after the test too)."""

    PATH = "/api/v1/sandbox/admin/faults"

    def __init__(self, sandbox: SandboxProcess) -> None:
        self.sandbox = sandbox

    def __call__(self, *rules: dict[str, Any]) -> None:
        with self.sandbox.admin() as admin:
            response = admin.post(self.PATH, json={"faults": list(rules)})
            assert response.status_code == 200, response.text

    def clear(self) -> None:
        with self.sandbox.admin() as admin:
            assert admin.delete(self.PATH).status_code == 200


# -- the sandbox in this process ------------------------------------------------------------------


class AppSandbox:
    """The sandbox's ASGI application in the test's own process and event loop: requests go
    through ``httpx.ASGITransport`` (no socket, no child process, no port), to the same routes,
    store and simulator a ``SandboxProcess`` serves.

    The transport does not run the ASGI lifespan, so ``async with AppSandbox(...)`` runs it: the
    price ticker, the resting-order matcher and the deposit completer tick on the test's loop as
    they do under uvicorn, and stop on exit. Options are ``SandboxConfig`` fields
    (``quote_ttl=1``, ``tick_seconds=3600``, ...). What needs a socket stays on the loopback
    ``SandboxProcess``: connections cut mid-answer, client timeouts (httpx's timeouts do not apply
    to an in-process transport), the ``Date`` header (uvicorn's), restarts, the CLI and the GUI.
    """

    url = "http://sandbox.in-process"

    def __init__(self, **options: Any) -> None:
        self.config = SandboxConfig(admin_token=ADMIN_TOKEN, **options)
        self.app = create_app(self.config)
        self._lifespan: AbstractAsyncContextManager[Any] | None = None

    @property
    def state(self) -> Sandbox:
        """The running sandbox's store, market and desks (read-only use, please)."""
        sandbox: Sandbox = self.app.state.sandbox
        return sandbox

    async def __aenter__(self) -> AppSandbox:
        self._lifespan = self.app.router.lifespan_context(self.app)
        await self._lifespan.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        lifespan, self._lifespan = self._lifespan, None
        if lifespan is not None:
            await lifespan.__aexit__(None, None, None)

    def transport(self) -> httpx.ASGITransport:
        """A fresh transport into the app, for a ``ServiceClient(..., transport=...)``."""
        return httpx.ASGITransport(app=self.app)

    def http(self, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=self.transport(), base_url=self.url, timeout=30, headers=headers
        )

    def admin(self) -> httpx.AsyncClient:
        return self.http({"X-Sandbox-Admin": ADMIN_TOKEN})

    async def new_client(
        self, balances: dict[str, str] | None = None, credit: dict[str, str] | None = None
    ) -> AppAccount:
        """A fresh user and account (admin route; USD 100000, BTC 2 unless told), logged in."""
        name, request = new_client_request(balances, credit)
        async with self.admin() as admin:
            response = await admin.post("/api/v1/sandbox/admin/clients", json=request)
            assert response.status_code == 200, response.text
        account = AppAccount(self, name, name, f"acct-{name}")
        await account.login()
        return account

    async def invariant(self, account: str) -> dict[str, Any]:
        """Balances next to ledger sums, from the admin route."""
        async with self.admin() as admin:
            response = await admin.get(f"/api/v1/sandbox/admin/account/{account}/invariant")
            assert response.status_code == 200, response.text
            result: dict[str, Any] = response.json()
            return result

    async def faults(self, *rules: dict[str, Any], seed: int = 0) -> None:
        """Set the fault switches (``Faults`` for a process); ``clear_faults`` lifts them."""
        async with self.admin() as admin:
            response = await admin.post(Faults.PATH, json={"faults": list(rules), "seed": seed})
            assert response.status_code == 200, response.text

    async def clear_faults(self) -> None:
        async with self.admin() as admin:
            assert (await admin.delete(Faults.PATH)).status_code == 200


@dataclass
class AppAccount(_LoggedIn):
    """A logged-in user of an ``AppSandbox``: ``await get``/``post`` with ``{account}`` in
    paths, like ``Session`` for a process."""

    sandbox: AppSandbox
    user: str
    password: str
    account: str
    token: str = ""

    async def login(self) -> str:
        async with self.sandbox.http() as http:
            return self._took(await http.post("/api/v1/identity/jwt", json=self.login_body()))

    async def get(self, path: str, **params: Any) -> httpx.Response:
        async with self.sandbox.http(self.headers) as http:
            return await http.get(path.format(account=self.account), params=params or None)

    async def post(self, path: str, body: Any = None) -> httpx.Response:
        async with self.sandbox.http(self.headers) as http:
            return await http.post(path.format(account=self.account), json=body)


class Recorder(httpx.AsyncBaseTransport):
    """httpx's own transport, writing down every request (bytes included) before it leaves."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def sent(self, method: str, fragment: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == method and fragment in r.url.path]

    def posted(self, fragment: str) -> list[bytes]:
        return [r.content for r in self.sent("POST", fragment)]
