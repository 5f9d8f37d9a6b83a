"""Server clock offset and round-trip time, for quote countdowns.

``ServerClock`` keeps the sample with the smallest round trip: its midpoint is the best guess of
when the server read its clock. ``now`` is injectable so tests can skew the local clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


def system_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class ServerClock:
    now: Callable[[], datetime] = system_now
    monotonic: Callable[[], float] = time.monotonic
    offset: timedelta = timedelta(0)  # server minus local
    round_trip: float | None = None  # seconds, of the sample kept
    _samples: list[float] = field(default_factory=list)

    def observe(
        self, sent_local: datetime, received_local: datetime, server: datetime, round_trip: float
    ) -> None:
        """One exchange: local time before sending and after receiving, and the server's time.
        Keeps the sample with the smallest round trip."""
        self._samples = [*self._samples[-49:], round_trip]
        if self.round_trip is not None and round_trip > self.round_trip * 1.5 + 0.002:
            return
        midpoint = sent_local + (received_local - sent_local) / 2
        self.offset = server - midpoint
        self.round_trip = round_trip

    def observe_round_trip(self, round_trip: float) -> None:
        """A call's duration without a server time: only feeds the typical round trip."""
        self._samples = [*self._samples[-49:], round_trip]

    @property
    def typical_round_trip(self) -> float:
        """Median round trip of recent calls (0 before any)."""
        if not self._samples:
            return 0.0
        ordered = sorted(self._samples)
        return ordered[len(ordered) // 2]

    def server_now(self) -> datetime:
        return self.now() + self.offset
