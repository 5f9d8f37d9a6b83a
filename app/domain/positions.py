"""Positions and P&L: a position book fed with the ledger's events in ledger order,
under a chosen cost method, valued in one valuation currency. Pure: no I/O, no clock.

What enters, and at what value (always a magnitude in the valuation currency ``C``):

- **A trade** (its ``source`` and ``destination`` legs, one ordering) is one value ``V`` given
  up by one asset and taken on by the other, so a trade moves value and never creates any:
  when one leg is ``C``, ``V`` is that leg's amount, exactly (buying BTC for 20,000 USD costs
  20,000; selling it for 20,000 USD has proceeds of 20,000). A cross (ETH/BTC with ``C`` = USD)
  is valued at the **destination's** mark of the time: ``V`` = amount received × its mark, so
  the asset taken on costs what it was worth and the spread paid shows in the realised P&L of
  the asset given up, as it would had it been sold for ``C``; without a mark for the
  destination, the source's mark (amount given × its mark); with neither, unpriced.
- **Every other entry** (deposit, withdrawal, initial balances, transfers, manual) is an
  external flow at its unit value: a mark of the time or a cost the trader entered (the caller
  resolves which, see ``app.services.positions``). An inflow costs quantity × unit; an outflow
  is a disposal with proceeds quantity × unit, so a withdrawal realises the P&L the withdrawn
  units had earned up to then (P&L never vanishes with the units).
- ``C`` itself is always worth exactly its amount; it never makes P&L.

Cost methods (``CostMethod``): **average cost** keeps one pool per asset — a disposal takes
the pool's basis × sold / held; **FIFO** keeps lots in arrival order — a disposal takes the
oldest lots first, a partly taken lot its basis × taken / lot size. Either way realised P&L =
proceeds − basis taken. A position can go short (credit used): a disposal beyond the holding
opens a short lot whose basis is minus its proceeds, and a later inflow closes it the same way
round (realised = short proceeds − cost of buying back).

Exactness: the only divisions are those pro-rata shares (and marks of crosses), rounded once,
half-even, to ``QUANTUM`` (28 decimal places, far below any displayed digit); every other step
is an addition in a 100-digit context, exact. So the book's identities hold to the last digit:
realised + unrealised = market value − value of every inflow + value of every outflow, and
the realised P&L of a position closed to zero is the same under both methods.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from decimal import Context, Decimal, localcontext
from enum import StrEnum
from typing import TypeVar

from app.domain.money import divide
from app.domain.records import LedgerEntry

T = TypeVar("T")
#: Pro-rata shares and marked values are rounded to this, once each (half-even).
QUANTUM = Decimal("1e-28")
PLACES = -28
#: Additions and subtractions of such values never round in this context.
BOOK_CONTEXT = Context(prec=100)
ZERO = Decimal(0)


class CostMethod(StrEnum):
    """How a disposal's cost is found: the pool's average, or the oldest lots first."""

    AVERAGE = "average"
    FIFO = "fifo"


def quantised(value: Decimal) -> Decimal:
    """``value`` at no more than 28 decimal places (unchanged when it has fewer)."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= PLACES:
        return value
    with localcontext(BOOK_CONTEXT):
        return value.quantize(QUANTUM)


def times(quantity: Decimal, unit: Decimal) -> Decimal:
    """``quantity`` × ``unit``, exact up to ``QUANTUM``."""
    with localcontext(BOOK_CONTEXT):
        return quantised(quantity * unit)


# -- jobs in steps ---------------------------------------------------------------------------


#: A job in steps: it yields between blocks of work and returns its result (run it in slices on
#: the event loop with ``app.services.slices.sliced``, or at once with ``finish``).
Steps = Generator[None, None, T]
#: Events booked per step; ledger entries grouped per step.
STEP_EVENTS = 50
STEP_ENTRIES = 500


