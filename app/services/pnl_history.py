"""P&L over time: the portfolio's value and the realised P&L of a window (the last
day or week), sampled on a grid, for the positions dock's small chart.

These are plot coordinates (floats), never money: the exact figures are the positions table's.

- **Value** at ``t`` = Σ over assets of holding(t) × unit value(t). The holding is the ledger's
  sum of the asset's entries up to ``t`` (free + locked, as the table's quantity), so deposits
  and withdrawals move the value line as they happened. The unit value is 1 for the valuation
  currency; for another asset, the chart's stored mids (``app.services.mid_history``: one sample
  a second of each pair the chart showed, the latest 24 h) of ``ASSET/CUR`` (the mid) or
  ``CUR/ASSET`` (1 / mid): the last sample at or before ``t``. Where the store has no sample at
  or before ``t`` (a pair never charted, a week older than the store), the asset's current mark
  stands in (its value moves with its holding only); an asset with neither is left out.
- **No made-up history**: while an asset other than the currency is held, the value line starts
  at the first stored sample of any held asset — in practice when the terminal first ran and
  charted it. Before that, every asset would stand at today's mark carried back: a flat line
  of a past nobody recorded (a day of it on the first run). There the value is NaN (no line);
  the point at ``now`` stays (today's marks are today's value), and a point on the minute after
  the first sample joins the grid, so a young record is a line from the start, not one point.
  An account holding only the valuation currency needs no prices: its line is the ledger's,
  from the first entry. (The realised line is the ledger's own facts, so it keeps the window:
  "nothing realised" before the terminal ran is true, not made up.)
- **The window** ends at the next step boundary after now and starts a day or a week before,
  or at the ledger's first entry when that is later (an account younger than the window);
  before the first entry there is no value (NaN: no line there). The grid's points after now
  give way to one point at now, so the lines end at the present.
- **Realised P&L** at ``t`` = the sum of the book's realisations (under the cost method in
  force, priced assets only) from the window's start to ``t``: zero at the start.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from app.domain.positions import Realisation
from app.domain.records import LedgerEntry

FloatArray = npt.NDArray[np.float64]
#: The windows the chart offers: label -> seconds.
WINDOWS: dict[str, int] = {"Day": 86_400, "Week": 7 * 86_400}
#: Points per line: one every 5 minutes of a day, every 35 of a week.
POINTS = 289

#: One pair's stored samples, shape ``(3, n)``: time, bid, ask (``MidHistory.read``).
MidReader = Callable[[str], FloatArray]


@dataclass(frozen=True)
class UnitHistory:
    """An asset's unit value in the valuation currency at stored sample times."""

    times: FloatArray
    values: FloatArray


@dataclass(frozen=True)
class PnlSeries:
    """The chart's two lines on one time grid (epoch seconds)."""

    times: FloatArray
    value: FloatArray
    realised: FloatArray

    def same(self, other: PnlSeries | None) -> bool:
        """Whether ``other`` draws exactly the same lines (then nothing is redrawn)."""
        return other is not None and all(
            np.array_equal(a, b, equal_nan=True)
            for a, b in (
                (self.times, other.times),
                (self.value, other.value),
                (self.realised, other.realised),
            )
        )


def unit_history(asset: str, currency: str, pairs: Iterable[str], read: MidReader) -> UnitHistory:
    """``asset``'s stored unit values from the direct pair's mids, else the inverse's."""
    known = set(pairs)
    for pair, inverse in ((f"{asset}/{currency}", False), (f"{currency}/{asset}", True)):
        if pair not in known:
            continue
        data = read(pair)
        if data.shape[1] == 0:
            continue
        mids = (data[1] + data[2]) / 2
        with np.errstate(divide="ignore"):
            values = 1 / mids if inverse else mids
        good = np.isfinite(values) & (values > 0)
        return UnitHistory(data[0][good], values[good])
    return UnitHistory(np.empty(0), np.empty(0))


def grid(
    now: float, seconds: int, points: int = POINTS, *, first: float | None = None
) -> FloatArray:
    """``points`` times ending at the first step boundary at or after ``now`` and reaching
    ``seconds`` back — or only back to ``first`` (the ledger's first entry: before it the
    account held nothing) when that is later: the same grid for a whole step, so an unchanged
    ledger and store give the same lines (and the chart is not redrawn)."""
    step = seconds / (points - 1)
    end = math.ceil(now / step) * step
    start = end - seconds
    if first is not None and first > start:
        start = min(math.floor(first / step) * step, end - step)
    return np.linspace(start, end, points)


