"""Async work started from Qt, owned by a widget: referenced while it runs, cancelled when the
widget goes, and never failing silently.

qasync's ``asyncSlot`` keeps no reference per owner and loses exceptions to the loop's handler;
``TaskOwner.spawn`` does both jobs explicitly and keeps mypy informed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject

T = TypeVar("T")
log = logging.getLogger("tradeterm.ui")

ErrorHandler = Callable[[str, BaseException], None]


def _default_error(what: str, exc: BaseException) -> None:
    log.error("%s failed", what, exc_info=exc)


class TaskOwner:
    """Tasks spawned on behalf of ``owner``; all cancelled when ``owner`` is destroyed."""

    def __init__(self, owner: QObject, on_error: ErrorHandler | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._on_error = on_error or _default_error
        self._owner_alive = True
        owner.destroyed.connect(self._owner_gone)

    def spawn(self, coro: Coroutine[Any, Any, T], what: str) -> asyncio.Task[T]:
        task = asyncio.get_event_loop().create_task(coro, name=what)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(done, what))
        return task

    def _finished(self, task: asyncio.Task[Any], what: str) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        # A task that failed just before its widget went reports after it: the widget's own
        # handler would touch deleted Qt objects, so the failure is only logged then.
        report = self._on_error if self._owner_alive else _default_error
        report(what, exc)

    @property
    def running(self) -> int:
        return len(self._tasks)

    def _owner_gone(self, *_: object) -> None:
        self._owner_alive = False
        self.cancel_all()

    def cancel_all(self, *_: object) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def aclose(self) -> None:
        """Cancel every task and wait until each has ended (at quit, before the connection
        and the journal close under them)."""
        tasks = list(self._tasks)
        self.cancel_all()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
