"""Shared fixtures: a real sandbox process over loopback for the session, more on demand, and the
sandbox's app in the test's own process (``app_sandbox``) for client and service tests."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from app.services.settling import OrderSettler, Sought
from tests.harness import AppSandbox, Faults, SandboxProcess, Session, fresh_client
from tests.helpers.durations import RECORD_DURATIONS, write_durations

# Property tests replay the same examples (derived from each test) on every run, so the suite
# never fails on an example no earlier run tried; HYPOTHESIS_EXPLORE=1 lets them look for new
# ones, where a failure is a finding to fix and then to keep as an explicit example.
settings.register_profile("replay", derandomize=True)
if not os.environ.get("HYPOTHESIS_EXPLORE"):
    settings.load_profile("replay")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The bundle build is a step of its own (``pytest -m bundle``, after the suite in .ci/run):
    a run leaves the ``bundle`` tests out unless its ``-m`` expression mentions ``bundle`` or it
    names their file."""
    if "bundle" in (config.option.markexpr or ""):
        return
    named = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    left_out = [
        item for item in items if item.get_closest_marker("bundle") and item.path not in named
    ]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]


#: Call durations of this run, when ``RECORD_DURATIONS`` names a file to keep them in.
_measured: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Under xdist the controller gets every worker's reports here too, so it alone writes."""
    if os.environ.get(RECORD_DURATIONS) and report.when == "call" and not report.skipped:
        _measured[report.nodeid] = report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(RECORD_DURATIONS)
    if target and _measured and not hasattr(session.config, "workerinput"):
        write_durations(Path(target), _measured)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxProcess]:
    """One sandbox for the whole session, in memory, with the admin routes on."""
    process = SandboxProcess().start()
    yield process
    process.stop()


@pytest.fixture
def sandbox_factory() -> Iterator[Callable[..., SandboxProcess]]:
    """Start extra sandboxes with their own options; all are stopped after the test."""
    started: list[SandboxProcess] = []

    def start(*args: str, db: str = ":memory:") -> SandboxProcess:
        process = SandboxProcess(*args, db=db).start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def faults(sandbox: SandboxProcess) -> Iterator[Faults]:
    """The shared sandbox's fault switches; whatever a test injected is cleared after it."""
    rules = Faults(sandbox)
    yield rules
    rules.clear()


@pytest.fixture
def client(sandbox: SandboxProcess) -> Iterator[Session]:
    """A fresh, funded client (USD 100000, BTC 2, no credit) on the shared sandbox."""
    yield from fresh_client(sandbox)


@pytest.fixture
def demo(sandbox: SandboxProcess) -> Iterator[Session]:
    """The seeded ``demo`` user on the shared sandbox (read-only use, please)."""
    session = Session(sandbox.url, "demo", "demo", "demo")
    yield session
    session.close()


@pytest.fixture
async def app_sandbox(anyio_backend: str) -> AsyncIterator[AppSandbox]:
    """A fresh sandbox app in this process, its lifespan (ticker, matcher) on the test's loop;
    reach it with ``app_sandbox.transport()`` (see ``AppSandbox``)."""
    async with AppSandbox() as sandbox:
        yield sandbox


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``@pytest.mark.anyio``) run on asyncio, like the app."""
    return "asyncio"


@pytest.fixture
def look_ups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The clientOrderIds ``OrderSettler.look_up`` (the one look-up) was asked about."""
    asked: list[str] = []
    original = OrderSettler.look_up

    async def spy(self: OrderSettler, sought: Sought) -> object:
        asked.append(sought.client_order_id)
        return await original(self, sought)

    monkeypatch.setattr(OrderSettler, "look_up", spy)
    return asked
