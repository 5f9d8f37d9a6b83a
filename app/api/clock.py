"""The server's clock, kept on the monotonic clock (design.md §7).

Server time is ``monotonic() + base``: a local wall clock that is wrong, or jumps, does not move
it. ``base`` (server epoch seconds minus monotonic seconds) is re-estimated from every exchange:

- a service-time answer read between ``sent`` and ``received`` (monotonic) says the server's
  clock read ``t`` at some moment in between, so ``base`` lies in ``[t - received, t - sent]``
  — an interval as wide as the round trip;
- a ``Date`` header has one-second resolution and servers cache it (uvicorn refreshes it about
  once a second), so the server's clock read somewhere in ``[date, date + DATE_SLACK)`` during
  the exchange: ``base`` lies in ``[date - received, date + DATE_SLACK - sent]``.

The estimate is the midpoint of the intersection of the recent intervals, newest first: narrow
(short round trip) samples dominate by construction, and when the server's clock moves the
intervals stop overlapping — the older ones are dropped, and the clock asks to be re-measured.
A ``Date`` header that misses a measured service time by no more than ``DATE_SLACK`` is a late
header, not a moved clock: it is left out (and a re-measure asked for), so the offset does not
swing with the header's second.

The local wall clock matters only for ``offset`` (server minus local wall, e.g. to move a
journal's local stamps to server time). A wall-clock jump — ``wall - monotonic`` changing by
more than ``jump_threshold`` between two readings — is detected and makes ``due()`` true, so the
client re-measures (``ServiceClient.refresh_clock``) before a countdown or reconcile uses it.
Both clocks are injectable so tests can jump the wall clock without waiting.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

log = logging.getLogger("tradeterm.api")

#: How far after the ``Date`` header's second the server's clock may read (1 s resolution plus
#: up to about a second for which servers such as uvicorn cache the header).
DATE_SLACK = 2.0
#: A change of ``wall - monotonic`` above this (seconds) between two readings is a jump.
JUMP_THRESHOLD = 1.0
#: Service-time re-measure interval (seconds): the low-rate refresh beside the Date headers.
REMEASURE_SECONDS = 300.0
#: Samples older than this (seconds) no longer constrain the estimate.
SAMPLE_AGE = 600.0
MAX_SAMPLES = 64
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def system_now() -> datetime:
    return datetime.now(UTC)


def epoch_seconds(moment: datetime) -> float:
    return (moment - EPOCH).total_seconds()


@dataclass(frozen=True)
class Sample:
    """Bounds on ``base`` (server epoch seconds minus monotonic) from one exchange."""

    low: float
    high: float
    at: float  # monotonic, when it was read
    measured: bool = True  # a service-time answer (False: a Date header)


@dataclass
class ServerClock:
    now: Callable[[], datetime] = system_now  # the local wall clock
    monotonic: Callable[[], float] = time.monotonic
    jump_threshold: float = JUMP_THRESHOLD
    remeasure_every: float = REMEASURE_SECONDS
    round_trip: float | None = None  # seconds, of the last service-time sample
    jumps: int = 0  # wall-clock jumps seen
    measurements: int = 0  # service-time answers observed
    _samples: deque[Sample] = field(default_factory=lambda: deque(maxlen=MAX_SAMPLES))
    _round_trips: deque[float] = field(default_factory=lambda: deque(maxlen=50))
    _base: float | None = None
    _wall_minus_mono: float | None = None
    _measured_at: float | None = None  # monotonic, of the last service-time sample
    _stale = True  # a jump or a moved server clock: re-measure before trusting ``offset``

    # -- samples ------------------------------------------------------------------------------

    def observe_time(self, server: datetime, sent: float, received: float) -> None:
        """A service-time answer: ``server`` read between monotonic ``sent`` and ``received``."""
        t = epoch_seconds(server)
        self.measurements += 1
        self.round_trip = received - sent
        self._round_trips.append(received - sent)
        self._add(Sample(t - received, t - sent, received))
        self._measured_at = received
        self.check_jump()
        self._stale = False

    def observe_date(self, date: datetime, sent: float, received: float) -> None:
        """A ``Date`` header of an answer to a request sent at ``sent``, read at ``received``."""
        t = epoch_seconds(date)
        self._round_trips.append(received - sent)
        self._add(Sample(t - received, t + DATE_SLACK - sent, received, measured=False))
        self.check_jump()

    def observe_round_trip(self, round_trip: float) -> None:
        """A call's duration without a server time: only feeds the typical round trip."""
        self._round_trips.append(round_trip)

    def _add(self, sample: Sample) -> None:
        low, high = sample.low, sample.high
        kept = 0  # older samples that agree with this one
        gap = 0.0
        for older in reversed(self._samples):
            if sample.at - older.at > SAMPLE_AGE:
                break
            new_low, new_high = max(low, older.low), min(high, older.high)
            if new_low > new_high:
                gap = new_low - new_high
                break
            low, high = new_low, new_high
            kept += 1
        if gap and not sample.measured and gap <= DATE_SLACK and self._measured_recently(sample):
            # A Date header a little outside a measured service time says more about the
            # header (cached, or served late on a busy server) than about the server's clock:
            # dropping the measured sample for it swung the offset by up to a second. It is
            # left out, and the service time asked again to settle it.
            self._stale = True
            return
        if gap:
            # The server's clock moved: what it said before no longer holds.
            log.info("server clock moved by about %.2f s", gap)
            self._stale = True
        self._samples.append(sample)
        while len(self._samples) > kept + 1:
            self._samples.popleft()
        self._base = (low + high) / 2

    def _measured_recently(self, sample: Sample) -> bool:
        return any(s.measured and sample.at - s.at <= SAMPLE_AGE for s in self._samples)

    # -- readings -----------------------------------------------------------------------------

    def check_jump(self) -> bool:
        """Read ``wall - monotonic``; True (and re-measure due) when it changed by more than
        the threshold since the last reading: the wall clock was set, or the machine slept."""
        reading = epoch_seconds(self.now()) - self.monotonic()
        last, self._wall_minus_mono = self._wall_minus_mono, reading
        if last is not None and abs(reading - last) > self.jump_threshold:
            self.jumps += 1
            self._stale = True
            log.warning("local wall clock jumped by %+.1f s; re-measuring", reading - last)
            return True
        return False

    def due(self) -> bool:
        """Whether a service-time re-measure is due: never measured, a wall-clock jump or a
        moved server clock since, or ``remeasure_every`` elapsed."""
        self.check_jump()
        if self._stale or self._base is None or self._measured_at is None:
            return True
        return self.monotonic() - self._measured_at >= self.remeasure_every

    def server_epoch(self, monotonic: float | None = None) -> float:
        """Server epoch seconds at ``monotonic`` (now by default); the local wall clock before
        any sample."""
        mono = self.monotonic() if monotonic is None else monotonic
        if self._base is None:
            return epoch_seconds(self.now()) + (mono - self.monotonic())
        return mono + self._base

    def server_now(self) -> datetime:
        return EPOCH + timedelta(seconds=self.server_epoch())

    @property
    def offset(self) -> timedelta:
        """Server clock minus the local wall clock, now (a wall-clock jump shows at once)."""
        self.check_jump()
        if self._base is None:
            return timedelta(0)
        return timedelta(seconds=self.monotonic() + self._base - epoch_seconds(self.now()))

    @property
    def uncertainty(self) -> float | None:
        """Half the width of the current estimate's interval (seconds), None before any."""
        if self._base is None or not self._samples:
            return None
        newest = self._samples[-1]
        low, high = newest.low, newest.high
        for sample in self._samples:
            low, high = max(low, sample.low), min(high, sample.high)
        return max(0.0, (high - low) / 2)

    @property
    def typical_round_trip(self) -> float:
        """Median round trip of recent calls (0 before any)."""
        if not self._round_trips:
            return 0.0
        ordered = sorted(self._round_trips)
        return ordered[len(ordered) // 2]
