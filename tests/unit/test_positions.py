"""The position book (app.domain.positions): hand-computed examples under both cost methods,
the valuation rules for trades, crosses, deposits, withdrawals and initial balances, and
property tests of its identities."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.money import divide
from app.domain.positions import (
    BOOK_CONTEXT,
    STEP_EVENTS,
    CostMethod,
    Flow,
    FlowEvent,
    MarkKey,
    PositionBook,
    TradeEvent,
    book_steps,
    build_book,
    ledger_events,
    marks_needed,
)
from app.domain.records import LedgerEntry

D = Decimal
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
AVERAGE, FIFO = CostMethod.AVERAGE, CostMethod.FIFO
_orderings = itertools.count(1)


class Ledger:
    """Ledger entries written the way the service writes them, one transaction at a time."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []
        self.hours = 0

    def _at(self) -> tuple[int, datetime]:
        self.hours += 1
        return next(_orderings), T0 + timedelta(hours=self.hours)

    def flow(self, kind: str, asset: str, amount: str) -> LedgerEntry:
        ordering, time = self._at()
        entry = LedgerEntry(ordering, "a", f"tx-{ordering}", asset, D(amount), kind, "", time)
        self.entries.append(entry)
        return entry

    def trade(self, source: str, size: str, destination: str, total: str) -> TradeEvent:
        ordering, time = self._at()
        tx = f"order-{ordering}"
        paid = LedgerEntry(ordering, "a", tx, source, -D(size), "trade", "source", time)
        got = LedgerEntry(ordering, "a", tx, destination, D(total), "trade", "destination", time)
        self.entries += [paid, got]
        return TradeEvent(paid, got)


def scripted_buys_and_sell() -> Ledger:
    """Buy 2 BTC for 100 USD, buy 1 BTC for 130 USD, sell 1.5 BTC for 150 USD."""
    ledger = Ledger()
    ledger.trade("USD", "100", "BTC", "2")
    ledger.trade("USD", "130", "BTC", "1")
    ledger.trade("BTC", "1.5", "USD", "150")
    return ledger


def test_average_cost_by_hand() -> None:
    book = build_book(scripted_buys_and_sell().entries, "USD", AVERAGE, {})
    table = book.table({"BTC": D(80)}, today=T0, since=None)
    btc = table.row("BTC")
    # pool: 3 BTC cost 230; selling 1.5 takes 230 × 1.5 / 3 = 115, proceeds 150
    assert btc.quantity == D("1.5")
    assert btc.cost_basis == D(115)
    assert btc.average_cost == divide(D(115), D("1.5"))
    assert btc.realised_total == D(35)
    assert btc.market_value == D(120)
    assert btc.unrealised == D(5)
    usd = table.row("USD")
    assert (usd.quantity, usd.realised_total, usd.unrealised) == (D(-80), D(0), D(0))


def test_fifo_by_hand() -> None:
    book = build_book(scripted_buys_and_sell().entries, "USD", FIFO, {})
    btc = book.table({"BTC": D(80)}, today=T0, since=None).row("BTC")
    # the sale takes 1.5 of the first lot (2 BTC for 100): 75; left 0.5 for 25 and 1 for 130
    assert btc.realised_total == D(75)
    assert btc.cost_basis == D(155)
    assert btc.average_cost == divide(D(155), D("1.5"))
    assert btc.unrealised == D(120) - D(155)


def test_deposit_withdrawal_and_initial_balance_enter_at_their_marks() -> None:
    ledger = Ledger()
    initial = ledger.flow("initialBalances", "BTC", "1")
    deposit = ledger.flow("deposit", "BTC", "1")
    withdrawal = ledger.flow("withdrawal", "BTC", "-0.5")
    marks = {MarkKey.of(initial): D(50), MarkKey.of(deposit): D(70), MarkKey.of(withdrawal): D(90)}
    average = build_book(ledger.entries, "USD", AVERAGE, marks).table({}, today=T0, since=None)
    fifo = build_book(ledger.entries, "USD", FIFO, marks).table({}, today=T0, since=None)
    # the withdrawal is a disposal at its mark: proceeds 0.5 × 90 = 45
    assert average.row("BTC").realised_total == D(45) - D(120) * D("0.5") / 2
    assert fifo.row("BTC").realised_total == D(45) - D(25)
    assert average.row("BTC").cost_basis == D(90)
    assert fifo.row("BTC").cost_basis == D(25) + D(70)
    # no current mark: the row has no market figures, the totals say which asset is left out
    assert average.row("BTC").market_value is None
    assert average.totals.left_out == ("BTC",)


def test_valuation_currency_flows_at_face_value_and_make_no_pnl() -> None:
    ledger = Ledger()
    ledger.flow("initialBalances", "USD", "1000")
    ledger.flow("withdrawal", "USD", "-250.5")
    table = build_book(ledger.entries, "USD", FIFO, {}).table({}, today=T0, since=None)
    usd = table.row("USD")
    assert (usd.quantity, usd.cost_basis, usd.market_value) == (D("749.5"),) * 3
    assert usd.realised_total == 0 and usd.unrealised == 0 and usd.share == 1


