"""The RFQ desk: request a two-way quote, count it down, accept one side at most once.

Modules: the quote as held and its words (``LiveQuote``) are in ``app.services.rfq_quote``, the
checks in ``app.services.rfq_checks``, the ticket's state machine in ``app.services.rfq_ticket``;
the names are importable from here too.

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

Frozen markups: when a quote's fate is settled — accepted (both sides, against the book of the
market snapshot in force when the accept left), or a side expired (against the snapshot of its
expiry) — each side's markup is computed once (``LiveQuote.settle_markup``), shown from then on
instead of a figure against the live book, and kept in the journal's facts under the quote's id
(``rfq_markup_buy`` / ``rfq_markup_sell``).
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
from datetime import datetime
from decimal import Decimal
from typing import Literal

from app.api import (
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    Refused,
    ServiceError,
    TooLate,
)
from app.domain import Amount, utc_now
from app.domain.display import Precision
from app.domain.records import Order
from app.services.events import Topic
from app.services.journal import Fact, OrderJournal
from app.services.log_events import EventKind, LogLevel
from app.services.market import MarketSnapshot
from app.services.pretrade import CheckLimits
from app.services.rfq_checks import (
    RfqChecks,
    RfqMarket,
    SideCheck,
    quote_checks,
    quote_ticket,
    request_block_text,
    request_checks,
    request_ticket,
)
from app.services.rfq_quote import (
    ACCEPT_MARGIN_EXTRA,
    AMBER_SECONDS,
    MIN_ACCEPT_MARGIN,
    SIDES,
    LiveQuote,
    MarkupMoment,
    QuoteState,
    Side,
    pair_price,
    plural,
    side_name,
    side_terms,
    size_text,
    trade_of,
)
from app.services.risk import RiskGate, RiskRefused
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
from app.services.tasks import Tasks, may_start, spawn

__all__ = [
    "ACCEPT_MARGIN_EXTRA",
    "AMBER_SECONDS",
    "MIN_ACCEPT_MARGIN",
    "SIDES",
    "AcceptClosed",
    "AcceptRequest",
    "AcceptResult",
    "ChecksBlock",
    "LiveQuote",
    "QuoteEvent",
    "QuoteState",
    "RfqChecks",
    "RfqDesk",
    "RfqMarket",
    "RiskBlock",
    "Side",
    "SideCheck",
    "pair_price",
    "plural",
    "quote_checks",
    "quote_ticket",
    "request_block_text",
    "request_checks",
    "request_ticket",
    "side_name",
    "side_terms",
    "size_text",
    "trade_of",
]

log = logging.getLogger("tradeterm.services")

REQUOTE_INTERVAL = 2.0
MAX_UNANSWERED_REQUOTES = 10
#: The journal's name of a side's frozen markup (``rfq_markup_buy``, ``rfq_markup_sell``).
RFQ_MARKUP = "rfq_markup"
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


class RiskBlock(AcceptClosed):
    """An accept refused by a risk limit or the kill switch (nothing journaled or sent);
    ``limit`` names which (``app.services.risk``)."""

    def __init__(self, refused: RiskRefused) -> None:
        super().__init__(refused.message)
        self.limit = refused.limit


class ChecksBlock(AcceptClosed):
    """A request or accept stopped by a pre-trade check (nothing sent); ``checks`` are all the
    checks found, blocks and warnings."""

    def __init__(self, reason: str, found: RfqChecks) -> None:
        super().__init__(reason)
        self.checks = found


@dataclass(frozen=True)
class AcceptRequest:
    """What accepting one side of a quote sends (the quote's id and the side) and what it
    will pay and get as quoted, with the market snapshot the preview showing it was made on
    and whether its checks lifted the size limit (the override as the trader saw it)."""

    quote_id: str
    side: Side
    pay: Amount
    get: Amount
    price: Decimal  # QUOTE per BASE
    snapshot: MarketSnapshot = field(compare=False, repr=False)
    override: bool = False

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


def unknown_text(live: LiveQuote, side: Side) -> str:
    """An accept whose answer was lost, in the trader's words (no wire detail)."""
    return (
        f"{side_name(live.pair, side)} on quote {live.order_id[:8]}: the answer was lost and "
        "the order was not found yet, so it is not known whether it filled (still being looked "
        "up). Check the orders before trading again."
    )


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
        tasks: Tasks | None = None,
        risk: RiskGate | None = None,
    ) -> None:
        self.session = session
        #: The risk limits and kill switch each accept passes (None: none).
        self.risk = risk
        self._tasks = tasks  # the terminal's task owner: watchers and settlers end with it
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
        return RfqMarket(snapshot, self.session.health.current, self._limits)

    @property
    def limits(self) -> CheckLimits:
        return self._limits

    @limits.setter
    def limits(self, limits: CheckLimits) -> None:
        self._limits = limits

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
        if not self._closed and may_start(self._tasks):
            self._watcher = spawn(self._tasks, self._watch(live), f"rfq watch {live.order_id}")

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
        market snapshot with the preview's override (the facts the trader saw)."""
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
        override = override or (expect is not None and expect.override)
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
        if self.risk is not None:  # refused: nothing journaled, nothing sent
            quoted = live.quote.side(side)
            try:
                self.risk.admit_accept(
                    client_order_id, quoted.source, quoted.destination, self.session.market.snapshot
                )
            except RiskRefused as refused:
                raise RiskBlock(refused) from None
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
            sent_market = self.session.market.snapshot

            def last_moment() -> str | None:
                nonlocal ms_left, sent_market
                ms_left = int(live.remaining(side) * 1000)
                late = live.late_reason(side) if checked else None
                if late is None:
                    # it leaves now; the server-time stamp is what a later look-up reads
                    self.journal.record_sent(client_order_id, client.clock.server_now())
                    sent_market = self.session.market.snapshot  # the book it was accepted on
                return late

            try:
                order = await client.accept_quote(live.order_id, side, before_send=last_moment)
            except TooLate as late:
                self.journal.record_outcome(client_order_id, "failed", detail=f"not sent: {late}")
                self._uncount(client_order_id, "failed")
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
                self._uncount(client_order_id, "rejected")
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
                self._uncount(client_order_id, "failed")
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
            self._settle_markups(live, SIDES, "accept", sent_market)
            self.unanswered_requotes = 0
            self._record(self._event("accepted", live, side, "", ms_left))
            sentence = trade_of(live, side, order).sentence(self.precision)
            self.session.log(
                LogLevel.SUCCESS,
                f"{sentence} — RFQ order {order.order_id}, {ms_left:,} ms left",
                EventKind.FILL,
            )
            self.session.after_fill(order)
            return AcceptResult(side, "filled", order, ms_left, "", None, client_order_id)
        finally:
            live.in_flight = None

    def _uncount(self, client_order_id: str, status: str) -> None:
        """An accept refused or never sent no longer counts against the day's risk limits."""
        if self.risk is not None:
            self.risk.settled(client_order_id, status)

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
        # the wire's detail to the journal, the history and the log file; the trader's words
        # to the log line, the notice and the alert (one line: the ticket does not repeat it)
        log.info("accept on quote %s: outcome unknown (%s)", live.order_id, message)
        self.session.log(LogLevel.WARNING, unknown_text(live, side))
        self.session.after_fill()
        return AcceptResult(side, "unknown", None, ms_left, message, lost.status, client_order_id)

    def _follow_unknown(self, live: LiveQuote, side: Side, sought: Sought) -> None:
        """Keep looking the unknown accept up during the session (in the background)."""
        if self._closed or not may_start(self._tasks):
            return
        task = spawn(self._tasks, self._settle(live, side, sought), f"rfq settle {live.order_id}")
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
        # The book the accept left on is not kept past the lost answer: the fill's, now.
        self._settle_markups(live, SIDES, "accept", self.session.market.snapshot)
        self._record(self._event("accepted", live, side, "settled after its answer was lost"))
        sentence = trade_of(live, side, order).sentence(self.precision)
        self.session.log(
            LogLevel.SUCCESS,
            f"{sentence} — RFQ order {order.order_id} (settled after its answer was lost)",
            EventKind.FILL,
        )
        self.session.after_fill(order)

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
                    self._settle_markups(live, (side,), "expiry", self.session.market.snapshot)
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
        """Stop the desk's tasks (the expiry watcher and auto-requote, the settlers)."""
        self._closed = True
        watcher, self._watcher = self._watcher, None
        tasks = [t for t in (watcher, *self._settlers) if t is not None]
        self._settlers.clear()
        for task in tasks:
            if task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    # -- frozen facts -------------------------------------------------------------------------

    def _settle_markups(
        self,
        live: LiveQuote,
        sides: tuple[Side, ...],
        moment: MarkupMoment,
        snapshot: MarketSnapshot,
    ) -> None:
        """Freeze the markup of ``sides`` against ``snapshot``'s book (the accept's or the
        expiry's moment) and keep it in the journal under the quote's id: it is shown from
        then on, whatever the book does afterwards."""
        top = snapshot.top(live.pair)
        facts = []
        for side in sides:
            settled = live.settle_markup(side, top, moment, snapshot.id)
            if settled is not None:
                name = f"{RFQ_MARKUP}_{side}"
                account = self.session.client.account_id
                facts.append(Fact(live.order_id, name, settled.value(), account))
        self.journal.record_facts(facts)

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
