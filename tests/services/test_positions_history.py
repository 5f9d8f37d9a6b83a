"""P&L over time (app.services.pnl_history) from ledger entries, the book's realisations and a
real chart-history store on disk: the value line steps with the holdings and the stored mids
(the direct pair's mid, the inverse's reciprocal, the current mark before an asset's first
sample), no value line before the first stored sample of any held asset, the realised line
counts from the window's start, and the grid stays put within a step."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import numpy as np

from app.domain.positions import Realisation
from app.domain.records import LedgerEntry
from app.services.mid_history import MidHistory
from app.services.pnl_history import grid, pnl_series, unit_history

D = Decimal
END = 1_795_000_200.0  # a multiple of the day grid's 300 s step
DAY = 86_400


def at(seconds_before: float) -> datetime:
    return datetime.fromtimestamp(END - seconds_before, tz=UTC)


def entry(ordering: int, asset: str, amount: str, kind: str, before: float) -> LedgerEntry:
    sub = "" if kind != "trade" else ("source" if amount.startswith("-") else "destination")
    return LedgerEntry(ordering, "a", f"tx-{ordering}", asset, D(amount), kind, sub, at(before))


def test_value_and_realised_lines_from_the_ledger_and_stored_mids(tmp_path: Path) -> None:
    store = MidHistory(tmp_path / "chart-history")
    store.record("BTC/USD", END - 7200, 99.0, 101.0)  # mid 100
    store.record("BTC/USD", END - 1800, 199.0, 201.0)  # mid 200
    store.record("USD/EUR", END - 9000, 0.49, 0.51)  # 1 EUR = 2 USD
    store.close()  # written to disk: read back as the dock reads it
    read = MidHistory(tmp_path / "chart-history").read

    entries = [
        entry(1, "USD", "1000", "initialBalances", 2 * DAY),
        entry(1, "BTC", "1", "initialBalances", 2 * DAY),
        entry(2, "EUR", "10", "deposit", 2 * DAY),
        entry(3, "BTC", "-0.5", "trade", 3600),
        entry(3, "USD", "60", "trade", 3600),
    ]
    pairs = ["BTC/USD", "USD/EUR"]
    units = {a: unit_history(a, "USD", pairs, read) for a in ("BTC", "EUR")}
    times = grid(END - 1, DAY)
    assert times[-1] == END and times[-1] - times[0] == DAY
    realised = [Realisation(at(2 * DAY), D(7)), Realisation(at(3600), D(25))]
    series = pnl_series(entries, realised, "USD", times, units, {"BTC": D(300), "EUR": None})

    def value_at(before: float) -> float:
        return float(series.value[np.searchsorted(times, END - before)])

    # before the first stored sample (USD/EUR's, 9,000 s back): no line, not today's marks
    # carried back over a day nobody recorded
    assert np.isnan(value_at(DAY)) and np.isnan(value_at(9300))
    assert np.isnan(series.value[: np.searchsorted(times, END - 9000)]).all()
    # from it on: EUR at its stored rate, BTC at its mark until its own first sample
    assert value_at(8700) == 1000 + 300 + 20
    assert value_at(5400) == 1000 + 100 + 20
    assert value_at(3000) == 1060 + 0.5 * 100 + 20  # after the trade
    assert value_at(0) == 1060 + 0.5 * 200 + 20
    assert series.realised[0] == 0  # what was realised before the window is not in it
    assert series.realised[np.searchsorted(times, END - 3000)] == 25
    assert series.realised[-1] == 25

    again = pnl_series(entries, realised, "USD", grid(END - 200, DAY), units, {"BTC": D(300)})
    assert again.same(series)  # the same step: nothing to redraw
    moved = pnl_series(entries, realised, "USD", grid(END + 1, DAY), units, {"BTC": D(300)})
    assert not moved.same(series)
    # the grid's points after now give way to one at now (the lines end at the present)
    cut = pnl_series(entries, realised, "USD", times, units, {"BTC": D(300)}, now=END - 400)
    assert cut.times.size == times.size - 1 and cut.times[-1] == END - 400
    assert list(cut.times[:-1]) == list(times[times < END - 400])
    assert cut.value[-1] == value_at(0) and cut.realised[-1] == 25


def test_a_young_account_is_charted_from_its_first_entry() -> None:
    step = DAY / 288
    times = grid(END - 1, DAY, first=END - 1000)
    assert times[-1] == END and times[0] == END - 1200  # the step boundary before the entry
    assert times.size == 289
    assert grid(END - 1, DAY, first=END - 2 * DAY)[0] == END - DAY  # older than the window
    assert grid(END - 1, DAY, first=END + 50)[0] == END - step  # never an empty window


def test_no_value_line_before_the_first_stored_price(tmp_path: Path) -> None:
    """A first run: nothing stored yet, so all there is is the present at today's marks (the
    chart drew a flat day of it before); an account of the valuation currency alone needs no
    prices and is charted from its first entry."""
    entries = [
        entry(1, "USD", "1000", "initialBalances", 2 * DAY),
        entry(1, "BTC", "2", "initialBalances", 2 * DAY),
    ]
    none = MidHistory(tmp_path / "empty").read
    units = {"BTC": unit_history("BTC", "USD", ["BTC/USD"], none)}
    times = grid(END - 1, DAY)
    series = pnl_series(entries, [], "USD", times, units, {"BTC": D(300)}, now=END - 10)
    assert np.isnan(series.value[:-1]).all()
    assert series.value[-1] == 1000 + 2 * 300  # the present
    assert (series.realised == 0).all()  # the ledger's own: nothing realised

    cash = pnl_series(entries[:1], [], "USD", times, {}, {}, now=END - 10)
    assert not np.isnan(cash.value).any() and (cash.value == 1000).all()

    # a first sample 700 s back, between two grid points: the line starts on the minute
    # after it (a point of its own), not at the next grid point 600 s back
    store = MidHistory(tmp_path / "some")
    store.record("BTC/USD", END - 700, 499.0, 501.0)
    store.close()
    units = {"BTC": unit_history("BTC", "USD", ["BTC/USD"], MidHistory(tmp_path / "some").read)}
    later = pnl_series(entries, [], "USD", times, units, {"BTC": D(300)}, now=END - 10)
    drawn = later.times[~np.isnan(later.value)]
    assert drawn[0] == END - 660 and later.times.size == series.times.size + 1
    assert (later.value[~np.isnan(later.value)] == 1000 + 2 * 500).all()
    again = pnl_series(entries, [], "USD", times, units, {"BTC": D(300)}, now=END - 10)
    assert again.same(later)  # the same store: the same lines, nothing redrawn
