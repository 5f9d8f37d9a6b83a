"""Connection health from the feeds' statuses: live, degraded, offline, or auth expired.

- auth expired: a feed's last poll was refused with 401 even after the client's re-login;
- offline: every feed's last poll failed (requests failing; the pollers back off and retry);
- degraded: some feed failed, or its last good data is older than 3 × its interval;
- connecting: no feed has delivered yet;
- live: every feed is fresh.
Re-evaluated on every poll result and once a second, so staleness shows even while a request
hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from app.api import Unauthorized
from app.services.events import Topic
from app.services.poller import FeedStatus, Poller

STALE_FACTOR = 3.0


class Health(StrEnum):
    CONNECTING = "connecting"
    LIVE = "live"
    DEGRADED = "degraded"
    OFFLINE = "offline"
    AUTH_EXPIRED = "auth expired"


@dataclass(frozen=True)
class HealthState:
    health: Health
    reason: str
    feeds: tuple[FeedStatus, ...]

    def feed(self, name: str) -> FeedStatus | None:
        return next((f for f in self.feeds if f.name == name), None)


def assess(feeds: list[FeedStatus], now: float) -> HealthState:
    statuses = tuple(feeds)
    if any(isinstance(f.last_error, Unauthorized) for f in feeds):
        return HealthState(Health.AUTH_EXPIRED, "the service no longer accepts the login", statuses)
    failing = [f for f in feeds if f.failures > 0]
    if feeds and len(failing) == len(feeds):
        return HealthState(Health.OFFLINE, f"requests failing: {failing[0].last_error}", statuses)
    if failing:
        names = ", ".join(f.name for f in failing)
        return HealthState(Health.DEGRADED, f"{names} failing: {failing[0].last_error}", statuses)
    if all(f.last_ok is None for f in feeds):
        return HealthState(Health.CONNECTING, "waiting for the first data", statuses)
    stale = [
        f for f in feeds if f.last_ok is not None and now - f.last_ok > STALE_FACTOR * f.interval
    ]
    if stale:
        names = ", ".join(f.name for f in stale)
        return HealthState(
            Health.DEGRADED,
            f"{names}: no fresh data for over {STALE_FACTOR:g} poll intervals",
            statuses,
        )
    return HealthState(Health.LIVE, "all feeds fresh", statuses)


class HealthMonitor:
    """Publishes a HealthState whenever the health or its reason changes."""

    def __init__(
        self,
        pollers: list[Poller[object]],
        tick: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pollers = pollers
        self._tick = tick
        self._clock = clock  # the pollers' clock: staleness compares it with their last_ok
        self._task: asyncio.Task[None] | None = None
        self.changes: Topic[HealthState] = Topic("health")
        self.current = assess([p.snapshot() for p in pollers], clock())
        for poller in pollers:
            poller.status.subscribe(self._on_status)

    def _on_status(self, _: FeedStatus) -> None:
        self.evaluate()

    def evaluate(self) -> HealthState:
        state = assess([p.snapshot() for p in self._pollers], self._clock())
        changed = (state.health, state.reason) != (self.current.health, self.current.reason)
        self.current = state
        if changed:
            self.changes.publish(state)
        return state

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="health")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._tick)
            self.evaluate()