def running_sum(moments: Iterable[tuple[float, float]], times: FloatArray) -> FloatArray:
    """The sum of the amounts of ``moments`` (time, amount; any order) up to each of ``times``."""
    ordered = sorted(moments)
    if not ordered:
        return np.zeros(times.shape)
    at = np.array([m[0] for m in ordered])
    sums = np.cumsum([m[1] for m in ordered])
    index = np.searchsorted(at, times, side="right")
    return np.where(index > 0, sums[np.maximum(index - 1, 0)], 0.0)


def holding_at(entries: Iterable[LedgerEntry], times: FloatArray) -> FloatArray:
    """The sum of ``entries`` (one asset's) up to each of ``times``."""
    return running_sum(((e.event_time.timestamp(), float(e.amount)) for e in entries), times)


def unit_at(history: UnitHistory, mark: Decimal | None, times: FloatArray) -> FloatArray | None:
    """The unit value at each of ``times``: the last stored sample, else ``mark``."""
    fallback = np.nan if mark is None else float(mark)
    if history.times.size == 0:
        return None if mark is None else np.full(times.shape, fallback)
    index = np.searchsorted(history.times, times, side="right")
    found = history.values[np.maximum(index - 1, 0)]
    values = np.where(index > 0, found, fallback)
    return values if np.isfinite(values).any() else None


def pnl_series(
    entries: Iterable[LedgerEntry],
    realisations: Iterable[Realisation],
    currency: str,
    times: FloatArray,
    units: Mapping[str, UnitHistory],
    marks: Mapping[str, Decimal | None],
    *,
    now: float | None = None,
) -> PnlSeries:
    """The value and realised P&L lines at ``times`` (see the module's rules); with ``now``,
    the grid's points after it (its last step reaches into the future) give way to one point
    at ``now``: the lines end at the present."""
    if now is not None:
        times = np.append(times[times < now], now)
    by_asset: dict[str, list[LedgerEntry]] = {}
    for entry in entries:
        by_asset.setdefault(entry.asset, []).append(entry)
    value, first_sample = _value(by_asset, currency, times, units, marks)
    if math.isfinite(first_sample) and times.size:
        # a point where the recorded line starts (on the minute: a series that changes at
        # most once a minute), so it is drawn from there, not from the next grid point
        begin = math.ceil(first_sample / 60) * 60
        if times[0] < begin < times[-1] and begin not in times:
            times = np.insert(times, int(np.searchsorted(times, begin)), begin)
            value, first_sample = _value(by_asset, currency, times, units, marks)
    if by_asset:  # nothing was held before the first entry: no line there (NaN)
        first = min(entry.event_time.timestamp() for items in by_asset.values() for entry in items)
        value[times < first] = np.nan
    if first_sample > -math.inf:  # no line before the first stored price (module rule)
        unrecorded = times < first_sample
        if now is not None and times.size:
            unrecorded[-1] = False  # the present, at today's marks
        value[unrecorded] = np.nan
    start = times[0] if times.size else 0.0
    moments = ((r.time.timestamp(), float(r.amount)) for r in realisations)
    realised = running_sum((m for m in moments if m[0] >= start), times)
    return PnlSeries(times, value, realised)


def _value(
    by_asset: Mapping[str, list[LedgerEntry]],
    currency: str,
    times: FloatArray,
    units: Mapping[str, UnitHistory],
    marks: Mapping[str, Decimal | None],
) -> tuple[FloatArray, float]:
    """The value at ``times`` (the holdings at their unit values), and from when it is
    recorded: the earliest stored sample of a held asset other than the currency (infinity
    when such an asset is held but none is stored; minus infinity when none is held)."""
    value = np.zeros(times.shape)
    empty = UnitHistory(np.empty(0), np.empty(0))
    first_sample = -math.inf
    for asset, items in by_asset.items():
        held = holding_at(items, times)
        if asset == currency:
            value += held
            continue
        history = units.get(asset, empty)
        unit = unit_at(history, marks.get(asset), times)
        if unit is None:
            continue
        value += np.nan_to_num(held * unit)
        if np.any(held != 0):
            first = float(history.times[0]) if history.times.size else math.inf
            first_sample = first if first_sample == -math.inf else min(first_sample, first)
    return value, first_sample