def finish(steps: Steps[T]) -> T:
    """Run a job in steps to its end at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result


# -- events ---------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class MarkKey:
    """One ledger entry whose value needs a unit value of its time (a mark or a cost)."""

    ordering: int
    transaction_id: str
    asset: str
    time: datetime

    @classmethod
    def of(cls, entry: LedgerEntry) -> MarkKey:
        return cls(entry.ordering, entry.transaction_id, entry.asset, entry.event_time)


@dataclass(frozen=True)
class TradeEvent:
    """Both legs of one trade: ``paid`` (source, negative) and ``got`` (destination)."""

    paid: LedgerEntry
    got: LedgerEntry


@dataclass(frozen=True)
class FlowEvent:
    """Any entry that is not a leg of a whole trade: it enters at a unit value of its time."""

    entry: LedgerEntry


Event = TradeEvent | FlowEvent


def ledger_events(entries: Iterable[LedgerEntry]) -> list[Event]:
    """``entries`` (any order) as events in ledger order: the two legs of a trade (same
    ordering and transaction, one ``source`` and one ``destination`` of different assets)
    form one ``TradeEvent``; everything else, a lone leg included, is a ``FlowEvent``."""
    return finish(event_steps(entries))


def event_steps(entries: Iterable[LedgerEntry]) -> Steps[list[Event]]:
    """``ledger_events`` in steps of ``STEP_ENTRIES``."""
    groups: dict[tuple[int, str], list[LedgerEntry]] = {}
    for number, entry in enumerate(entries, 1):
        groups.setdefault((entry.ordering, entry.transaction_id), []).append(entry)
        if number % STEP_ENTRIES == 0:
            yield
    events: list[Event] = []
    for number, key in enumerate(sorted(groups), 1):
        if number % STEP_ENTRIES == 0:
            yield
        members = groups[key]
        paid = [e for e in members if e.event_type == "trade" and e.sub_event_type == "source"]
        got = [e for e in members if e.event_type == "trade" and e.sub_event_type == "destination"]
        if len(members) == 2 and len(paid) == 1 and len(got) == 1 and paid[0].asset != got[0].asset:
            events.append(TradeEvent(paid[0], got[0]))
        else:
            events.extend(FlowEvent(entry) for entry in members)
    return events


def marks_needed(events: Iterable[Event], currency: str) -> list[MarkKey]:
    """The entries whose value needs a unit value of their time in ``currency``: every flow
    not in ``currency``, and both legs of a cross (destination first: it is used first)."""
    keys: list[MarkKey] = []
    for event in events:
        if isinstance(event, FlowEvent):
            if event.entry.asset != currency and event.entry.amount:
                keys.append(MarkKey.of(event.entry))
        elif currency not in (event.paid.asset, event.got.asset):
            keys += [MarkKey.of(event.got), MarkKey.of(event.paid)]
    return keys


def trade_value(
    event: TradeEvent, currency: str, marks: Mapping[MarkKey, Decimal]
) -> Decimal | None:
    """The one value a trade moves, in ``currency`` (see the module's rule), or None."""
    paid, got = abs(event.paid.amount), abs(event.got.amount)
    if event.paid.asset == currency:
        return paid
    if event.got.asset == currency:
        return got
    for amount, entry in ((got, event.got), (paid, event.paid)):
        unit = marks.get(MarkKey.of(entry))
        if unit is not None:
            return times(amount, unit)
    return None


@dataclass(frozen=True)
class Flow:
    """One change of one asset's quantity (``+`` in, ``−`` out) and its value in the valuation
    currency (a magnitude: cost of an inflow, proceeds of an outflow; None: unknown)."""

    time: datetime
    asset: str
    quantity: Decimal
    value: Decimal | None
    kind: str = ""


def event_flows(event: Event, currency: str, marks: Mapping[MarkKey, Decimal]) -> list[Flow]:
    """The flows of one event, valued by the module's rule."""
    if isinstance(event, TradeEvent):
        value = trade_value(event, currency, marks)
        return [
            Flow(leg.event_time, leg.asset, leg.amount, value, "trade")
            for leg in (event.paid, event.got)
        ]
    entry = event.entry
    unit = Decimal(1) if entry.asset == currency else marks.get(MarkKey.of(entry))
    value = None if unit is None else times(abs(entry.amount), unit)
    return [Flow(entry.event_time, entry.asset, entry.amount, value, entry.event_type)]


# -- the book -------------------------------------------------------------------------------


@dataclass
class _Lot:
    quantity: Decimal  # signed: long lots positive, short lots negative
    basis: Decimal  # signed like quantity: cost of a long lot, minus the proceeds of a short


@dataclass(frozen=True)
class Realisation:
    """P&L realised by one flow, at its time."""

    time: datetime
    amount: Decimal


@dataclass
class _Position:
    lots: deque[_Lot] = field(default_factory=deque)
    realised: list[Realisation] = field(default_factory=list)
    priced: bool = True  # False once any flow of this asset had no value
    inflows: Decimal = ZERO  # value of every inflow
    outflows: Decimal = ZERO  # value of every outflow
    #: The sums of the lots' quantities and bases, kept as they change (exact additions, so
    #: equal to summing the lots; summing them on every flow made FIFO quadratic).
    quantity: Decimal = ZERO
    basis: Decimal = ZERO
    #: Realised P&L from a start (None: ever), kept until the next realisation: a table at new
    #: marks (every tick) then sums nothing again.
    sums: dict[datetime | None, Decimal] = field(default_factory=dict)


def _sign(value: Decimal) -> int:
    return 1 if value > 0 else -1


class PositionBook:
    """Positions of every asset seen, in ``currency``, by ``method``; fed in ledger order."""

    def __init__(self, currency: str, method: CostMethod = CostMethod.AVERAGE) -> None:
        self.currency = currency
        self.method = method
        self._positions: dict[str, _Position] = {}

    @property
    def assets(self) -> list[str]:
        return sorted(self._positions)

    def add(self, flow: Flow) -> None:
        """Book one flow: open or add to the position, or close it (realising P&L) and open
        the rest the other way round when it crosses zero."""
        position = self._positions.setdefault(flow.asset, _Position())
        if not flow.quantity:
            return
        value = abs(flow.quantity) if flow.asset == self.currency else flow.value
        if value is None:
            position.priced = False
            value = ZERO
        value = quantised(abs(value))
        with localcontext(BOOK_CONTEXT):
            if flow.quantity > 0:
                position.inflows += value
            else:
                position.outflows += value
            signed = value if flow.quantity > 0 else -value  # cash paid (+) or received (−)
            held = position.quantity
            if held and _sign(held) != _sign(flow.quantity):
                closed = min(abs(flow.quantity), abs(held))
                part = signed if closed == abs(flow.quantity) else _share(signed, closed, flow)
                taken = self._take(position, closed)
                position.realised.append(Realisation(flow.time, -(part + taken)))
                position.sums.clear()
                rest, signed = flow.quantity + _sign(held) * closed, signed - part
            else:
                rest = flow.quantity
            if rest:
                self._open(position, _Lot(rest, signed))

    def _open(self, position: _Position, lot: _Lot) -> None:
        with localcontext(BOOK_CONTEXT):
            position.quantity += lot.quantity
            position.basis += lot.basis
            if self.method is CostMethod.AVERAGE and position.lots:
                pool = position.lots[0]
                pool.quantity += lot.quantity
                pool.basis += lot.basis
            else:
                position.lots.append(lot)

    @staticmethod
    def _take(position: _Position, amount: Decimal) -> Decimal:
        """Remove ``amount`` (a magnitude) from the oldest lots; their basis taken."""
        taken = ZERO
        with localcontext(BOOK_CONTEXT):
            position.quantity -= _sign(position.quantity) * amount
            while amount:
                lot = position.lots[0]
                if abs(lot.quantity) <= amount:
                    position.lots.popleft()
                    taken += lot.basis
                    amount -= abs(lot.quantity)
                    continue
                part = quantised(lot.basis * amount / abs(lot.quantity))
                lot.basis -= part
                lot.quantity -= _sign(lot.quantity) * amount
                taken += part
                amount = ZERO
            position.basis -= taken
        return taken

    def positions(self) -> dict[str, tuple[Decimal, Decimal]]:
        """Quantity and cost basis of every asset seen."""
        return {asset: (p.quantity, p.basis) for asset, p in sorted(self._positions.items())}

    def realisations(self, asset: str) -> list[Realisation]:
        position = self._positions.get(asset)
        return list(position.realised) if position else []

    def realisations_of_priced(self) -> list[Realisation]:
        """Every realisation of every priced asset, oldest first (P&L over time)."""
        found = [
            item
            for position in self._positions.values()
            if position.priced
            for item in position.realised
        ]
        return sorted(found, key=lambda item: item.time)

    def realised_by_day(self, zone: tzinfo) -> dict[date, Decimal]:
        """Realised P&L of every priced asset by day in ``zone``."""
        days: dict[date, Decimal] = {}
        with localcontext(BOOK_CONTEXT):
            for position in self._positions.values():
                if not position.priced:
                    continue
                for item in position.realised:
                    day = item.time.astimezone(zone).date()
                    days[day] = days.get(day, ZERO) + item.amount
        return dict(sorted(days.items()))

    def table(
        self, marks: Mapping[str, Decimal | None], *, today: datetime, since: datetime | None
    ) -> PositionsTable:
        """Every asset's row at ``marks`` (unit values in the valuation currency), with realised
        P&L since ``today`` (the start of the trader's day) and since ``since`` (None: ever)."""
        rows = [
            _row(
                asset,
                position,
                Decimal(1) if asset == self.currency else marks.get(asset),
                today,
                since,
            )
            for asset, position in sorted(self._positions.items())
        ]
        return _table(self.currency, self.method, rows, today, since)


def _share(signed: Decimal, part: Decimal, flow: Flow) -> Decimal:
    """The part of a flow's signed value that belongs to ``part`` of its quantity."""
    with localcontext(BOOK_CONTEXT):
        return quantised(signed * part / abs(flow.quantity))


def book_steps(
    events: Sequence[Event],
    currency: str,
    method: CostMethod,
    marks: Mapping[MarkKey, Decimal],
) -> Steps[PositionBook]:
    """The book of ``events`` (in ledger order), ``STEP_EVENTS`` events a step."""
    book = PositionBook(currency, method)
    for number, event in enumerate(events, 1):
        for flow in event_flows(event, currency, marks):
            book.add(flow)
        if number % STEP_EVENTS == 0:
            yield
    return book


def build_book(
    entries: Iterable[LedgerEntry],
    currency: str,
    method: CostMethod,
    marks: Mapping[MarkKey, Decimal],
) -> PositionBook:
    """The book of a ledger (any order) at the given unit values of its entries' times."""
    return finish(book_steps(ledger_events(entries), currency, method, marks))


# -- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionRow:
    """One asset. Cost figures are None when some flow of it had no value (``priced`` False);
    market figures when no market values it now; ``average_cost`` also when it is flat."""

    asset: str
    quantity: Decimal
    priced: bool
    average_cost: Decimal | None
    cost_basis: Decimal | None
    mark: Decimal | None
    market_value: Decimal | None
    unrealised: Decimal | None
    realised_today: Decimal | None
    realised_since: Decimal | None
    realised_total: Decimal | None
    share: Decimal | None = None  # of the portfolio's market value, 0.25 = 25 %
    inflows: Decimal = ZERO
    outflows: Decimal = ZERO


@dataclass(frozen=True)
class PositionsTotals:
    """Sums of the rows that have the figure; ``left_out`` names the assets that lack one."""

    market_value: Decimal
    cost_basis: Decimal
    unrealised: Decimal
    realised_today: Decimal
    realised_since: Decimal
    realised_total: Decimal
    left_out: tuple[str, ...]


@dataclass(frozen=True)
class PositionsTable:
    currency: str
    method: CostMethod
    rows: tuple[PositionRow, ...]
    totals: PositionsTotals
    today: datetime
    since: datetime | None

    def row(self, asset: str) -> PositionRow:
        for row in self.rows:
            if row.asset == asset:
                return row
        raise KeyError(asset)


def _realised(position: _Position, start: datetime | None) -> Decimal:
    found = position.sums.get(start)
    if found is None:
        with localcontext(BOOK_CONTEXT):
            realised = (r.amount for r in position.realised if start is None or r.time >= start)
            found = position.sums[start] = sum(realised, ZERO)
    return found


def _row(
    asset: str,
    position: _Position,
    mark: Decimal | None,
    today: datetime,
    since: datetime | None,
) -> PositionRow:
    quantity, basis = position.quantity, position.basis
    priced = position.priced
    value = None if mark is None else times(quantity, mark)
    with localcontext(BOOK_CONTEXT):
        unrealised = value - basis if priced and value is not None else None
    return PositionRow(
        asset,
        quantity,
        priced,
        divide(basis, quantity) if priced and quantity else None,
        basis if priced else None,
        mark,
        value,
        unrealised,
        _realised(position, today) if priced else None,
        _realised(position, since) if priced else None,
        _realised(position, None) if priced else None,
        inflows=position.inflows,
        outflows=position.outflows,
    )


def _total(values: Iterable[Decimal | None]) -> Decimal:
    with localcontext(BOOK_CONTEXT):
        return sum((v for v in values if v is not None), ZERO)


def _table(
    currency: str,
    method: CostMethod,
    rows: list[PositionRow],
    today: datetime,
    since: datetime | None,
) -> PositionsTable:
    """Rows with their share of the portfolio (market value / total market value, when that
    total is positive), and the totals row."""
    worth = _total(row.market_value for row in rows)
    if worth > 0:
        rows = [
            row if row.market_value is None else replace(row, share=divide(row.market_value, worth))
            for row in rows
        ]
    left_out = tuple(
        row.asset for row in rows if row.market_value is None or row.unrealised is None
    )
    totals = PositionsTotals(
        worth,
        _total(row.cost_basis for row in rows),
        _total(row.unrealised for row in rows),
        _total(row.realised_today for row in rows),
        _total(row.realised_since for row in rows),
        _total(row.realised_total for row in rows),
        left_out,
    )
    return PositionsTable(currency, method, tuple(rows), totals, today, since)
