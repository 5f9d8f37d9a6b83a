"""The trader's password in the OS keyring, and nowhere else.

``keyring`` is optional (not a project dependency): it is imported lazily by
``system_keyring()``, which also tells whether a real backend is there. Without one the login
dialog offers no "remember" at all — there is no plain-text fallback.

Keyring backends are synchronous and may wait on the OS (an unlock prompt, D-Bus), so
``PasswordVault`` runs every call on one worker thread and offers coroutines. Calls are handed
over as closures so no password appears in a repr or a debug log line (qasync logs the
arguments of ``run_in_executor`` at DEBUG level).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

log = logging.getLogger("tradeterm.ui.secrets")
T = TypeVar("T")

SERVICE_NAME = "tradeterm"


class KeyringLike(Protocol):
    """What the dialog needs of a keyring; the ``keyring`` module itself fits."""

    def get_password(self, service_name: str, username: str, /) -> str | None: ...

    def set_password(self, service_name: str, username: str, password: str, /) -> None: ...

    def delete_password(self, service_name: str, username: str, /) -> None: ...


@dataclass(frozen=True)
class KeyringStatus:
    """A usable keyring, or why there is none (in words for a tooltip)."""

    store: KeyringLike | None
    reason: str = ""


def system_keyring() -> KeyringStatus:
    """The OS keyring through the ``keyring`` package, if it is installed and has a backend."""
    try:
        module: Any = importlib.import_module("keyring")
    except ImportError:
        return KeyringStatus(
            None, "Remembering passwords needs the optional 'keyring' package, not installed."
        )
    try:
        backend = module.get_keyring()
        problem = backend_problem(backend)
    except Exception as exc:
        log.warning("The OS keyring cannot be used: %s", type(exc).__name__)
        return KeyringStatus(None, f"The OS keyring cannot be used ({type(exc).__name__}).")
    if problem:
        return KeyringStatus(None, problem)
    store: KeyringLike = module
    return KeyringStatus(store)


def backend_problem(backend: object) -> str:
    """Why ``backend`` (from ``keyring.get_keyring()``) cannot keep a password; "" if it can."""
    fail: Any = importlib.import_module("keyring.backends.fail")
    if isinstance(backend, fail.Keyring):
        return "No OS keyring was found (keyring has no usable backend)."
    try:
        null: Any = importlib.import_module("keyring.backends.null")
    except ImportError:
        null = None
    if null is not None and isinstance(backend, null.Keyring):
        return "The OS keyring is switched off (keyring's null backend is configured)."
    try:
        chainer: Any = importlib.import_module("keyring.backends.chainer")
    except ImportError:
        chainer = None
    if (
        chainer is not None
        and isinstance(backend, chainer.ChainerBackend)
        and not list(backend.backends)
    ):
        return "No OS keyring was found (keyring has no usable backend)."
    return ""


_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tradeterm-keyring")


async def _off_thread(call: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(_worker, call)


class PasswordVault:
    """Passwords kept in a keyring under ``user@service URL``; coroutines, never blocking."""

    def __init__(self, store: KeyringLike) -> None:
        self._store = store

    @staticmethod
    def entry(user: str, base_url: str) -> str:
        return f"{user.strip()}@{base_url.strip()}"

    async def load(self, user: str, base_url: str) -> str | None:
        entry = self.entry(user, base_url)
        try:
            return await _off_thread(lambda: self._store.get_password(SERVICE_NAME, entry))
        except Exception as exc:
            log.warning("Could not read the keyring for %s: %s", entry, type(exc).__name__)
            return None

    async def save(self, user: str, base_url: str, password: str) -> bool:
        entry = self.entry(user, base_url)
        try:
            await _off_thread(lambda: self._store.set_password(SERVICE_NAME, entry, password))
        except Exception as exc:
            log.warning("Could not store the password for %s: %s", entry, type(exc).__name__)
            return False
        return True

    async def forget(self, user: str, base_url: str) -> None:
        entry = self.entry(user, base_url)

        def delete() -> None:
            if self._store.get_password(SERVICE_NAME, entry) is not None:
                self._store.delete_password(SERVICE_NAME, entry)

        try:
            await _off_thread(delete)
        except Exception as exc:
            log.warning("Could not remove the password for %s: %s", entry, type(exc).__name__)
