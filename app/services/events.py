"""A tiny publish/subscribe primitive: services publish, the UI (or a test) subscribes.

Callbacks run synchronously in the publisher's task, in subscription order; one failing
subscriber is logged and does not stop the others or the publisher.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
log = logging.getLogger("tradeterm.services")


class Topic(Generic[T]):
    def __init__(self, name: str) -> None:
        self.name = name
        self._subscribers: list[Callable[[T], None]] = []

    def subscribe(self, callback: Callable[[T], None]) -> Callable[[], None]:
        """Add ``callback``; returns a function that removes it again."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def publish(self, value: T) -> None:
        for callback in list(self._subscribers):
            try:
                callback(value)
            except Exception:
                log.exception("subscriber of %s failed", self.name)


async def cancel_and_wait(task: asyncio.Task[None] | None) -> None:
    """Cancel ``task`` (if any) and wait until it has ended (a feed's or monitor's ``stop``)."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
