"""The RFQ desk: request a two-way quote, count it down, accept one side at most once.

Time: every side gets a *monotonic* deadline when the quote arrives, and ``remaining`` is
computed from that deadline each time it is asked — never by counting timer ticks (the
countdown survives a stalled event loop and a wrong wall clock). The deadline is keyed to the
quote's receive time, as Reactive Trader does:

    deadline = receive_monotonic + (expires_at - server_time_at_receipt)

``server_time_at_receipt`` is the server's time when we read the answer. The server stamped
``expiresAt`` while answering, about half the quote request's round trip before we read it: its
clock then read ``local_now_at_receipt - rtt/2 + offset``, so at receipt it reads
``local_now_at_receipt + offset`` (the ``rtt/2`` the answer travelled is added back). ``offset``
is the client's measured server-minus-local offset, so a local wall clock that is minutes off
does not change the countdown. The offset is an estimate within an interval (``uncertainty``);
the latest server time it allows is used, so the countdown errs towards expiry, never past it.

Accept is allowed while more than ``max(0.5, typical_round_trip + 0.25)`` seconds are left (the
accept has to reach the server in time), no accept is in flight and the quote was not accepted
or refused. While an accept is in flight both sides are disabled. The margin is checked again
at the last moment, right before the POST leaves (and again after a re-login inside the client):
a late accept is refused locally with the time that was left, nothing sent.

An accept whose answer is lost is ``unknown``: neither side is offered again, and neither claims
what is not known ("the other side's outcome is unknown"). The desk looks it up by the quote's
id with back-off for the session (``_settle``) until found, or until the quote has been absent
``ABSENT_GRACE`` past its expiry — then it stays unknown for the next start's reconcile.

Pre-trade checks: the order ticket's checks (``app.services.pretrade.checks``: funds plus credit,
the fat-finger size limit in the valuation currency) run on each side's equivalent order — the
buy side sells QUOTE for BASE, the sell side sells BASE for QUOTE — before a quote is requested
(the size converted through the top of book when it is in the other asset) and again before an
accept (the quoted amounts). A size-limit block stops the request or the side unless the trader
overrides it for that request; a funds shortfall is a warning, as on the order ticket (the
service's refusal rules). While the connection is offline (every feed failing) the desk sends
neither requests nor accepts. The checks read an ``RfqMarket``: the session's one
``MarketSnapshot`` (``session.market``: balances, tops of book), the connection's health and the
limits from Settings. The desk keeps no copy of the market; the RFQ ticket
(``app.services.rfq_ticket``) previews on a snapshot and an accept made from that preview is
re-checked on the same snapshot (``AcceptRequest``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, localcontext
from typing import Literal

from app.api import (
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    Refused,
    ServerClock,
    ServiceError,
    TooLate,
)
from app.domain import Amount, AssetPair, utc_now
from app.domain.display import Precision, format_number
from app.domain.money import MONEY_CONTEXT, divide, format_trimmed
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import Balances, Order, Quote, TopOfBook
from app.domain.valuation import value_in
from app.services.events import Topic
from app.services.health import Health, HealthState
from app.services.journal import OrderJournal
from app.services.log_events import EventKind, LogLevel
from app.services.market import MarketSnapshot
from app.services.pretrade import Check, CheckLimits, Severity, checks
from app.services.session import TerminalSession
from app.services.settling import (
    SESSION_DELAY_SECONDS,
    SETTLE_DELAYS,
    Absent,
    OrderSettler,
    Sought,
    Verdict,
    verdict,
)
from app.services.ticket import TicketInput

log = logging.getLogger("tradeterm.services")

Side = Literal["buy", "sell"]
SIDES: tuple[Side, Side] = ("buy", "sell")
QuoteState = Literal["live", "amber", "closing", "expired"]

AMBER_SECONDS = 3.0
MIN_ACCEPT_MARGIN = 0.5
ACCEPT_MARGIN_EXTRA = 0.25
REQUOTE_INTERVAL = 2.0
MAX_UNANSWERED_REQUOTES = 10
#: Refusals that end the whole quote (unknown, already accepted, expired); other refusals
#: (funds 424, bad side 400) end only the side that was refused.
QUOTE_ENDING_STATUSES = (404, 409, 410)
#: An unknown accept absent this long (seconds) past its quote's expiry is no longer looked
#: for during the session (the server refuses an accept after expiry); it stays unknown.
ABSENT_GRACE = 60.0
SESSION_DELAY = SESSION_DELAY_SECONDS


class AcceptClosed(Exception):
    """Accept refused locally, nothing was sent; ``reason`` says why in a trader's words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ChecksBlock(AcceptClosed):
    """A request or accept stopped by a pre-trade check (nothing sent); ``checks`` are all the
    checks found, blocks and warnings."""

    def __init__(self, reason: str, found: RfqChecks) -> None:
        super().__init__(reason)
        self.checks = found


