"""Connection health from the feeds' polls: live, degraded, offline, or login expired.

The feeds share one connection, so their polls are read as one stream of hits and misses (a
miss: a poll that failed, which with the polls' short deadlines means within 1–2 s of a stall):

- login expired: a feed was refused with ``LoginExpired`` / ``LoginThrottled`` (the feeds halt;
  the trader logs in again);
- offline: two misses in a row across the feeds (no success in between);
- degraded: one miss, a feed whose last poll failed, or a feed whose last good data is older
  than 3 × its interval (a hanging request);
- connecting: no feed has delivered yet;
- live: every feed is fresh.

Hysteresis (no flapping): once degraded or offline, the health goes back to live only after two
successful polls in a row with no miss and no stale feed in between; staleness counts as a miss
for this, so a link that is slow just past the staleness bound stays degraded instead of
flipping. One success leaves offline for degraded at once. Re-evaluated on every poll result and
once a second, so staleness shows even while a request hangs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from app.api import LoginThrottled, ServiceError, Unauthorized
from app.services.events import Topic, cancel_and_wait
from app.services.poller import FeedStatus, Poller
from app.services.tasks import Tasks, spawn

STALE_FACTOR = 3.0
#: Failed polls of one feed in a row before it counts as failing: one bad answer (a number
#: out of range, a garbled body) between good ones changes nothing, so the state cannot flap.
BAD_READS = 2
OFFLINE_AFTER = 5  # misses in a row across the feeds (each feed's first is forgiven)
LIVE_AFTER = 2  # successes in a row, after a counted miss


class Health(StrEnum):
    CONNECTING = "connecting"
    LIVE = "live"
    DEGRADED = "degraded"
    OFFLINE = "offline"
    AUTH_EXPIRED = "auth expired"


def stale_reason(status: FeedStatus | None, health: Health, now: float) -> str | None:
    """Why a feed's data cannot be trusted now (None: it can): the connection is offline or
    the login expired, the feed's last poll failed, or its last good data is older than
    ``STALE_FACTOR`` intervals. A feed that never delivered and never failed is connecting,
    not stale. The one rule for the screens' stale marks and for the algos, which price no
    child and fire no trigger on a stale book."""
    if health in (Health.OFFLINE, Health.AUTH_EXPIRED):
        return (
            f"The connection is {'offline' if health == Health.OFFLINE else 'the login expired'}."
        )
    if status is None:
        return None
    if status.failures > 0:
        return f"The {status.name} feed is failing: {status.last_error}"
    if status.last_ok is not None and now - status.last_ok > STALE_FACTOR * status.interval:
        return f"No fresh {status.name} data."
    return None


@dataclass(frozen=True)
class HealthState:
    health: Health
    reason: str
    feeds: tuple[FeedStatus, ...]

    def feed(self, name: str) -> FeedStatus | None:
        return next((f for f in self.feeds if f.name == name), None)


@dataclass
class Streak:
    """Polls in a row across the feeds: misses since the last success, successes since the
    last miss (or stale data)."""

    misses: int = 0
    hits: int = LIVE_AFTER


def login_lost(error: ServiceError | None) -> str | None:
    """The words for a lost login, or None when ``error`` is something else."""
    if isinstance(error, LoginThrottled):
        return f"login expired: {error}"
    if isinstance(error, Unauthorized):
        return "login expired: log in again"
    return None


def assess(feeds: list[FeedStatus], now: float, streak: Streak | None = None) -> HealthState:
    """The health of ``feeds`` at ``now``; ``streak`` (the monitor's) adds the hysteresis."""
    statuses = tuple(feeds)
    streak = streak or Streak(misses=0)
    for feed in feeds:
        words = login_lost(feed.last_error)
        if words is not None:
            return HealthState(Health.AUTH_EXPIRED, words, statuses)
    failing = [f for f in feeds if f.failures >= BAD_READS]
    if streak.misses >= OFFLINE_AFTER or (feeds and len(failing) == len(feeds)):
        # The first feed's error (a stable reason: not whichever feed crossed the line last)
        error = next((f.last_error for f in feeds if f.failures > 0), None)
        return HealthState(Health.OFFLINE, f"requests failing: {error}", statuses)
    if failing:
        # The first failing feed names it (not the list, which grows feed by feed: the
        # reason would change, and the state be announced again, with each one).
        first = failing[0]
        return HealthState(Health.DEGRADED, f"{first.name} failing: {first.last_error}", statuses)
    if all(f.last_ok is None for f in feeds):
        return HealthState(Health.CONNECTING, "waiting for the first data", statuses)
    stale = [
        f for f in feeds if f.last_ok is not None and now - f.last_ok > STALE_FACTOR * f.interval
    ]
    if stale:
        streak.hits = 0
        return HealthState(
            Health.DEGRADED,
            f"{stale[0].name}: no fresh data for over {STALE_FACTOR:g} poll intervals",
            statuses,
        )
    if streak.hits < LIVE_AFTER:
        return HealthState(Health.DEGRADED, "recovering: waiting for fresh data", statuses)
    return HealthState(Health.LIVE, "all feeds fresh", statuses)


class HealthMonitor:
    """Publishes a HealthState whenever the health or its reason changes."""

    def __init__(
        self,
        pollers: list[Poller[object]],
        tick: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        tasks: Tasks | None = None,
    ) -> None:
        self._pollers = pollers
        self._tasks = tasks
        self._tick = tick
        self._clock = clock  # the pollers' clock: staleness compares it with their last_ok
        self._task: asyncio.Task[None] | None = None
        self._streak = Streak()
        self.changes: Topic[HealthState] = Topic("health")
        self.current = assess([p.snapshot() for p in pollers], clock(), self._streak)
        for poller in pollers:
            poller.status.subscribe(self._on_status)

    def _on_status(self, status: FeedStatus) -> None:
        if status.failures > 0:
            self._streak.misses += 1
            if status.failures >= BAD_READS:  # a lone bad read does not restart the recovery
                self._streak.hits = 0
        else:
            self._streak.misses = 0
            self._streak.hits += 1
        self.evaluate()

    def evaluate(self) -> HealthState:
        state = assess([p.snapshot() for p in self._pollers], self._clock(), self._streak)
        changed = (state.health, state.reason) != (self.current.health, self.current.reason)
        self.current = state
        if changed:
            self.changes.publish(state)
        return state

    def start(self) -> None:
        if self._task is None:
            self._task = spawn(self._tasks, self._run(), "health")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._tick)
            self.evaluate()
