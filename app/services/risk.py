"""Session risk limits and the kill switch: the last gate every order and RFQ accept passes
before anything is journaled or sent. No Qt.

Every send goes through it — hand orders, hotkeys, click-to-trade (the order ticket's ``send``),
the execution engine's children (``OrderDesk.place``: ``admit``; each new algo order:
``admit_parent``) and RFQ accepts (``admit_accept``). A refusal is a ``RiskRefused`` (a
``TicketError``, so a ticket shows it by its fields) naming the limit and the figures in the
trader's terms; nothing is journaled and nothing leaves.

What counts (an order counts when it is admitted — from then on it may be on its way, and an
answer that was lost is never taken for a failure):

- notional: what the order sells (``size`` of ``source``; an accept's quoted pay amount)
  valued in ``RiskLimits.currency`` at the snapshot's top-of-book mids
  (``app.domain.valuation``). An order that cannot be valued is refused while a notional limit
  is set, saying why: its worth is never guessed.
- notional per day: the server's UTC day (``clock.server_now()``, never this machine's wall
  clock). It is rebuilt from the order journal when the gate first needs it and at each new
  day, so a restart keeps the day's usage: every entry of the day counts except ``rejected``
  and ``failed`` ones (the service refused them, or they never left). ``sending`` and
  ``unknown`` count (they may have executed), and so do ``filled``, ``submitted`` and
  ``canceled`` (a resting order that expired was sent and worked in the market). Each admitted
  order's notional is written once to the journal's facts (``RISK_NOTIONAL``, the subject is
  its clientOrderId) so the rebuilt figure is the one counted at the time; an entry without one
  (an older journal) is valued from its request at the current mids. A refusal or failure
  reported in the session (``settled``) takes the order off the day's usage, as a restart would.
  The same clientOrderId sent again (after a lost answer: the service replays it, never trades
  twice) counts once.
- orders per minute: sends in the last 60 s of the injected monotonic clock, resends included
  (each is a request on the wire). Kept in memory: a restart starts a new minute.
- max position: the asset bought, held (free plus locked, from the snapshot's balances) plus
  what the order gets — at the mid, or at its limit when that gives more (the most it could
  bring in). Selling an asset is never refused by its position limit.
- max open parents: algo orders working at once, checked when a new one starts.

The kill switch (``halt``) refuses every send until ``resume``; ``halt`` is synchronous and
idempotent (a second halt keeps the first reason), so the next send after it returns is
refused.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Literal, Protocol

from app.domain.money import MONEY_CONTEXT, Amount, parse_decimal
from app.domain.order_request import OrderRequest
from app.domain.valuation import value_in
from app.services.events import Topic
from app.services.journal import (
    Fact,
    JournalEntry,
    OrderJournal,
    read_facts,
    reading,
    search_entries,
)
from app.services.limit_prices import display_number
from app.services.market import MarketSnapshot
from app.services.ticket import TicketError, TicketInput

log = logging.getLogger("tradeterm.services")

#: The journal's fact name of an admitted order's notional (subject: its clientOrderId).
RISK_NOTIONAL = "risk_notional"
#: Journal statuses that do not count against the day: refused by the service, or never sent.
NOT_COUNTED = frozenset({"rejected", "failed"})
#: Seconds of the orders-per-minute window.
MINUTE = 60.0

LimitKind = Literal["money", "count", "positions"]


@dataclass(frozen=True)
class LimitSpec:
    """One risk limit: its ``RiskLimits`` field, the words the trader reads, its unit (``{ccy}``
    stands for the valuation currency) and what it does."""

    name: str
    label: str
    unit: str
    kind: LimitKind
    help: str

    def unit_text(self, currency: str) -> str:
        return self.unit.format(ccy=currency)


#: Every limit, in the order Settings shows them: the messages and the dialog read this table.
LIMITS: tuple[LimitSpec, ...] = (
    LimitSpec(
        "max_order_notional",
        "max order notional",
        "{ccy}",
        "money",
        "The most one order (or RFQ accept) may be worth, valued at the mids",
    ),
    LimitSpec(
        "max_notional_per_day",
        "max notional per day",
        "{ccy}",
        "money",
        "The most all orders sent in one server (UTC) day may be worth together",
    ),
    LimitSpec(
        "max_orders_per_minute",
        "max orders per minute",
        "orders",
        "count",
        "The most orders sent in any 60 seconds",
    ),
    LimitSpec(
        "max_position",
        "max position",
        "per asset",
        "positions",
        "The most of an asset held after a trade, e.g. BTC: 20; ETH: 300",
    ),
    LimitSpec(
        "max_open_parents",
        "max open algo orders",
        "algo orders",
        "count",
        "The most algo (parent) orders working at once",
    ),
)
SPECS = {spec.name: spec for spec in LIMITS}


class RiskRefused(TicketError):
    """A send refused by a risk limit or the kill switch; ``limit`` names which
    (``LimitSpec.name``, or ``"halted"``). Nothing was journaled or sent."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__("size", message)
        self.limit = limit