# -- the trader's words ------------------------------------------------------------------------


def plural(count: int, noun: str) -> str:
    """``1 quote``, ``2 quotes`` (count grouped)."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def size_text(size: Amount) -> str:
    """A size as the trader typed it: thousands grouped, never rounded (``100,000 BTC``)."""
    places = len(format_trimmed(size.value).partition(".")[2])
    return f"{format_number(size.value, places)} {size.asset}"


def side_name(pair: str | AssetPair, side: Side) -> str:
    """``Buy BTC`` / ``Sell BTC``: a side of a quote on ``pair`` as the trader says it."""
    base = pair.base if isinstance(pair, AssetPair) else pair.split("/")[0]
    return f"{'Buy' if side == 'buy' else 'Sell'} {base}"


def pair_price(live: LiveQuote, side: Side) -> Decimal:
    """The side's price as QUOTE per BASE (the wire may write either direction)."""
    pair_side = PairSide(AssetPair.parse(live.pair, "pair"), side)
    return pair_side.price(live.quote.side(side).price).value


def side_terms(live: LiveQuote, side: Side, precision: Precision) -> str:
    """``Buy BTC · pay 9,090.50 USD · get 0.10000000 BTC at 90,905.00``: amounts exact, the
    price QUOTE per BASE with the pair's increment."""
    quoted = live.quote.side(side)
    pay = f"{precision.exact(quoted.source.value, quoted.source.asset)} {quoted.source.asset}"
    get = (
        f"{precision.exact(quoted.destination.value, quoted.destination.asset)} "
        f"{quoted.destination.asset}"
    )
    price = precision.price_text(pair_price(live, side), live.pair)
    return f"{side_name(live.pair, side)} · pay {pay} · get {get} at {price}"


def trade_of(live: LiveQuote, side: Side, order: Order | None) -> Trade:
    """What an accepted side did, from the order the service returned (else as quoted)."""
    if order is not None:
        trade = Trade.of(order, [live.pair])
        if trade is not None:
            return trade
    pair_side = PairSide(AssetPair.parse(live.pair, "pair"), side)
    quoted = live.quote.side(side)
    if side == "buy":
        return Trade(pair_side, quoted.destination.value, quoted.source.value)
    return Trade(pair_side, quoted.source.value, quoted.destination.value)


# -- pre-trade checks --------------------------------------------------------------------------


@dataclass(frozen=True)
class RfqMarket:
    """What the checks read: one market snapshot (balances, tops of book), the connection's
    health and the limits. A view over the session's snapshot, never a copy of its own."""

    snapshot: MarketSnapshot = field(default_factory=MarketSnapshot)
    health: HealthState | None = None
    limits: CheckLimits = field(default_factory=CheckLimits)

    @property
    def balances(self) -> Balances | None:
        return self.snapshot.balances

    @property
    def top_of_book(self) -> Mapping[str, TopOfBook]:
        return self.snapshot.tops

    @property
    def offline(self) -> bool:
        return self.health is not None and self.health.health == Health.OFFLINE

    def offline_reason(self) -> str | None:
        """Why nothing may be sent now (None: the connection is not known to be down)."""
        if not self.offline or self.health is None:
            return None
        return f"the connection is offline ({self.health.reason})"


@dataclass(frozen=True)
class SideCheck:
    """One check on one side, in the trader's words."""

    side: Side
    code: str  # pretrade's: "funds", "fat_finger", "unvalued"; or "no_price"
    severity: Severity
    text: str
    notional: Decimal | None = None  # valued size (fat_finger), in the valuation currency


@dataclass(frozen=True)
class RfqChecks:
    """The checks of both sides of a request or a quote."""

    found: tuple[SideCheck, ...] = ()

    def of(self, side: Side) -> list[SideCheck]:
        return [check for check in self.found if check.side == side]

    def blocks(self, side: Side | None = None) -> list[SideCheck]:
        return [c for c in self.found if c.severity == "block" and side in (None, c.side)]

    def warnings(self, side: Side | None = None) -> list[SideCheck]:
        return [c for c in self.found if c.severity == "warn" and side in (None, c.side)]

    @property
    def size_limited(self) -> bool:
        """A size-limit finding (blocked, or overridden): the override control applies."""
        return any(check.code == "fat_finger" for check in self.found)

    def reason(self, side: Side) -> str | None:
        """Why ``side`` may not be accepted (None: no check blocks it)."""
        blocks = self.blocks(side)
        return "; ".join(check.text for check in blocks) if blocks else None


