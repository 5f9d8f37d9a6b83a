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
does not change the countdown.

Accept is allowed while more than ``max(0.5, typical_round_trip + 0.25)`` seconds are left (the
accept has to reach the server in time), no accept is in flight and the quote was not accepted
or refused. While an accept is in flight both sides are disabled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

from app.api import (
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    Refused,
    ServerClock,
    ServiceError,
)
from app.domain import Amount, utc_now
from app.domain.records import Order, Quote, TopOfBook
from app.services.events import Topic
from app.services.journal import OrderJournal
from app.services.log_events import EventKind, LogLevel
from app.services.session import TerminalSession
from app.services.settling import OrderSettler, Sought, Verdict

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


class AcceptClosed(Exception):
    """Accept refused locally, nothing was sent; ``reason`` says why in a trader's words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
        self.accepted_side: Side | None = None
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
        # The server stamped expiresAt about rtt/2 before now, when its clock read
        # (now - rtt/2) + offset; rtt/2 has passed since, so its clock reads now + offset.
        # expiresAt is an absolute server time: no further rtt correction applies.
        half = timedelta(seconds=round_trip / 2)
        at_receipt = (clock.now() - half + clock.offset) + half
        return cls(
            quote,
            pair,
            size,
            received_monotonic=received_monotonic,
            server_time_at_receipt=at_receipt,
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
    ) -> None:
        self.session = session
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
        self._closed = False

    # -- requests -----------------------------------------------------------------------------

    async def request(self, pair: str, size: Amount) -> LiveQuote:
        """Ask for a quote (the trader's own request: resets the requote count)."""
        self.unanswered_requotes = 0
        return await self._request(pair, size)

    async def requote(self) -> LiveQuote:
        """A fresh quote for the same pair and size as the current one."""
        if self.current is None:
            raise AcceptClosed("no quote to requote")
        return await self.request(self.current.pair, self.current.size)

    async def _request(self, pair: str, size: Amount) -> LiveQuote:
        if self.accepting:
            # Replacing the quote now would hide the accept's outcome from the trader.
            raise AcceptClosed("an accept is in flight; wait for its answer")
        client = self.session.client
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
        self._replace(live)
        self._record(QuoteEvent("requested", quote.order_id, pair, size))
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

    async def accept(self, side: Side) -> AcceptResult:
        """Take ``side`` of the current quote; AcceptClosed (nothing sent) when not allowed."""
        live = self._current()
        reason = live.closed_reason(side)
        if reason is not None:
            raise AcceptClosed(reason)
        return await self._send_accept(live, side)

    async def force_accept(self, side: Side) -> AcceptResult:
        """Send the accept whatever the local countdown says (tests, operations): the server
        decides. Still one accept at a time."""
        live = self._current()
        if live.in_flight is not None:
            raise AcceptClosed(f"an accept ({live.in_flight}) is already in flight")
        return await self._send_accept(live, side)

    def _current(self) -> LiveQuote:
        if self.current is None:
            raise AcceptClosed("no quote: request one first")
        return self.current

    async def _send_accept(self, live: LiveQuote, side: Side) -> AcceptResult:
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
            try:
                order = await client.accept_quote(live.order_id, side)
            except OutcomeUnknown as exc:
                sought = Sought.accept(live.order_id, client_order_id, sent_at)
                verdict = await OrderSettler(client).now(sought)
                if verdict.order is None:
                    return self._unknown(live, side, exc, verdict, ms_left, client_order_id)
                order = verdict.order
            except (Refused, InvalidRequest, NotFound) as exc:
                message = exc.message  # the server's words, verbatim
                if exc.status in QUOTE_ENDING_STATUSES:
                    live.refused.update({s: message for s in SIDES})
                else:
                    live.refused[side] = message
                self.journal.record_outcome(client_order_id, "rejected", detail=message)
                self._record(self._event("refused", live, side, message))
                self.session.log(
                    LogLevel.WARNING, f"accept {side} refused: {message}", EventKind.REFUSAL
                )
                return AcceptResult(
                    side, "refused", None, ms_left, message, exc.status, client_order_id
                )
            except ServiceError as exc:
                # NotSent, 401 after re-login, ...: the accept did not reach the quote.
                self.journal.record_outcome(client_order_id, "failed", detail=str(exc))
                self.session.log(
                    LogLevel.WARNING, f"accept {side} of {live.order_id} failed: {exc}"
                )
                return AcceptResult(
                    side, "failed", None, ms_left, exc.message, exc.status, client_order_id
                )
            live.accepted_side = side
            self.journal.record_order(client_order_id, order)
            self.unanswered_requotes = 0
            self._record(self._event("accepted", live, side, "", ms_left))
            total = f" for {order.result.total}" if order.result.total is not None else ""
            self.session.log(
                LogLevel.SUCCESS,
                f"accepted {side} {live.pair} {live.size}{total} — order {order.order_id}, "
                f"{ms_left} ms left",
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
        message = f"{lost.message} ({verdict.detail})"
        self.journal.record_outcome(client_order_id, "unknown", detail=message)
        self._record(self._event("unknown", live, side, message))
        self.session.log(LogLevel.WARNING, f"accept {side} of {live.order_id}: {message}")
        self.session.after_fill()
        return AcceptResult(side, "unknown", None, ms_left, message, lost.status, client_order_id)

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
                f"auto-requote stopped after {self.unanswered_requotes} quotes on "
                f"{live.pair} that were not acted on",
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
            await self._request(live.pair, live.size)
        except ServiceError as exc:
            self.session.log(LogLevel.WARNING, f"auto-requote of {live.pair} failed: {exc}")

    async def close(self) -> None:
        """Stop the desk's task (the expiry watcher and auto-requote)."""
        self._closed = True
        watcher, self._watcher = self._watcher, None
        if watcher is not None and watcher is not asyncio.current_task():
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    # -- history ------------------------------------------------------------------------------

    def _event(
        self,
        kind: Literal["accepted", "expired", "refused", "unknown"],
        live: LiveQuote,
        side: Side,
        message: str = "",
        ms_left: int | None = None,
    ) -> QuoteEvent:
        return QuoteEvent(
            kind, live.order_id, live.pair, live.size, side=side, ms_left=ms_left, message=message
        )

    def _record(self, event: QuoteEvent) -> None:
        self.events.append(event)
        self.history.publish(event)