def test_a_cross_moves_the_destinations_value_of_the_time() -> None:
    ledger = Ledger()
    initial = ledger.flow("initialBalances", "BTC", "1")
    cross = ledger.trade("BTC", "0.5", "ETH", "10")  # sell 0.5 BTC for 10 ETH
    events = ledger_events(ledger.entries)
    assert events == [FlowEvent(initial), cross]
    keys = marks_needed(events, "USD")
    assert keys == [MarkKey.of(initial), MarkKey.of(cross.got), MarkKey.of(cross.paid)]
    marks = {MarkKey.of(initial): D(100), MarkKey.of(cross.got): D(6)}
    table = build_book(ledger.entries, "USD", AVERAGE, marks).table({}, today=T0, since=None)
    # V = 10 ETH × 6 = 60: the ETH costs 60, the BTC given up has proceeds 60 against cost 50
    assert table.row("ETH").cost_basis == D(60)
    assert table.row("ETH").average_cost == D(6)
    assert table.row("BTC").realised_total == D(10)
    # without a mark for the destination, the source's: 0.5 BTC × 110 = 55
    marks = {MarkKey.of(initial): D(100), MarkKey.of(cross.paid): D(110)}
    table = build_book(ledger.entries, "USD", AVERAGE, marks).table({}, today=T0, since=None)
    assert table.row("ETH").cost_basis == D(55)
    assert table.row("BTC").realised_total == D(5)


def test_a_trade_in_the_valuation_currency_needs_no_mark() -> None:
    ledger = scripted_buys_and_sell()
    assert marks_needed(ledger_events(ledger.entries), "USD") == []


def test_short_positions_close_the_other_way_round() -> None:
    ledger = Ledger()
    ledger.trade("BTC", "1", "USD", "100")  # sells a BTC it does not hold (credit)
    ledger.trade("USD", "160", "BTC", "2")  # buys back 1 and goes 1 long
    for method in CostMethod:
        btc = build_book(ledger.entries, "USD", method, {}).table({}, today=T0, since=None)
        row = btc.row("BTC")
        # half of the 160 closes the short sold for 100: realised 20; 1 BTC left costing 80
        assert (row.quantity, row.realised_total, row.cost_basis) == (D(1), D(20), D(80))


def test_an_unpriced_flow_blanks_the_cost_figures_not_the_quantity() -> None:
    ledger = Ledger()
    ledger.flow("deposit", "XYZ", "5")
    ledger.flow("initialBalances", "USD", "10")
    table = build_book(ledger.entries, "USD", AVERAGE, {}).table(
        {"XYZ": D(2)}, today=T0, since=None
    )
    xyz = table.row("XYZ")
    assert xyz.quantity == 5 and not xyz.priced
    assert xyz.average_cost is None and xyz.unrealised is None and xyz.realised_total is None
    assert xyz.market_value == 10 and xyz.share == D("0.5")
    assert table.totals.market_value == 20 and table.totals.left_out == ("XYZ",)


def test_realised_today_since_a_date_and_by_day() -> None:
    ledger = Ledger()
    ledger.trade("USD", "100", "BTC", "1")  # T0 + 1 h
    ledger.trade("BTC", "0.5", "USD", "60")  # T0 + 2 h: realises 10
    ledger.hours += 24
    ledger.trade("BTC", "0.5", "USD", "45")  # T0 + 27 h: realises -5
    book = build_book(ledger.entries, "USD", FIFO, {})
    table = book.table({"BTC": D(1)}, today=T0 + timedelta(hours=24), since=T0)
    btc = table.row("BTC")
    assert (btc.realised_today, btc.realised_since, btc.realised_total) == (D(-5), D(5), D(5))
    later = book.table({}, today=T0, since=T0 + timedelta(hours=3))
    assert later.row("BTC").realised_since == -5
    assert book.realised_by_day(UTC) == {T0.date(): D(10), (T0 + timedelta(days=1)).date(): -5}
    assert table.totals.realised_today == -5 and table.totals.realised_since == 5


def test_shares_and_totals_row() -> None:
    book = build_book(scripted_buys_and_sell().entries, "USD", AVERAGE, {})
    book.add(Flow(T0, "USD", D(1000), None, "deposit"))
    table = book.table({"BTC": D(80)}, today=T0, since=None)
    assert table.totals.market_value == D(120) + D(920)
    assert table.row("BTC").share == divide(D(120), D(1040))
    assert table.totals.unrealised == D(5) and table.totals.realised_total == D(35)
    assert table.totals.cost_basis == D(115) + D(920)
    assert sum(row.share or 0 for row in table.rows) == 1


# -- properties -------------------------------------------------------------------------------