def request_ticket(
    pair: AssetPair, side: Side, size: Amount, tops: Mapping[str, TopOfBook]
) -> tuple[TicketInput, bool] | None:
    """The order-ticket equivalent of one side of a request, and whether its size is an
    estimate (converted through the top of book: the buy side spends QUOTE, the sell side
    BASE). None when the size is in the other asset and there is no book to convert it."""
    pair_side = PairSide(pair, side)
    spend = pair_side.source
    if size.asset == spend:
        return TicketInput(spend, pair_side.destination, size.value), False
    top = tops.get(str(pair))
    with localcontext(MONEY_CONTEXT):
        if top is None:
            return None
        if side == "buy" and top.ask > 0:  # size in BASE: pay about size x ask
            return TicketInput(spend, pair_side.destination, size.value * top.ask), True
        if side == "sell" and top.bid > 0:  # size in QUOTE: give about size / bid
            return TicketInput(spend, pair_side.destination, divide(size.value, top.bid)), True
    return None


def quote_ticket(live: LiveQuote, side: Side) -> TicketInput:
    """The order-ticket equivalent of accepting ``side``: sell exactly what the side pays."""
    quoted = live.quote.side(side)
    return TicketInput(quoted.source.asset, quoted.destination.asset, quoted.source.value)


def _can_spend(balances: Balances | None, asset: str) -> Decimal:
    found = balances.portfolio.balances.get(asset) if balances is not None else None
    return Decimal(0) if found is None else found.available_funds + found.available_credit


def _in_trader_terms(
    check: Check,
    side: Side,
    ticket: TicketInput,
    estimated: bool,
    pair: str,
    market: RfqMarket,
    precision: Precision,
) -> SideCheck:
    """Pretrade's finding for ``ticket`` said for the side of the quote it stands for."""
    name = side_name(pair, side)
    asset, valuation = ticket.source, market.limits.valuation
    about = "about " if estimated else ""
    if check.code == "funds":
        spend = (
            precision.amount(ticket.size, asset)
            if estimated
            else precision.exact(ticket.size, asset)
        )
        can = precision.exact(_can_spend(market.balances, asset), asset)
        text = (
            f"{name} spends {about}{spend} {asset}, more than the {can} {asset} "
            "available with credit"
        )
        return SideCheck(side, check.code, check.severity, text)
    if check.code == "fat_finger":
        notional = value_in(ticket.size, asset, valuation, market.top_of_book)
        worth = precision.amount(notional, valuation)
        cap = precision.exact(market.limits.max_notional, valuation)
        text = f"{name} is worth about {worth} {valuation}, above the {cap} {valuation} size limit"
        if check.severity == "warn":
            text += " (overridden)"
        return SideCheck(side, check.code, check.severity, text, notional)
    if check.code == "unvalued":
        text = f"{name}: no price values {asset} in {valuation}, so the size limit is not checked"
        return SideCheck(side, check.code, check.severity, text)
    return SideCheck(side, check.code, check.severity, check.message)


def _side_checks(
    side: Side,
    ticket: TicketInput,
    estimated: bool,
    pair: str,
    market: RfqMarket,
    override: bool,
    precision: Precision,
) -> list[SideCheck]:
    found = checks(
        ticket, market.balances, dict(market.top_of_book), market.limits, override=override
    )
    return [
        _in_trader_terms(check, side, ticket, estimated, pair, market, precision) for check in found
    ]


def request_checks(
    pair: str, size: Amount, market: RfqMarket, *, override: bool = False, precision: Precision
) -> RfqChecks:
    """The order ticket's checks on both sides of a request for ``size`` on ``pair``."""
    parsed = AssetPair.parse(pair, "pair")
    found: list[SideCheck] = []
    for side in SIDES:
        made = request_ticket(parsed, side, size, market.top_of_book)
        if made is None:
            text = (
                f"{side_name(parsed, side)}: no top of book for {pair} yet, so funds and the "
                "size limit are not checked"
            )
            found.append(SideCheck(side, "no_price", "warn", text))
            continue
        ticket, estimated = made
        found.extend(_side_checks(side, ticket, estimated, pair, market, override, precision))
    return RfqChecks(tuple(found))


def quote_checks(
    live: LiveQuote, market: RfqMarket, *, override: bool = False, precision: Precision
) -> RfqChecks:
    """The order ticket's checks on each side of ``live`` as quoted (again before accept)."""
    found: list[SideCheck] = []
    for side in SIDES:
        ticket = quote_ticket(live, side)
        found.extend(_side_checks(side, ticket, False, live.pair, market, override, precision))
    return RfqChecks(tuple(found))


def request_block_text(
    size: Amount, found: RfqChecks, market: RfqMarket, precision: Precision
) -> str:
    """Why a request was stopped, said once for the request (not once per side): what the
    size is worth (the size itself when it is in the valuation currency)."""
    limited = [check.notional for check in found.blocks() if check.notional is not None]
    if not limited:
        return "; ".join(check.text for check in found.blocks())
    valuation = market.limits.valuation
    cap = f"{precision.exact(market.limits.max_notional, valuation)} {valuation}"
    if size.asset == valuation:
        return f"{size_text(size)} is above the {cap} size limit"
    worth = value_in(size.value, size.asset, valuation, market.top_of_book) or max(limited)
    return (
        f"{size_text(size)} is worth about {precision.amount(worth, valuation)} {valuation}, "
        f"above the {cap} size limit"
    )


