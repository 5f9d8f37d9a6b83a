"""P&L over time (issue 17): the portfolio's value and the realised P&L of a window (the last
day or week), sampled on a grid, for the positions dock's small chart.

These are plot coordinates (floats), never money: the exact figures are the positions table's.

- **Value** at ``t`` = Σ over assets of holding(t) × unit value(t). The holding is the ledger's
  sum of the asset's entries up to ``t`` (free + locked, as the table's quantity), so deposits
  and withdrawals move the value line as they happened. The unit value is 1 for the valuation
  currency; for another asset, the chart's stored mids (``app.services.mid_history``: one sample
  a second of each pair the chart showed, the latest 24 h) of ``ASSET/CUR`` (the mid) or
  ``CUR/ASSET`` (1 / mid): the last sample at or before ``t``. Where the store has no sample at
  or before ``t`` (a pair never charted, a week older than the store), the asset's current mark
  stands in (a flat line: its value moves with its holding only); an asset with neither is left
  out.
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
    value = np.zeros(times.shape)
    empty = UnitHistory(np.empty(0), np.empty(0))
    for asset, items in by_asset.items():
        held = holding_at(items, times)
        if asset == currency:
            value += held
            continue
        unit = unit_at(units.get(asset, empty), marks.get(asset), times)
        if unit is not None:
            value += np.nan_to_num(held * unit)
    if by_asset:  # nothing was held before the first entry: no line there (NaN)
        first = min(entry.event_time.timestamp() for items in by_asset.values() for entry in items)
        value[times < first] = np.nan
    start = times[0] if times.size else 0.0
    moments = ((r.time.timestamp(), float(r.amount)) for r in realisations)
    realised = running_sum((m for m in moments if m[0] >= start), times)
    return PnlSeries(times, value, realised)