#: The ``limit`` of a refusal by the kill switch.
HALTED = "halted"


@dataclass(frozen=True)
class RiskLimits:
    """The session's risk limits; None (or an empty mapping) is no limit. Money limits are in
    ``currency``; ``max_position`` maps an asset to the most of it held after a trade."""

    max_order_notional: Decimal | None = None
    max_notional_per_day: Decimal | None = None
    max_orders_per_minute: int | None = None
    max_position: Mapping[str, Decimal] | None = None
    max_open_parents: int | None = None
    currency: str = "USD"

    def __post_init__(self) -> None:
        for spec in LIMITS:
            value = getattr(self, spec.name)
            if spec.kind == "positions":
                for asset, most in (value or {}).items():
                    if not most.is_finite() or most < 0:
                        raise ValueError(f"{spec.label} of {asset}: zero or more, not {most}")
            elif value is not None and (not Decimal(value).is_finite() or value <= 0):
                raise ValueError(f"{spec.label}: greater than zero, not {value}")


def parse_positions(text: str) -> dict[str, Decimal]:
    """``"BTC: 20; ETH: 300"`` -> {"BTC": 20, "ETH": 300}; commas are thousands separators.
    ValueError says what is wrong, in words."""
    found: dict[str, Decimal] = {}
    for entry in text.replace("\n", ";").split(";"):
        if not entry.strip():
            continue
        asset, colon, amount = entry.partition(":")
        code = asset.strip().upper()
        if not colon or not code.isalnum():
            raise ValueError(f"{entry.strip()!r}: write an asset, a colon and the most held")
        words = amount.split()
        if len(words) != 1:
            raise ValueError(f"{code}: one amount, not {amount.strip()!r}")
        try:
            value = parse_decimal(words[0].replace(",", ""), "max position")
        except ValueError:
            raise ValueError(f"{code}: {words[0]!r} is not a number") from None
        if value < 0:
            raise ValueError(f"{code}: the most held is zero or more, not {words[0]}")
        found[code] = value
    return found


def positions_text(positions: Mapping[str, Decimal] | None) -> str:
    """The inverse of ``parse_positions`` (as Settings shows it)."""
    return "; ".join(f"{asset}: {format(most, 'f')}" for asset, most in (positions or {}).items())


@dataclass(frozen=True)
class RiskState:
    """What the trader sees of the gate: the kill switch and the limits in force."""

    halted: bool
    why: str
    limits: RiskLimits


class Clock(Protocol):
    """The session's server clock (``app.api.clock.ServerClock``)."""

    def server_now(self) -> datetime: ...

    @property
    def offset(self) -> timedelta: ...


@dataclass
class _Day:
    """Usage of one server day: per clientOrderId, the notional counted (in the currency it was
    valued in, or the sold amount when it could not be valued then), and the running sum per
    asset (a check values a few sums, not every order of the day)."""

    day: date
    counted: dict[str, Amount] = field(default_factory=dict)
    totals: dict[str, Decimal] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for amount in self.counted.values():
            self._add(amount.asset, amount.value)

    def count(self, client_order_id: str, amount: Amount) -> None:
        self.forget(client_order_id)  # sent again: it counts once
        self.counted[client_order_id] = amount
        self._add(amount.asset, amount.value)

    def forget(self, client_order_id: str) -> None:
        amount = self.counted.pop(client_order_id, None)
        if amount is not None:
            self._add(amount.asset, -amount.value)

    def _add(self, asset: str, value: Decimal) -> None:
        with localcontext(MONEY_CONTEXT):
            self.totals[asset] = self.totals.get(asset, Decimal(0)) + value