class LiveQuote:
    """A quote as received: per-side monotonic deadlines and the desk's accept state."""

    def __init__(
        self,
        quote: Quote,
        pair: str,
        size: Amount,
        *,
        received_monotonic: float,
        server_time_at_receipt: datetime,
        round_trip: float,
        clock: ServerClock,
        clock_monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quote = quote
        self.pair = pair
        self.size = size
        self.received_monotonic = received_monotonic
        self.server_time_at_receipt = server_time_at_receipt
        self.round_trip = round_trip
        self._clock = clock
        self._monotonic = clock_monotonic
        self.deadlines: dict[Side, float] = {
            side: received_monotonic
            + (quote.side(side).expires_at - server_time_at_receipt).total_seconds()
            for side in SIDES
        }
        self.in_flight: Side | None = None
        #: The trader overrode the size limit for the request: its accepts carry it too.
        self.override = False
        self.accepted_side: Side | None = None
        #: The accept of ``accepted_side`` was sent and its answer lost: taken or not is not
        #: known (the desk keeps looking it up); neither side is offered again.
        self.outcome_unknown = False
        self.refused: dict[Side, str] = {}
        self.expired_reported: set[Side] = set()

    @classmethod
    def received(
        cls,
        quote: Quote,
        pair: str,
        size: Amount,
        *,
        received_monotonic: float,
        round_trip: float,
        clock: ServerClock,
        clock_monotonic: Callable[[], float] = time.monotonic,
    ) -> LiveQuote:
        """A quote read just now, ``round_trip`` seconds after its request was sent."""
        # The server stamped expiresAt about rtt/2 before now; rtt/2 has passed since, so its
        # clock reads server_now() now. expiresAt is an absolute server time: no further rtt
        # correction applies.
        # The server clock runs on the monotonic clock (app.api.clock): a wall-clock jump
        # does not move it. The estimate is the middle of an interval that holds the server's
        # time; its latest end is taken, so the countdown never shows more time than there may
        # be (a slow, loaded link widens the interval: the trader then gets less, never more).
        latest = clock.server_now() + timedelta(seconds=clock.uncertainty or 0.0)
        return cls(
            quote,
            pair,
            size,
            received_monotonic=received_monotonic,
            server_time_at_receipt=latest,
            round_trip=round_trip,
            clock=clock,
            clock_monotonic=clock_monotonic,
        )

    @property
    def order_id(self) -> str:
        return self.quote.order_id

    @property
    def accept_margin(self) -> float:
        """Seconds that must be left for an accept to be sent."""
        return max(MIN_ACCEPT_MARGIN, self._clock.typical_round_trip + ACCEPT_MARGIN_EXTRA)

    def remaining(self, side: Side, now_monotonic: float | None = None) -> float:
        now = self._monotonic() if now_monotonic is None else now_monotonic
        return self.deadlines[side] - now

    def state(self, side: Side, now: float | None = None) -> QuoteState:
        left = self.remaining(side, now)
        if left <= 0:
            return "expired"
        if left <= self.accept_margin:
            return "closing"
        if left < AMBER_SECONDS:
            return "amber"
        return "live"

    def closed_reason(self, side: Side, now: float | None = None) -> str | None:
        """Why an accept of ``side`` may not be sent now; None when it may."""
        if self.in_flight is not None:
            return f"an accept ({self.in_flight}) is already in flight"
        if self.accepted_side is not None and self.outcome_unknown:
            if side == self.accepted_side:
                return f"the {side} accept's outcome is unknown (its answer was lost)"
            return (
                f"the other side's outcome is unknown (the {self.accepted_side} accept's answer "
                "was lost)"
            )
        if self.accepted_side is not None:
            return f"this quote was already accepted ({self.accepted_side})"
        if side in self.refused:
            return f"the {side} side was refused: {self.refused[side]}"
        state = self.state(side, now)
        if state == "expired":
            return f"the {side} side has expired; request a new quote"
        if state == "closing":
            left = self.remaining(side, now)
            return (
                f"the {side} side closes in {left:.2f} s, too little time for an accept "
                f"to reach the service (needs {self.accept_margin:.2f} s)"
            )
        return None

    def late_reason(self, side: Side, now: float | None = None) -> str | None:
        """Why an accept of ``side`` may not leave at this very moment (asked right before
        the POST, again after a re-login): no more than the safety margin left."""
        left = self.remaining(side, now)
        if left > self.accept_margin:
            return None
        return (
            f"the quote had {max(0.0, left):.2f} s left, under the {self.accept_margin:.2f} s "
            "margin"
        )

    def accept_allowed(self, side: Side, now: float | None = None) -> bool:
        return self.closed_reason(side, now) is None

    def markup_bps(self, side: Side, top: TopOfBook) -> Decimal:
        """Basis points the side's price is worse for the trader than the book: buy against
        the ask, sell against the bid."""
        price = self.quote.side(side).price.value
        if side == "buy":
            return (price - top.ask) / top.ask * 10_000
        return (top.bid - price) / top.bid * 10_000


@dataclass(frozen=True)
class AcceptRequest:
    """What accepting one side of a quote sends (the quote's id and the side) and what it
    will pay and get as quoted, with the market snapshot the preview showing it was made on."""

    quote_id: str
    side: Side
    pay: Amount
    get: Amount
    price: Decimal  # QUOTE per BASE
    snapshot: MarketSnapshot = field(compare=False, repr=False)

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.id

    def body(self) -> dict[str, str]:
        """The accept's request body, as journaled and sent."""
        return {"orderId": self.quote_id, "side": self.side}


@dataclass(frozen=True)
class AcceptResult:
    side: Side
    status: Literal["filled", "refused", "unknown", "failed"]
    order: Order | None
    ms_left: int  # milliseconds the side had left when the accept was sent
    message: str = ""  # the server's words on refusal, verbatim
    http_status: int | None = None
    client_order_id: str = ""


@dataclass(frozen=True)
class QuoteEvent:
    kind: Literal["requested", "accepted", "expired", "refused", "unknown"]
    quote_id: str
    pair: str
    size: Amount
    at: datetime = field(default_factory=utc_now)
    side: Side | None = None
    ms_left: int | None = None
    message: str = ""
    #: Quoted prices, QUOTE per BASE: both sides when requested, the event's side otherwise.
    prices: Mapping[Side, Decimal] = field(default_factory=dict)
    #: The BASE amount the event's side buys or sells (None for a request).
    base: Decimal | None = None


class RfqDesk:
    """One quote at a time for the trader: request, count down, accept, requote."""

    def __init__(
        self,
        session: TerminalSession,
        journal: OrderJournal,
        *,
        clock_monotonic: Callable[[], float] = time.monotonic,
        auto_requote: bool = False,
        max_unanswered_requotes: int = MAX_UNANSWERED_REQUOTES,
        requote_interval: float = REQUOTE_INTERVAL,
        limits: CheckLimits | None = None,
        settle_delays: Sequence[float] = SETTLE_DELAYS,
        absent_grace: float = ABSENT_GRACE,
    ) -> None:
        self.session = session
        self._health: HealthState | None = session.health.current
        self._limits = limits or CheckLimits()
        self.journal = journal
        self._monotonic = clock_monotonic
        self.auto_requote = auto_requote
        self.max_unanswered_requotes = max_unanswered_requotes
        self.requote_interval = requote_interval
        self.current: LiveQuote | None = None
        self.quotes: Topic[LiveQuote] = Topic("quotes")
        self.history: Topic[QuoteEvent] = Topic("quote history")
        self.events: list[QuoteEvent] = []
        self.unanswered_requotes = 0
        self._last_request: float | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.settle_delays = tuple(settle_delays)
        self.absent_grace = absent_grace
        self._settlers: set[asyncio.Task[None]] = set()
        self._closed = False
        self._unsubscribe = [session.health.changes.subscribe(self._on_health)]

    def monotonic(self) -> float:
        """The desk's monotonic clock now (the quotes' deadlines are on it)."""
        return self._monotonic()

    # -- what the checks read -----------------------------------------------------------------

    @property
    def market(self) -> RfqMarket:
        """The session's market as it is now (no copy), with the health and the limits."""
        return self.market_at(self.session.market.snapshot)

    def market_at(self, snapshot: MarketSnapshot) -> RfqMarket:
        """``snapshot`` with the health and the limits: what a preview was checked on."""
        return RfqMarket(snapshot, self._health, self._limits)

    @property
    def limits(self) -> CheckLimits:
        return self._limits

    @limits.setter
    def limits(self, limits: CheckLimits) -> None:
        self._limits = limits

    def _on_health(self, health: HealthState) -> None:
        self._health = health

    @property
    def precision(self) -> Precision:
        """Display precision from the service's pairs (for the desk's own log lines)."""
        precision = Precision()
        precision.learn(self.session.pair_info)
        return precision

    def request_checks(self, pair: str, size: Amount, *, override: bool = False) -> RfqChecks:
        return request_checks(pair, size, self.market, override=override, precision=self.precision)

    def quote_checks(
        self, live: LiveQuote, *, override: bool = False, market: RfqMarket | None = None
    ) -> RfqChecks:
        return quote_checks(
            live,
            market or self.market,
            override=override or live.override,
            precision=self.precision,
        )

    # -- requests -----------------------------------------------------------------------------

    async def request(self, pair: str, size: Amount, *, override: bool = False) -> LiveQuote:
        """Ask for a quote (the trader's own request: resets the requote count). ChecksBlock
        (nothing sent) when a check blocks it and ``override`` does not lift it; AcceptClosed
        while offline."""
        self.unanswered_requotes = 0
        return await self._request(pair, size, override)

    async def requote(self) -> LiveQuote:
        """A fresh quote for the same pair and size as the current one (and its override)."""
        if self.current is None:
            raise AcceptClosed("no quote to requote")
        return await self.request(
            self.current.pair, self.current.size, override=self.current.override
        )

    async def _request(self, pair: str, size: Amount, override: bool) -> LiveQuote:
        if self.accepting:
            # Replacing the quote now would hide the accept's outcome from the trader.
            raise AcceptClosed("an accept is in flight; wait for its answer")
        offline = self.market.offline_reason()
        if offline is not None:
            raise AcceptClosed(f"{offline}; requests resume when it is back")
        found = self.request_checks(pair, size, override=override)
        if found.blocks():
            reason = request_block_text(size, found, self.market, self.precision)
            raise ChecksBlock(reason, found)
        client = self.session.client
        await client.refresh_clock()  # after a wall-clock jump, before a countdown uses it
        self._last_request = sent = self._monotonic()
        quote = await client.request_quote(pair, size)
        received = self._monotonic()
        live = LiveQuote.received(
            quote,
            pair,
            size,
            received_monotonic=received,
            round_trip=received - sent,
            clock=client.clock,
            clock_monotonic=self._monotonic,
        )
        live.override = override
        self._replace(live)
        prices = {side: pair_price(live, side) for side in SIDES}
        self._record(QuoteEvent("requested", quote.order_id, pair, size, prices=prices))
        self.quotes.publish(live)
        return live

    def _replace(self, live: LiveQuote) -> None:
        if self._watcher is not None and self._watcher is not asyncio.current_task():
            self._watcher.cancel()
        self.current = live
        if not self._closed:
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(live), name=f"rfq watch {live.order_id}"
            )

    # -- accept -------------------------------------------------------------------------------

    @property
    def accepting(self) -> bool:
        return self.current is not None and self.current.in_flight is not None

    async def accept(
        self, side: Side, *, override: bool = False, expect: AcceptRequest | None = None
    ) -> AcceptResult:
        """Take ``side`` of the current quote; AcceptClosed (nothing sent) when not allowed:
        closed in time, offline, or blocked by a check (``override``, or the request's, lifts
        the size limit). ``expect``: what the trader's preview said the accept sends; sent only
        if the current quote is still that quote and side, and checked on the preview's
        market snapshot (the facts the trader saw)."""
        live = self._current()
        if expect is not None and (expect.quote_id, expect.side) != (live.order_id, side):
            raise AcceptClosed("the quote changed since it was shown; nothing was sent")
        reason = live.closed_reason(side)
        if reason is not None:
            raise AcceptClosed(reason)
        offline = self.market.offline_reason()
        if offline is not None:
            raise AcceptClosed(f"{offline}; accepting resumes when it is back")
        market = None if expect is None else self.market_at(expect.snapshot)
        found = self.quote_checks(live, override=override, market=market)
        blocked = found.reason(side)
        if blocked is not None:
            raise ChecksBlock(blocked, found)
        return await self._send_accept(live, side)

    async def force_accept(self, side: Side) -> AcceptResult:
        """Send the accept whatever the local countdown says (tests, operations): the server
        decides. Still one accept at a time."""
        live = self._current()
        if live.in_flight is not None:
            raise AcceptClosed(f"an accept ({live.in_flight}) is already in flight")
        return await self._send_accept(live, side, checked=False)

    def _current(self) -> LiveQuote:
        if self.current is None:
            raise AcceptClosed("no quote: request one first")
        return self.current

    async def _send_accept(
        self, live: LiveQuote, side: Side, *, checked: bool = True
    ) -> AcceptResult:
        """Send the accept; ``checked``: the client asks ``live.late_reason`` at the last
        moment before the POST leaves (and again after a re-login), and a late accept is
        refused locally (AcceptClosed, nothing sent)."""
        client = self.session.client
        client_order_id = f"tt-accept-{uuid.uuid4().hex}"
        live.in_flight = side
        try:
            ms_left = int(live.remaining(side) * 1000)
            self.journal.record_intent(
                client_order_id,
                "accept",
                client.account_id,
                {"orderId": live.order_id, "side": side},
            )
            sent_at = client.clock.server_now()

            def last_moment() -> str | None:
                nonlocal ms_left
                ms_left = int(live.remaining(side) * 1000)
                late = live.late_reason(side) if checked else None
                if late is None:
                    self.journal.record_sent(client_order_id)  # it leaves now
                return late

            try:
                order = await client.accept_quote(live.order_id, side, before_send=last_moment)
            except TooLate as late:
                self.journal.record_outcome(client_order_id, "failed", detail=f"not sent: {late}")
                self.session.log(
                    LogLevel.WARNING,
                    f"{side_name(live.pair, side)} on quote {live.order_id} not sent: {late}",
                )
                raise AcceptClosed(late.message) from None
            except OutcomeUnknown as exc:
                sought = Sought.accept(live.order_id, client_order_id, sent_at)
                first = await OrderSettler(client).now(sought)
                if first.order is None:
                    result = self._unknown(live, side, exc, first, ms_left, client_order_id)
                    self._follow_unknown(live, side, sought)
                    return result
                order = first.order
            except (Refused, InvalidRequest, NotFound) as exc:
                message = exc.message  # the server's words, verbatim
                if exc.status in QUOTE_ENDING_STATUSES:
                    live.refused.update({s: message for s in SIDES})
                else:
                    live.refused[side] = message
                self.journal.record_outcome(client_order_id, "rejected", detail=message)
                self._record(self._event("refused", live, side, message))
                self.session.log(
                    LogLevel.WARNING,
                    f"{side_name(live.pair, side)} on quote {live.order_id} refused by the "
                    f"service: {message}",
                    EventKind.REFUSAL,
                )
                return AcceptResult(
                    side, "refused", None, ms_left, message, exc.status, client_order_id
                )
            except ServiceError as exc:
                # NotSent, 401 after re-login, ...: the accept did not reach the quote.
                self.journal.record_outcome(client_order_id, "failed", detail=str(exc))
                self.session.log(
                    LogLevel.WARNING,
                    f"{side_name(live.pair, side)} on quote {live.order_id} did not go "
                    f"through: {exc}",
                )
                return AcceptResult(
                    side, "failed", None, ms_left, exc.message, exc.status, client_order_id
                )
            live.accepted_side = side
            self.journal.record_order(client_order_id, order)
            self.unanswered_requotes = 0
            self._record(self._event("accepted", live, side, "", ms_left))
            sentence = trade_of(live, side, order).sentence(self.precision)
            self.session.log(
                LogLevel.SUCCESS,
                f"{sentence} — RFQ order {order.order_id}, {ms_left:,} ms left",
                EventKind.FILL,
            )
            self.session.after_fill()
            return AcceptResult(side, "filled", order, ms_left, "", None, client_order_id)
        finally:
            live.in_flight = None

    def _unknown(
        self,
        live: LiveQuote,
        side: Side,
        lost: OutcomeUnknown,
        verdict: Verdict,
        ms_left: int,
        client_order_id: str,
    ) -> AcceptResult:
        """The accept's answer was lost and looking it up at once did not settle it."""
        live.accepted_side = side  # may have executed: never offer it again
        live.outcome_unknown = True
        message = f"{lost.message} ({verdict.detail})"
        self.journal.record_outcome(client_order_id, "unknown", detail=message)
        self._record(self._event("unknown", live, side, message))
        self.session.log(
            LogLevel.WARNING,
            f"{side_name(live.pair, side)} on quote {live.order_id}: outcome unknown ({message})",
        )
        self.session.after_fill()
        return AcceptResult(side, "unknown", None, ms_left, message, lost.status, client_order_id)

    def _follow_unknown(self, live: LiveQuote, side: Side, sought: Sought) -> None:
        """Keep looking the unknown accept up during the session (in the background)."""
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(
            self._settle(live, side, sought), name=f"rfq settle {live.order_id}"
        )
        self._settlers.add(task)
        task.add_done_callback(self._settlers.discard)

    async def _settle(self, live: LiveQuote, side: Side, sought: Sought) -> None:
        """Look the accept up (by the quote's id) after each of ``settle_delays``, then every
        ``SESSION_DELAY_SECONDS``, until the order is found — or until the quote has been
        absent for ``absent_grace`` seconds past its expiry (an accept arriving later would
        be refused): absence is still not proof, so it then stays unknown, visibly, for the
        next start's reconcile and the trader."""
        settler = OrderSettler(self.session.client)
        give_up_at = live.deadlines[side] + self.absent_grace
        try:
            for delay in itertools.chain(self.settle_delays, itertools.repeat(SESSION_DELAY)):
                await asyncio.sleep(delay)
                entry = self.journal.entry(sought.client_order_id)
                if entry is None or entry.status != "unknown":
                    return  # settled elsewhere (e.g. the order desk's reconcile)
                look = await settler.look_up(sought)
                outcome = verdict(look)
                if outcome.order is not None:
                    self._settled(live, side, outcome.order, sought.client_order_id)
                    return
                if isinstance(look, Absent) and self._monotonic() >= give_up_at:
                    detail = (
                        f"not found {self.absent_grace:.0f} s after the quote expired: it can no "
                        "longer be taken, but absence is not proof — still unknown; check the "
                        "orders"
                    )
                    self.journal.record_outcome(sought.client_order_id, "unknown", detail=detail)
                    self.session.log(
                        LogLevel.WARNING,
                        f"{side_name(live.pair, side)} on quote {live.order_id}: {detail}",
                    )
                    return
                log.info("accept on %s still unknown: %s", live.order_id, outcome.detail)
        except asyncio.CancelledError:
            raise
        except Exception:  # a settler must not die silently
            log.exception("RFQ accept settling failed")

    def _settled(self, live: LiveQuote, side: Side, order: Order, client_order_id: str) -> None:
        """The unknown accept was found: its order is the outcome."""
        self.journal.record_order(client_order_id, order)
        live.outcome_unknown = False
        if not order.filled:
            status = order.result.status or "not filled"
            message = f"settled: the order is {status}" + (
                f" ({order.result.error})" if order.result.error else ""
            )
            live.accepted_side = None
            live.refused.update({s: message for s in SIDES})
            self._record(self._event("refused", live, side, message))
            self.session.log(
                LogLevel.WARNING, f"{side_name(live.pair, side)} on quote {live.order_id} {message}"
            )
            return
        live.accepted_side = side
        self._record(self._event("accepted", live, side, "settled after its answer was lost"))
        sentence = trade_of(live, side, order).sentence(self.precision)
        self.session.log(
            LogLevel.SUCCESS,
            f"{sentence} — RFQ order {order.order_id} (settled after its answer was lost)",
            EventKind.FILL,
        )
        self.session.after_fill()

    # -- expiry and auto-requote --------------------------------------------------------------

    async def _watch(self, live: LiveQuote) -> None:
        """Warn when the quote is about to expire (once, without auto-requote), report each
        side's expiry at its deadline; then, with auto-requote, ask again."""
        try:
            await self._warn_expiring(live)
            for side in sorted(SIDES, key=lambda s: live.deadlines[s]):
                # Sleep to the monotonic deadline, re-checked: a timer may fire a hair early.
                while (left := live.remaining(side)) > 0:  # noqa: ASYNC110
                    await asyncio.sleep(left)
                while live.in_flight is not None:  # noqa: ASYNC110 (an accept at the wire settles)
                    await asyncio.sleep(0.05)
                if live.accepted_side is not None:
                    return
                if side not in live.refused:
                    live.expired_reported.add(side)
                    self._record(self._event("expired", live, side))
            if self.auto_requote and self.current is live:
                await self._auto_requote(live)
        except asyncio.CancelledError:
            raise
        except Exception:  # a watcher must not die silently
            log.exception("RFQ watcher failed")

    async def _warn_expiring(self, live: LiveQuote) -> None:
        first = min(SIDES, key=lambda s: live.deadlines[s])
        while (left := live.remaining(first)) > AMBER_SECONDS:  # noqa: ASYNC110 (a deadline)
            await asyncio.sleep(left - AMBER_SECONDS)
        if (
            left > 0
            and not self.auto_requote
            and self.current is live
            and live.accepted_side is None
            and live.in_flight is None
            and not live.refused
        ):
            self.session.log(
                LogLevel.WARNING,
                f"{live.pair} quote {live.order_id} expires in {left:.1f} s",
                EventKind.QUOTE_EXPIRING,
            )

    async def _auto_requote(self, live: LiveQuote) -> None:
        if self.unanswered_requotes >= self.max_unanswered_requotes:
            self.session.log(
                LogLevel.INFO,
                f"auto-requote stopped after "
                f"{plural(self.unanswered_requotes, 'quote')} on {live.pair} that nobody "
                "acted on",
            )
            return
        if self._last_request is not None:
            wait = self._last_request + self.requote_interval - self._monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        if self.current is not live or self._closed:
            return
        self.unanswered_requotes += 1
        try:
            await self._request(live.pair, live.size, live.override)
        except AcceptClosed as exc:  # offline, or a check blocks it now
            self.session.log(LogLevel.WARNING, f"auto-requote of {live.pair} stopped: {exc.reason}")
        except ServiceError as exc:
            self.session.log(LogLevel.WARNING, f"auto-requote of {live.pair} failed: {exc}")

    async def close(self) -> None:
        """Stop the desk's task (the expiry watcher and auto-requote) and its subscriptions."""
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        watcher, self._watcher = self._watcher, None
        tasks = [t for t in (watcher, *self._settlers) if t is not None]
        self._settlers.clear()
        for task in tasks:
            if task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    # -- history ------------------------------------------------------------------------------

    def _event(
        self,
        kind: Literal["accepted", "expired", "refused", "unknown"],
        live: LiveQuote,
        side: Side,
        message: str = "",
        ms_left: int | None = None,
    ) -> QuoteEvent:
        quoted = live.quote.side(side)
        base = quoted.destination.value if side == "buy" else quoted.source.value
        return QuoteEvent(
            kind,
            live.order_id,
            live.pair,
            live.size,
            side=side,
            ms_left=ms_left,
            message=message,
            prices={side: pair_price(live, side)},
            base=base,
        )

    def _record(self, event: QuoteEvent) -> None:
        self.events.append(event)
        self.history.publish(event)
