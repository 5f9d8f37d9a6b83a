"""One owner for background tasks: each is referenced while it runs, a failure is logged (never
lost to the loop's handler), and ``aclose`` cancels every one and waits until all have ended.

Like ``asyncio.TaskGroup`` in that nothing it started outlives its ``aclose``; unlike it in
that one failing task does not cancel the others — a start-up reconcile that fails must not
take the price feeds with it. No Qt (design.md §1)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger("tradeterm.services")

#: Told of a task that failed: its name (what it was doing) and the exception.
FailureHandler = Callable[[str, BaseException], None]


def _log_failure(what: str, exc: BaseException) -> None:
    log.error("%s failed", what, exc_info=exc)


class Tasks:
    def __init__(self, on_error: FailureHandler = _log_failure) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Told of each failure (the terminal tells the trader).
        self.on_error = on_error
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, T], what: str) -> asyncio.Task[T]:
        """Run ``coro`` as a task named ``what``; RuntimeError once closed (nothing may start
        after shutdown began)."""
        if self._closed:
            coro.close()
            raise RuntimeError(f"cannot start {what!r}: the owner is closed")
        task = asyncio.get_running_loop().create_task(coro, name=what)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.on_error(task.get_name(), exc)

    @property
    def running(self) -> int:
        return len(self._tasks)

    @property
    def closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        """Cancel every task and wait until each has ended; nothing starts afterwards."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def may_start(owner: Tasks | None) -> bool:
    """Whether ``owner`` still takes tasks (no owner: always). Background work asked for
    during shutdown is not started: what it would have looked up stays in the journal, and the
    next start's reconcile finds it."""
    return owner is None or not owner.closed


def spawn(owner: Tasks | None, coro: Coroutine[Any, Any, T], what: str) -> asyncio.Task[T]:
    """``coro`` as a task of ``owner`` (a terminal's: cancelled and awaited by its ``aclose``),
    or, with no owner (a test or a command that runs one part alone), of the running loop; the
    caller keeps the task either way."""
    if owner is not None:
        return owner.spawn(coro, what)
    return asyncio.get_running_loop().create_task(coro, name=what)
