"""One feed polled on an interval: never overlapping itself, backing off while offline.

A poll starts only after the previous one finished, and the next waits ``interval`` minus the
time the poll took, so a slow server slows the poller instead of piling up requests. After a
failure the wait grows (interval × 2^n, jittered) but stays short (``MAX_BACKOFF``, 1.5 s) for
the first ``QUICK_FAILURES``, then doubles up to ``LONG_BACKOFF`` (30 s); a 429's or 503's
Retry-After is honoured up to 30 s: a poll is cheap and the feeds are the probe that sees the
service come back. Feeds of one connection form a ``FeedGroup``: one success after a
failure wakes every feed of the group and resets its back-off, so all recover together; a lost
login (``LoginExpired``, ``LoginThrottled``) halts the whole group until ``resume()``.
``refresh()`` cuts the current wait short (e.g. balances at once after a fill).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from app.api import LoginExpired, LoginThrottled, RateLimited, ServerError, ServiceError
from app.services.events import Topic, cancel_and_wait
from app.services.tasks import Tasks, spawn

T = TypeVar("T")
log = logging.getLogger("tradeterm.services")

MAX_BACKOFF = 1.5
MAX_RETRY_AFTER = 30.0
#: Failures in a row polled at most ``MAX_BACKOFF`` apart (about half a minute): a blip is seen
#: over within a second or two. A longer outage backs off further, doubling up to
#: ``LONG_BACKOFF``: a service (or an embedded sandbox) that is down for good is not asked
#: several times a second for the rest of the session.
QUICK_FAILURES = 20
LONG_BACKOFF = 30.0


class FeedGroup:
    """The feeds of one connection: they recover together and stop together."""

    def __init__(self) -> None:
        self._members: list[Poller[object]] = []
        self._resumed = asyncio.Event()
        self._resumed.set()
        self.halted_by: ServiceError | None = None  # the lost login that halted the feeds

    def add(self, poller: Poller[object]) -> None:
        self._members.append(poller)

    def recovered(self, source: Poller[object]) -> None:
        """A success after failures somewhere: every other failing feed polls now."""
        for member in self._members:
            if member is not source and member.failing:
                member.reset_backoff()

    def poll_now(self) -> None:
        """Every failing feed polls now, its back-off forgotten (the service is known to be
        back: an embedded sandbox restarted, say); a halted group stays halted."""
        for member in self._members:
            if member.failing:
                member.reset_backoff()

    def halt(self, reason: ServiceError) -> None:
        """Stop polling (no more requests, hence no more logins) until ``resume()``."""
        self.halted_by = reason
        self._resumed.clear()

    def resume(self) -> None:
        self.halted_by = None
        self._resumed.set()
        for member in self._members:
            member.reset_backoff()

    async def wait_resumed(self) -> None:
        await self._resumed.wait()


@dataclass(frozen=True)
class FeedStatus:
    """What is known of one feed's health at a moment."""

    name: str
    interval: float
    last_ok: float | None  # monotonic time of the last good data
    last_latency: float | None  # seconds the last successful poll took
    failures: int  # consecutive failed polls
    last_error: ServiceError | None

    def age(self, now: float | None = None) -> float | None:
        """Seconds since the last good data (None before any)."""
        if self.last_ok is None:
            return None
        return (time.monotonic() if now is None else now) - self.last_ok


class Poller(Generic[T]):
    def __init__(
        self,
        name: str,
        fetch: Callable[[], Awaitable[T]],
        interval: float,
        *,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        group: FeedGroup | None = None,
        tasks: Tasks | None = None,
    ) -> None:
        """``tasks``: the owner the polling task runs in (a terminal's), else the loop."""
        self.name = name
        self._tasks = tasks
        self.group = group
        self._retry_after: float | None = None
        self._fetch = fetch
        self._interval = interval
        self._rng = rng or random.Random()
        self._clock = clock  # monotonic seconds: FeedStatus.last_ok and the latency
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._last_ok: float | None = None
        self._latency: float | None = None
        self._failures = 0
        self._error: ServiceError | None = None
        self.data: Topic[T] = Topic(f"{name}.data")
        self.status: Topic[FeedStatus] = Topic(f"{name}.status")
        if group is not None:
            group.add(self)  # type: ignore[arg-type]

    @property
    def interval(self) -> float:
        return self._interval

    @interval.setter
    def interval(self, seconds: float) -> None:
        if seconds <= 0:
            raise ValueError("a poll interval is positive")
        self._interval = seconds
        self._wake.set()

    def snapshot(self) -> FeedStatus:
        return FeedStatus(
            self.name, self._interval, self._last_ok, self._latency, self._failures, self._error
        )

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = spawn(self._tasks, self._run(), self.name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    @property
    def failing(self) -> bool:
        return self._failures > 0

    def reset_backoff(self) -> None:
        """Forget the back-off (and any Retry-After) and poll now."""
        self._retry_after = None
        self._wake.set()

    def refresh(self) -> None:
        """Poll as soon as the current poll (if any) is done."""
        self._wake.set()

    async def poll_once(self) -> T | None:
        """One poll: publish the data, or record the failure. Returns the data."""
        started = self._clock()
        try:
            value = await self._fetch()
        except ServiceError as exc:
            self._failures += 1
            self._error = exc
            self._retry_after = (
                exc.retry_after if isinstance(exc, RateLimited | ServerError) else None
            )
            log.info("%s poll failed (%d in a row): %s", self.name, self._failures, exc)
            if self.group is not None and isinstance(exc, LoginExpired | LoginThrottled):
                self.group.halt(exc)
            self.status.publish(self.snapshot())
            return None
        was_failing = self._failures > 0
        self._last_ok = self._clock()
        self._latency = self._last_ok - started
        self._failures = 0
        self._error = None
        self._retry_after = None
        if was_failing and self.group is not None:
            self.group.recovered(self)  # type: ignore[arg-type]
        self.data.publish(value)
        self.status.publish(self.snapshot())
        return value

    def next_delay(self, took: float) -> float:
        if self._failures == 0:
            return max(0.0, self._interval - took)
        ceiling = min(MAX_BACKOFF, self._interval * 2 ** min(self._failures, 16))
        beyond = self._failures - QUICK_FAILURES
        if beyond > 0:
            ceiling = min(LONG_BACKOFF, MAX_BACKOFF * 2 ** min(beyond, 16))
        delay = self._rng.uniform(ceiling / 2, ceiling)
        if self._retry_after is not None:
            delay = max(delay, min(MAX_RETRY_AFTER, self._retry_after))
        return delay

    async def _run(self) -> None:
        while True:
            if self.group is not None:
                await self.group.wait_resumed()
            self._wake.clear()
            started = self._clock()
            try:
                await self.poll_once()
            except Exception:  # a bug in a parser or subscriber must not kill the feed
                log.exception("%s poll crashed", self.name)
                self._failures += 1
            delay = self.next_delay(self._clock() - started)
            if delay > 0:
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel that
                # lands as the wait ends, and stop() would then wait forever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._wake.wait()