quantities = st.decimals(min_value=D("-5"), max_value=D("5"), places=8).filter(bool)
values = st.decimals(min_value=D("0"), max_value=D("100000"), places=2)
flows = st.lists(
    st.tuples(st.sampled_from(["BTC", "ETH"]), quantities, values), min_size=1, max_size=25
)
marks = st.decimals(min_value=D("0.01"), max_value=D("100000"), places=6)


def booked(method: CostMethod, items: list[tuple[str, Decimal, Decimal]]) -> PositionBook:
    book = PositionBook("USD", method)
    for number, (asset, quantity, value) in enumerate(items):
        book.add(Flow(T0 + timedelta(minutes=number), asset, quantity, value))
    return book


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(flows, marks, st.sampled_from(list(CostMethod)))
def test_realised_plus_unrealised_is_value_less_inflows_plus_outflows(
    items: list[tuple[str, Decimal, Decimal]], mark: Decimal, method: CostMethod
) -> None:
    table = booked(method, items).table({"BTC": mark, "ETH": mark}, today=T0, since=None)
    for row in table.rows:
        inflows = sum((v for a, q, v in items if a == row.asset and q > 0), D(0))
        outflows = sum((v for a, q, v in items if a == row.asset and q < 0), D(0))
        assert row.quantity == sum((q for a, q, _ in items if a == row.asset), D(0))
        assert row.realised_total is not None and row.unrealised is not None
        assert row.market_value is not None
        assert row.realised_total + row.unrealised == row.market_value - inflows + outflows
    totals = table.totals
    assert totals.realised_total + totals.unrealised == totals.market_value - sum(
        (v for _, q, v in items if q > 0), D(0)
    ) + sum((v for _, q, v in items if q < 0), D(0))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(flows, values)
def test_fifo_and_average_agree_once_everything_bought_is_sold(
    items: list[tuple[str, Decimal, Decimal]], closing: Decimal
) -> None:
    held: dict[str, Decimal] = {}
    for asset, quantity, _ in items:
        held[asset] = held.get(asset, D(0)) + quantity
    closed = items + [(asset, -quantity, closing) for asset, quantity in held.items() if quantity]
    average, fifo = (booked(m, closed).table({}, today=T0, since=None) for m in CostMethod)
    for a, f in zip(average.rows, fifo.rows, strict=True):
        assert a.quantity == f.quantity == 0
        assert a.cost_basis == f.cost_basis == 0
        assert a.realised_total == f.realised_total
        assert a.realised_total == a.outflows - a.inflows


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(quantities.map(abs), values), min_size=1, max_size=15))
def test_with_only_buys_both_methods_hold_the_same_cost(
    items: list[tuple[Decimal, Decimal]],
) -> None:
    buys = [("BTC", quantity, value) for quantity, value in items]
    average, fifo = (booked(m, buys).table({}, today=T0, since=None).row("BTC") for m in CostMethod)
    assert average.cost_basis == fifo.cost_basis == sum((v for _, _, v in buys), D(0))
    assert average.average_cost == fifo.average_cost
    assert average.realised_total == fifo.realised_total == 0


@pytest.mark.parametrize("method", list(CostMethod))
def test_a_lone_leg_is_a_flow_at_its_mark(method: CostMethod) -> None:
    ledger = Ledger()
    leg = ledger.flow("trade", "BTC", "1")
    events = ledger_events(ledger.entries)
    assert events == [FlowEvent(leg)] and marks_needed(events, "USD") == [MarkKey.of(leg)]
    row = build_book(ledger.entries, "USD", method, {MarkKey.of(leg): D(7)}).table(
        {}, today=T0, since=None
    )
    assert row.row("BTC").cost_basis == 7


@pytest.mark.parametrize("method", list(CostMethod))
def test_a_long_ledger_is_booked_in_small_steps_with_the_same_figures(method: CostMethod) -> None:
    """The dock makes the book in slices of the event loop (``book_steps``): as many steps as
    blocks of ``STEP_EVENTS`` events, and the same book as ``build_book`` — whose running
    quantity and basis equal the sums of the lots left."""
    ledger = Ledger()
    for number in range(600):
        if number % 3 == 2:
            ledger.trade("BTC", "0.7", "USD", str(90 + number % 7))
        else:
            ledger.trade("USD", str(50 + number % 5), "BTC", "0.55")
    events = ledger_events(ledger.entries)
    steps = book_steps(events, "USD", method, {})
    count = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            stepped: PositionBook = done.value
            break
        count += 1
    assert count == len(events) // STEP_EVENTS
    whole = build_book(ledger.entries, "USD", method, {})
    table = whole.table({"BTC": D(100)}, today=T0, since=None)
    assert stepped.table({"BTC": D(100)}, today=T0, since=None) == table
    quantity, basis = whole.positions()["BTC"]
    lots = whole._positions["BTC"].lots
    with localcontext(BOOK_CONTEXT):  # exact sums
        held, cost = sum(lot.quantity for lot in lots), sum(lot.basis for lot in lots)
    assert (quantity, basis) == (held, cost)
    assert len(lots) > 1 if method is FIFO else len(lots) == 1
