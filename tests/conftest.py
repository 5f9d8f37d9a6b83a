"""Shared fixtures: a real sandbox process over loopback for the session, more on demand."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable, Iterator

import pytest

from tests.harness import SandboxProcess, Session, new_client


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
def client(sandbox: SandboxProcess) -> Iterator[Session]:
    """A fresh, funded client (USD 100000, BTC 2, no credit) on the shared sandbox."""
    session = new_client(sandbox)
    yield session
    session.close()


@pytest.fixture
def demo(sandbox: SandboxProcess) -> Iterator[Session]:
    """The seeded ``demo`` user on the shared sandbox (read-only use, please)."""
    session = Session(sandbox.url, "demo", "demo", "demo")
    yield session
    session.close()


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``@pytest.mark.anyio``) run on asyncio, like the app."""
    return "asyncio"
