"""P&L over time (app.services.pnl_history) from ledger entries, the book's realisations and a
real chart-history store on disk: the value line steps with the holdings and the stored mids
(the direct pair's mid, the inverse's reciprocal, the current mark before the first sample),
the realised line counts from the window's start, and the grid stays put within a step."""

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

    # before any sample: BTC at its mark now; EUR has no mark, so it is left out
    assert value_at(DAY) == 1000 + 300
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
