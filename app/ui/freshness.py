"""Is the data on screen still true? One rule and one source, on the frame clock.

The rule is the health monitor's (``app.services.health.STALE_FACTOR``): a feed's data is stale
when the connection is offline or the login expired, when its last poll failed, or when its
last good data is older than ``STALE_FACTOR`` poll intervals. ``assess_feed`` applies it to one
feed; the watchlist applies the same factor to each row's age.

``FeedFreshness`` tells a panel when one feed turns stale or fresh (every panel whose data is
stale says so, offline included), from the ``health`` and ``feedStatus`` topics. Why the frame
clock and not a timer per panel: an unanswered poll sends no status, so the one change nobody
announces is "the last good data just got too old"; that moment is known
in advance (last success + ``STALE_FACTOR`` intervals), so a frame is asked for exactly then
instead of waking every panel once a second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from PySide6.QtCore import QObject, Signal

from app.services.health import STALE_FACTOR, Health, HealthState, stale_reason
from app.services.poller import FeedStatus
from app.ui.frame_clock import FrameClock, shared_frame_clock

T_co = TypeVar("T_co", covariant=True)


class Connectable(Protocol[T_co]):
    """A topic a slot can be connected to (the bridge's ``QtTopic``)."""

    def connect(self, slot: Callable[[T_co], Any]) -> None: ...


class FreshnessInputs(Protocol):
    """What a ``FeedFreshness`` reads: the health now and the two topics that change it."""

    @property
    def health_now(self) -> HealthState: ...

    @property
    def health(self) -> Connectable[HealthState]: ...

    @property
    def feedStatus(self) -> Connectable[FeedStatus]: ...


@dataclass(frozen=True)
class Freshness:
    """Whether one feed's data can be trusted now. ``since``: local wall-clock time of its last
    good data (None before any); ``reason`` in words, for a tooltip."""

    stale: bool
    since: datetime | None = None
    reason: str = ""

    def mark(self) -> str:
        """What a stale panel says next to its data: "stale since 14:03:07" ("" when fresh)."""
        if not self.stale:
            return ""
        if self.since is None:
            return "no data from the service"
        return f"stale since {self.since:%H:%M:%S}"


FRESH = Freshness(stale=False)


def stale_after(interval: float) -> float:
    """Seconds after its last good data that a feed polled every ``interval`` s is stale."""
    return STALE_FACTOR * interval


def assess_feed(status: FeedStatus | None, health: Health, now: float) -> Freshness:
    """The feed's freshness by ``stale_reason`` (the services' one rule), with since when its
    data is as old as it is."""
    since = None
    if status is not None and status.last_ok is not None:
        since = datetime.now() - timedelta(seconds=now - status.last_ok)
    reason = stale_reason(status, health, now)
    return FRESH if reason is None else Freshness(True, since, reason)


class FeedFreshness(QObject):
    """One feed's ``Freshness``, from the ``health`` and ``feedStatus`` topics and a frame at
    the moment its last good data gets too old; ``changed`` fires when it turns stale or fresh
    (with the value)."""

    changed = Signal(object)  # Freshness

    def __init__(
        self,
        inputs: FreshnessInputs,
        feed: str,
        owner: QObject,
        *,
        frames: FrameClock | None = None,
    ) -> None:
        super().__init__(owner)
        self._feed = feed
        self._frames = frames if frames is not None else shared_frame_clock()
        self._health = inputs.health_now.health
        self._status = inputs.health_now.feed(feed)
        self.current = self._assess()
        #: The time (frame clock) a frame was last asked for to re-check at.
        self._deadline: float | None = None
        inputs.health.connect(self._on_health)
        inputs.feedStatus.connect(self._on_status)
        self._frames.listen(self._on_frame)
        self._ask_for_deadline()

    @property
    def stale(self) -> bool:
        return self.current.stale

    def _on_health(self, state: HealthState) -> None:
        self._health = state.health
        self._status = state.feed(self._feed) or self._status
        self._update()

    def _on_status(self, status: FeedStatus) -> None:
        if status.name == self._feed:
            self._status = status
            self._update()

    def _on_frame(self, now: float) -> None:
        """The deadline's frame (other views' frames pass by with one comparison)."""
        if self._deadline is not None and now >= self._deadline:
            self._update()

    def _assess(self) -> Freshness:
        return assess_feed(self._status, self._health, self._frames.now())

    def _ask_for_deadline(self) -> None:
        """A frame just after the last good data gets too old, asked for once per deadline
        (none while stale or before any data: then only news can change it)."""
        status = self._status
        if self.current.stale or status is None or status.last_ok is None:
            return
        deadline = status.last_ok + stale_after(status.interval)
        if deadline == self._deadline:
            return
        self._deadline = deadline
        self._frames.request(max(0.0, deadline - self._frames.now()) + 0.001)

    def _update(self) -> None:
        now = self._assess()
        if now.stale != self.current.stale:
            self.current = now
            self.changed.emit(now)
        self._ask_for_deadline()