class RiskGate:
    """Admits or refuses each send (module docstring); holds the kill switch."""

    def __init__(
        self,
        limits: RiskLimits | None = None,
        *,
        clock: Clock,
        journal: OrderJournal | None = None,
        account: str | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock``: the session's server clock (the day is the server's UTC day; the
        journal's local stamps are moved to server time by its ``offset``). ``journal``:
        where the day's usage is rebuilt from and each admitted notional is kept. ``account``:
        only its journal entries count (None: all)."""
        self._limits = limits or RiskLimits()
        self._clock = clock
        self._journal = journal
        self._account = account
        self._monotonic = monotonic
        self._halted = False
        self._why = ""
        self._sends: deque[float] = deque()
        self._day: _Day | None = None
        self.changed: Topic[RiskState] = Topic("risk")

    # -- the kill switch and the limits --------------------------------------------------------

    @property
    def limits(self) -> RiskLimits:
        return self._limits

    @limits.setter
    def limits(self, limits: RiskLimits) -> None:
        if limits == self._limits:
            return
        self._limits = limits
        self._publish()

    @property
    def halted(self) -> bool:
        return self._halted

    @property
    def why(self) -> str:
        return self._why

    @property
    def state(self) -> RiskState:
        return RiskState(self._halted, self._why, self._limits)

    def halt(self, why: str) -> None:
        """Engage the kill switch now: every send after this returns is refused. Halting
        again keeps the first reason (the trader's own words stay)."""
        if self._halted:
            return
        self._halted = True
        self._why = why.strip() or "no reason given"
        log.warning("trading halted: %s", self._why)
        self._publish()

    def resume(self) -> None:
        """Release the kill switch (the trader's confirmed choice)."""
        if not self._halted:
            return
        self._halted = False
        self._why = ""
        log.warning("trading re-enabled")
        self._publish()

    def _publish(self) -> None:
        self.changed.publish(self.state)

    # -- admitting ----------------------------------------------------------------------------

    def admit(self, ticket: TicketInput, request: OrderRequest, snapshot: MarketSnapshot) -> None:
        """Raise RiskRefused when the kill switch is on or ``request`` breaks a limit; else
        count it as sent (``ticket`` is ``request`` in the trader's terms)."""
        del ticket  # the request says what leaves; the ticket is the same order
        received = self._received(request, snapshot)
        self._admit(
            request.client_order_id,
            Amount(request.size, request.source),
            Amount(received, request.destination) if received is not None else None,
            request.destination,
            snapshot,
        )

    def admit_accept(
        self, client_order_id: str, pay: Amount, get: Amount, snapshot: MarketSnapshot
    ) -> None:
        """``admit`` for an RFQ accept: it sells ``pay`` and gets ``get`` as quoted."""
        self._admit(client_order_id, pay, get, get.asset, snapshot)

    def admit_parent(self, open_parents: int) -> None:
        """Raise RiskRefused when halted, or when starting one more algo order beside the
        ``open_parents`` working now would break the max open parents."""
        self._refuse_if_halted()
        most = self._limits.max_open_parents
        if most is not None and open_parents + 1 > most:
            raise self._refusal(
                "max_open_parents",
                f"{_count(open_parents, 'algo order')} already working, the limit is {most}",
            )

    def settled(self, client_order_id: str, status: str) -> None:
        """An order's outcome: one the service refused, or that never left, no longer counts
        against the day (as it would not after a restart)."""
        if status in NOT_COUNTED and self._day is not None:
            self._day.forget(client_order_id)

    def _admit(
        self,
        client_order_id: str,
        sold: Amount,
        received: Amount | None,
        bought: str,
        snapshot: MarketSnapshot,
    ) -> None:
        self._refuse_if_halted()
        limits = self._limits
        currency = limits.currency
        notional = value_in(sold.value, sold.asset, currency, snapshot.tops)
        needs_value = (
            limits.max_order_notional is not None or limits.max_notional_per_day is not None
        )
        if notional is None and needs_value:
            name = (
                "max_order_notional"
                if limits.max_order_notional is not None
                else "max_notional_per_day"
            )
            raise self._refusal(
                name,
                f"this order's worth cannot be known: no watched market values {sold.asset} "
                f"in {currency} (no price yet); it is not guessed",
            )
        shown = "" if notional is None else self._money(notional)
        most = limits.max_order_notional
        if notional is not None and most is not None and notional > most:
            raise self._refusal(
                "max_order_notional", f"this order is {shown}, the limit is {self._money(most)}"
            )
        day = self._today()
        if notional is not None and limits.max_notional_per_day is not None:
            self._check_day(day, client_order_id, notional, snapshot)
        self._check_position(sold, received, bought, snapshot)
        now = self._monotonic()
        while self._sends and self._sends[0] <= now - MINUTE:
            self._sends.popleft()
        per_minute = limits.max_orders_per_minute
        if per_minute is not None and len(self._sends) >= per_minute:
            wait = self._sends[0] + MINUTE - now
            raise self._refusal(
                "max_orders_per_minute",
                f"{_count(len(self._sends), 'order')} sent in the last minute, the limit is "
                f"{per_minute} a minute; the next may go in {wait:,.0f} s",
            )
        # Admitted: it counts from now on, whatever its answer turns out to be.
        self._sends.append(now)
        counted = Amount(notional, currency) if notional is not None else sold
        day.count(client_order_id, counted)
        if self._journal is not None:
            value = {"amount": counted.value, "asset": counted.asset}
            self._journal.record_facts([Fact(client_order_id, RISK_NOTIONAL, value)])

    def _refuse_if_halted(self) -> None:
        if self._halted:
            raise RiskRefused(
                HALTED,
                f"Trading is halted by the kill switch ({self._why}): re-enable trading to send",
            )

    def _refusal(self, name: str, detail: str) -> RiskRefused:
        return RiskRefused(name, f"Refused by the risk limit '{SPECS[name].label}': {detail}")

    def _money(self, value: Decimal) -> str:
        return f"{display_number(value, 8)} {self._limits.currency}"

    def _check_day(
        self, day: _Day, client_order_id: str, notional: Decimal, snapshot: MarketSnapshot
    ) -> None:
        most = self._limits.max_notional_per_day
        assert most is not None
        currency = self._limits.currency
        totals = dict(day.totals)
        again = day.counted.get(client_order_id)
        if again is not None:  # sent again: the service replays it, it counts once
            totals[again.asset] -= again.value
        used = self._value_of(totals, snapshot)
        if used is None:
            raise self._refusal(
                "max_notional_per_day",
                f"the orders sent earlier today cannot all be valued in {currency} now; the "
                "day's total is not guessed",
            )
        with localcontext(MONEY_CONTEXT):
            total = used + notional
        if total > most:
            raise self._refusal(
                "max_notional_per_day",
                f"this order is {self._money(notional)} and {self._money(used)} was sent on "
                f"{day.day.isoformat()} (server day, UTC): {self._money(total)} is above the "
                f"limit of {self._money(most)}",
            )

    def _check_position(
        self, sold: Amount, received: Amount | None, bought: str, snapshot: MarketSnapshot
    ) -> None:
        most = (self._limits.max_position or {}).get(bought)
        if most is None:
            return
        held = _holding(snapshot, bought)
        if held is None:
            raise self._refusal(
                "max_position",
                f"the {bought} held is not known yet (no balances); the position is not guessed",
            )
        if received is None:
            raise self._refusal(
                "max_position",
                f"what this order gets in {bought} cannot be known: no watched market prices "
                f"{sold.asset} in {bought}; it is not guessed",
            )
        with localcontext(MONEY_CONTEXT):
            after = held + received.value
        if after > most:
            raise self._refusal(
                "max_position",
                f"{bought} held would be up to {display_number(after, 12)} {bought} "
                f"({display_number(held, 12)} held + {display_number(received.value, 12)} "
                f"from this order), the limit is {display_number(most, 12)} {bought}",
            )

    def _received(self, request: OrderRequest, snapshot: MarketSnapshot) -> Decimal | None:
        """The most ``request`` could bring in of its destination: at the mid, or at its
        limit (the least destination per source accepted) when that gives more."""
        at_mid = value_in(request.size, request.source, request.destination, snapshot.tops)
        at_limit = None
        if request.limit is not None:
            with localcontext(MONEY_CONTEXT):
                at_limit = request.size * request.limit.value
        found = [value for value in (at_mid, at_limit) if value is not None]
        return max(found) if found else None

    # -- the day's usage ----------------------------------------------------------------------

    def _today(self) -> _Day:
        """This server day's usage, rebuilt from the journal at the first use of a day."""
        day = self._clock.server_now().astimezone(UTC).date()
        if self._day is None or self._day.day != day:
            self._day = _Day(day, self._from_journal(day))
        return self._day

    def _from_journal(self, day: date) -> dict[str, Amount]:
        journal = self._journal
        if journal is None:
            return {}
        return _day_from(
            lambda since: journal.search(since=since),
            lambda ids: journal.facts(RISK_NOTIONAL, ids),
            day,
            self._clock.offset,
            self._account,
        )

    def used_today(self, snapshot: MarketSnapshot) -> Decimal | None:
        """The day's notional so far in the limits' currency (None: some cannot be valued)."""
        return self._value_of(self._today().totals, snapshot)

    def _value_of(self, totals: Mapping[str, Decimal], snapshot: MarketSnapshot) -> Decimal | None:
        currency = self._limits.currency
        used = Decimal(0)
        for asset, amount in totals.items():
            if amount.is_zero():
                continue
            value = value_in(amount, asset, currency, snapshot.tops)
            if value is None:
                return None
            with localcontext(MONEY_CONTEXT):
                used += value
        return used

    async def load_today(self) -> None:
        """Rebuild this server day's usage from the journal off the event loop (the terminal
        calls it at start, after the clock is measured): the first send then does not wait
        for a read of the whole day. A send admitted meanwhile built it itself; that stays."""
        if self._journal is None or self._journal.path is None:
            return
        day = self._clock.server_now().astimezone(UTC).date()
        offset = self._clock.offset
        path = self._journal.path
        counted = await asyncio.to_thread(_read_day, path, day, offset, self._account)
        if self._day is None or self._day.day != day:
            self._day = _Day(day, counted)


def _read_day(path: Path, day: date, offset: timedelta, account: str | None) -> dict[str, Amount]:
    """``_day_from`` on a read-only connection of its own (a thread off the event loop)."""
    with reading(path) as db:
        return _day_from(
            lambda since: search_entries(db, since=since),
            lambda ids: read_facts(db, RISK_NOTIONAL, ids),
            day,
            offset,
            account,
        )


def _day_from(
    search: Callable[[datetime], Iterable[JournalEntry]],
    facts_of: Callable[[Iterable[str]], Mapping[str, Mapping[str, object]]],
    day: date,
    offset: timedelta,
    account: str | None,
) -> dict[str, Amount]:
    """What counts of server day ``day`` in a journal (module docstring); ``offset``: server
    minus local, the journal's stamps being local."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    end = start + timedelta(days=1)
    # A minute of slack on the local side: the offset moves a little between runs.
    entries = [
        entry
        for entry in search(start - offset - timedelta(minutes=1))
        if start <= entry.created_at + offset < end
        and entry.status not in NOT_COUNTED
        and (account is None or entry.account == account)
    ]
    facts = facts_of([entry.client_order_id for entry in entries])
    counted: dict[str, Amount] = {}
    for entry in entries:
        amount = _stored(facts.get(entry.client_order_id)) or _sold(entry)
        if amount is None:
            log.warning(
                "risk: %s of %s has no notional and cannot be valued; not counted",
                entry.client_order_id,
                day.isoformat(),
            )
            continue
        counted[entry.client_order_id] = amount
    return counted


def _stored(value: Mapping[str, object] | None) -> Amount | None:
    if value is None:
        return None
    try:
        return Amount(parse_decimal(str(value["amount"]), "amount"), str(value["asset"]))
    except (KeyError, ValueError):
        return None


def _sold(entry: JournalEntry) -> Amount | None:
    """What an order entry sold, from the body it sent (an accept's body has no amount)."""
    if entry.kind not in ("limit", "market"):
        return None
    try:
        return Amount(
            parse_decimal(str(entry.request["size"]), "size"), str(entry.request["source"])
        )
    except (KeyError, ValueError):
        return None


def _holding(snapshot: MarketSnapshot, asset: str) -> Decimal | None:
    """Free plus locked of ``asset`` (zero when the account has none of it); None before any
    balances arrived."""
    balances = snapshot.balances
    if balances is None:
        return None
    account = balances.account.balances.get(asset)
    if account is not None:
        return account.free + account.locked
    portfolio = balances.portfolio.balances.get(asset)
    if portfolio is not None:
        return portfolio.available_funds - portfolio.used_credit + portfolio.locked_funds
    return Decimal(0)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
