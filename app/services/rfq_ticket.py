"""The RFQ ticket's truth, without Qt: what the trader entered, the quote on screen, its checks,
markup and what-if, and what an accept would send — one state, one preview per change.

Data flow::

    entry (pair, size, units) ─ start_request ─▶ RfqIntent ─▶ desk.request ─▶ quote
    quote + market snapshot (session.market) + health + limits ─▶ RfqPreview (published)
    Alt+B / Alt+S ─ start_accept ─▶ the preview's AcceptRequest ─▶ desk.accept
        ─▶ journal (intent, sent, outcome) ─▶ AcceptResult ─▶ the next preview's message

States (``RfqState``)::

    EDITING ──request──▶ REQUESTING ──quote──▶ QUOTED ──accept──▶ ACCEPTING ──▶ ACCEPTED
       ▲                     │ (failed: back)     │ deadline             ├──▶ REFUSED
       └─────────────────────┘                    ▼                      ├──▶ UNKNOWN
                                               EXPIRED                   └──▶ QUOTED (not sent,
                                                                              did not go through)

REFUSED is a refusal that ends the quote (both sides: unknown, already taken, expired); a
refusal of one side only (funds) leaves the other side QUOTED. A quote that is over (ACCEPTED,
REFUSED, EXPIRED, UNKNOWN) stays on screen; a new request may be made from any state but
REQUESTING and ACCEPTING. UNKNOWN becomes ACCEPTED or REFUSED when the desk finds the order
(``desk.history``); until then neither side is offered.

Time: the preview carries each side's monotonic deadline (from ``LiveQuote``: the server's
expiry, corrected for the clock offset and the round trip); ``RfqPreview.clock(side, now)`` says
what a frame shows at ``now`` — remaining, state, and whether the accept is open — so a
countdown is computed from the deadline every frame and never counted in ticks. ``now`` is the
desk's injected monotonic clock (tests move it by hand).

One accept at a time: ``start_accept`` decides synchronously (a second Alt+B while the first is
on its way finds ACCEPTING and sends nothing) and hands back the coroutine that sends exactly
the preview's ``AcceptRequest``; the desk sends it only if its quote is still that quote, and
re-checks it on the preview's market snapshot.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, localcontext
from types import MappingProxyType
from typing import Any, Literal

from app.domain import Amount, AssetPair, ParseError, parse_decimal
from app.domain.display import Precision, format_number
from app.domain.money import MONEY_CONTEXT, divide
from app.domain.records import Estimate
from app.services.events import Topic
from app.services.health import HealthState
from app.services.log_events import LogLevel
from app.services.market import MarketSnapshot
from app.services.pretrade import WhatIf, what_if
from app.services.rfq_checks import (
    RfqChecks,
    SideCheck,
    quote_checks,
    quote_ticket,
    request_block_text,
    request_checks,
)
from app.services.rfq_desk import (
    AcceptClosed,
    AcceptRequest,
    AcceptResult,
    ChecksBlock,
    QuoteEvent,
    RfqDesk,
    unknown_text,
)
from app.services.rfq_quote import (
    SIDES,
    LiveQuote,
    QuoteState,
    Side,
    pair_price,
    quote_state,
    side_name,
    side_terms,
    size_text,
    trade_of,
)

log = logging.getLogger("tradeterm.services")

#: The override control's words (the message that asks for it quotes them).
OVERRIDE_TEXT = "Override the size limit for this request"
Field = Literal["pair", "size"]


class RfqState(enum.Enum):
    EDITING = "editing"
    REQUESTING = "requesting"
    QUOTED = "quoted"
    ACCEPTING = "accepting"
    ACCEPTED = "accepted"
    REFUSED = "refused"
    EXPIRED = "expired"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class RfqIntent:
    """A request for a two-way quote (the service always quotes both sides): the pair and
    the size with its asset (the pair's base or quote), and whether the trader overrode the
    size limit for it."""

    pair: str
    size: Amount
    override: bool = False

    @property
    def words(self) -> str:
        return f"{self.pair} {size_text(self.size)}"


@dataclass(frozen=True)
class Message:
    """The line under the quote: ``level`` "", "info", "warning", "error" or "fill";
    ``detail`` is for whoever looks into it (a tooltip), never the notice."""

    level: str = ""
    text: str = ""
    detail: str = ""


@dataclass(frozen=True)
class SideClock:
    """One side at one moment: what its countdown and accept button show."""

    remaining: float
    total: float
    state: QuoteState
    word: str | None  # "accepted", "not taken", "refused", "unknown" (the bar shows a word)
    can_accept: bool


@dataclass(frozen=True)
class SidePreview:
    """One side of the quote on screen, in the trader's words and as numbers."""

    side: Side
    terms: str
    price: Decimal  # QUOTE per BASE
    #: Against the book's ask (buy) / bid (sell); None: no book. Once the side is accepted or
    #: expired, the markup of that moment (``LiveQuote.settled_markup``), not the live book's.
    markup_bps: Decimal | None
    #: "accept" or "expiry" once the markup is frozen at that moment (None: against the book).
    markup_moment: str | None
    checks: tuple[SideCheck, ...]
    blocked: str | None  # why a check stops the accept (None: it does not)
    what_if: WhatIf | None  # balances after taking this side (None: no balances yet)
    accept: AcceptRequest  # exactly what accepting this side sends
    deadline: float  # monotonic
    total: float  # seconds the side had when it arrived
    word: str | None  # the side is over for a reason other than time


@dataclass(frozen=True)
class RfqPreview:
    """Everything the ticket shows, computed from one market snapshot (``snapshot_id``).

    Every field is a value fixed when the preview was made, except ``live``: the desk's own
    quote, kept for its identity and its (immutable) ``quote`` record. ``clock`` reads its
    ``in_flight`` on purpose: an accept sent from another window, or forced, is on no preview
    of this ticket, and no side may look open while it is on its way."""

    state: RfqState
    snapshot_id: int
    live: LiveQuote | None
    sides: Mapping[Side, SidePreview]
    message: Message
    offline: str | None  # why nothing may be sent now
    quote_label: str
    override_shown: bool
    override: bool
    can_request: bool
    can_requote: bool
    accept_margin: float
    focus: Field | None = None  # where the cursor should go after a refusal of the entry

    @property
    def busy(self) -> bool:
        return self.state in (RfqState.REQUESTING, RfqState.ACCEPTING) or self.offline is not None

    def clock(self, side: Side, now: float) -> SideClock:
        """What ``side`` shows at monotonic ``now`` (each frame asks; nothing is counted)."""
        view = self.sides[side]
        left = view.deadline - now
        state = quote_state(left, self.accept_margin)
        open_ = (
            view.word is None
            and state not in ("expired", "closing")
            and view.blocked is None
            and not self.busy
            and (self.live is None or self.live.in_flight is None)  # e.g. a forced accept
        )
        return SideClock(left, view.total, state, view.word, open_)


def unit_words(pair_text: str, in_quote: bool) -> tuple[str, str]:
    """The unit button's text and tooltip: the size's asset (``base``/``quote`` before a pair
    is readable)."""
    pair = parse_pair(pair_text)
    if pair is None:
        text = "quote" if in_quote else "base"
    else:
        text = pair.quote if in_quote else pair.base
    tip = (
        "The size is in the pair's quote asset; click for the base asset"
        if in_quote
        else "The size is in the pair's base asset; click for the quote asset"
    )
    return text, tip


def parse_pair(text: str) -> AssetPair | None:
    try:
        return AssetPair.parse(text.strip().upper(), "pair")
    except ParseError:
        return None


def describe(exc: BaseException) -> str:
    """One line for the trader: the client's errors already read well (``HTTP 400: ...``)."""
    return str(exc).strip() or type(exc).__name__


def fill_text(live: LiveQuote, result: AcceptResult, precision: Precision) -> str:
    """The accept's result as a fill: ``Trade.sentence`` after "Filled:", the order and the
    milliseconds that were left."""
    sentence = trade_of(live, result.side, result.order).sentence(precision)
    order_id = result.order.order_id if result.order is not None else live.order_id
    return (
        f"Filled: {sentence[:1].lower()}{sentence[1:]} — order {order_id} "
        f"({result.ms_left:,} ms left)"
    )


def settled_text(live: LiveQuote, side: Side) -> str:
    """An unknown accept found filled by the desk's look-ups."""
    return (
        f"Filled: {side_name(live.pair, side)} on quote {live.order_id[:8]} — found on the "
        "server after its answer was lost"
    )


def _side_word(live: LiveQuote, side: Side) -> str | None:
    if live.accepted_side is not None:
        if live.outcome_unknown:
            return "unknown"  # neither side claims what is not known
        return "accepted" if live.accepted_side == side else "not taken"
    return "refused" if side in live.refused else None


@dataclass
class _Entry:
    """What the trader is typing: the units, whether the pair was picked by hand, whether the
    last request was blocked by a check, the override."""

    in_quote: bool = False
    pair_pinned: bool = False
    blocked: bool = False
    override: bool = False


class RfqTicket:
    """The RFQ ticket of one window over the session's ``RfqDesk``.

    Inputs: ``set_units``, ``pick_pair``, ``entry_changed``, ``set_override``,
    ``start_request``, ``start_requote``, ``start_accept``, ``refresh`` (limits changed).
    Output: ``previews`` (one ``RfqPreview`` per change; ``preview`` is the latest). A fill,
    a lost answer and its settling are told by the desk's log line (log, notice and desktop
    alert at once), not again here: one event, one line."""

    def __init__(
        self,
        desk: RfqDesk,
        precision: Precision,
        *,
        clock_monotonic: Callable[[], float] | None = None,
    ) -> None:
        self.desk = desk
        self.precision = precision
        #: The desk's clock unless told otherwise: the deadlines are on it.
        self._monotonic: Callable[[], float] = clock_monotonic or desk.monotonic
        self.previews: Topic[RfqPreview] = Topic("rfq ticket")
        self.entry = _Entry()
        self.live: LiveQuote | None = desk.current
        self._snapshot: MarketSnapshot = desk.session.market.snapshot
        self._requesting = False
        self._accepting: Side | None = None
        self._message = Message()
        self._focus: Field | None = None
        self._closed = False
        #: The last accept's answer (the trader reads it in the message; tests read it too).
        self.last_result: AcceptResult | None = None
        #: The quote of an accept whose answer was lost, while it is unknown: only that quote's
        #: events settle it (a later quote's fill must not be taken for it).
        self._unknown: LiveQuote | None = None
        self.preview = self._make()
        self._unsubscribe = [
            desk.quotes.subscribe(self._on_quote),
            desk.history.subscribe(self._on_history),
            desk.session.market.changed.subscribe(self._on_market),
            desk.session.health.changes.subscribe(self._on_health),
        ]

    def close(self) -> None:
        """Stop following the desk and the market (the ticket's window went)."""
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    def now(self) -> float:
        return self._monotonic()

    # -- state ------------------------------------------------------------------------------

    @property
    def requesting(self) -> bool:
        return self._requesting

    @property
    def accepting(self) -> Side | None:
        return self._accepting

    def state(self, now: float | None = None) -> RfqState:
        """The ticket's state at monotonic ``now`` (default: the clock's now)."""
        if self._requesting:
            return RfqState.REQUESTING
        if self._accepting is not None:
            return RfqState.ACCEPTING
        live = self.live
        if live is None:
            return RfqState.EDITING
        if live.accepted_side is not None:
            return RfqState.UNKNOWN if live.outcome_unknown else RfqState.ACCEPTED
        if all(side in live.refused for side in SIDES):
            return RfqState.REFUSED
        at = self._monotonic() if now is None else now
        if all(side in live.refused or live.remaining(side, at) <= 0 for side in SIDES):
            return RfqState.EXPIRED
        return RfqState.QUOTED

    def _override(self) -> bool:
        return self.entry.override or (self.live is not None and self.live.override)

    # -- the preview ------------------------------------------------------------------------

    def _make(self) -> RfqPreview:
        market = self.desk.market_at(self._snapshot)
        offline = market.offline_reason()
        """The preview of the ticket as it is (reads the ticket, changes nothing)."""
        live = self.live
        found = RfqChecks()
        if live is not None and live.accepted_side is None:
            # The desk's rules in the window's precision (it may know more assets).
            override = self._override()
            found = quote_checks(live, market, override=override, precision=self.precision)
        # The override is offered only while the size limit concerns the entry or the quote;
        # not offered, it changed none of the findings above, and it lapses (``_publish``).
        override_shown = self.entry.blocked or found.size_limited
        entry_override = self.entry.override and override_shown
        checked_override = entry_override or (live is not None and live.override)
        sides: dict[Side, SidePreview] = {}
        label = ""
        margin = 0.0
        if live is not None:
            margin = live.accept_margin
            label = f"Quote {live.order_id[:8]} · {live.pair} · {size_text(live.size)}"
            if offline is not None:
                label += " · OFFLINE: shown as received, accepting is off"
            sides = {side: self._side(live, side, found, checked_override) for side in SIDES}
        state = self.state()
        idle = state not in (RfqState.REQUESTING, RfqState.ACCEPTING)
        return RfqPreview(
            state=state,
            snapshot_id=self._snapshot.id,
            live=live,
            sides=MappingProxyType(sides),
            message=self._message,
            offline=offline,
            quote_label=label,
            override_shown=override_shown,
            override=entry_override,
            can_request=idle and offline is None,
            can_requote=idle and offline is None and live is not None,
            accept_margin=margin,
            focus=self._focus,
        )

    def _side(self, live: LiveQuote, side: Side, found: RfqChecks, override: bool) -> SidePreview:
        quoted = live.quote.side(side)
        price = pair_price(live, side)
        top = self._snapshot.top(live.pair)
        settled = live.settled_markup.get(side)  # accepted or expired: frozen, never recomputed
        markup = (
            settled.bps
            if settled is not None
            else live.markup_bps(side, top)
            if top is not None and top.ask > 0 and top.bid > 0
            else None
        )
        balances = self._snapshot.balances
        after = None
        if balances is not None:
            estimate = Estimate(quoted.source, quoted.destination, quoted.price)
            after = what_if(quote_ticket(live, side), balances, estimate)
        request = AcceptRequest(
            live.order_id, side, quoted.source, quoted.destination, price, self._snapshot, override
        )
        return SidePreview(
            side=side,
            terms=side_terms(live, side, self.precision),
            price=price,
            markup_bps=markup,
            markup_moment=None if settled is None else settled.moment,
            checks=tuple(found.of(side)),
            blocked=found.reason(side),
            what_if=after,
            accept=request,
            deadline=live.deadlines[side],
            total=live.deadlines[side] - live.received_monotonic,
            word=_side_word(live, side),
        )

    def _publish(self) -> None:
        if self._closed:
            return
        self.preview = self._make()
        if not self.preview.override_shown:
            self.entry.override = False  # offered no more: a later size limit asks afresh
        self._focus = None  # a focus request is for the preview that carried it
        self.previews.publish(self.preview)

    def refresh(self) -> None:
        """Something the checks read outside the market changed (the limits): preview again."""
        self._publish()

    def failed(self, what: str, exc: BaseException) -> None:
        """A task of the ticket's window failed unexpectedly: said in the message, which stays
        until something else is said (a new market snapshot does not wipe it)."""
        self._say("error", f"{what}: {describe(exc)}", repr(exc))

    def _say(self, level: str, text: str, detail: str = "", focus: Field | None = None) -> None:
        self._message = Message(level, text, detail)
        self._focus = focus
        self._publish()

    # -- what the desk and the market say ---------------------------------------------------

    def _on_market(self, snapshot: MarketSnapshot) -> None:
        self._snapshot = snapshot
        self._publish()

    def _on_health(self, _: HealthState) -> None:
        self._publish()

    def _on_quote(self, live: LiveQuote) -> None:
        self.live = live
        self.entry.blocked = False
        self._message = Message()
        self._publish()

    def _on_history(self, event: QuoteEvent) -> None:
        lost = self._unknown
        if lost is not None and event.quote_id == lost.order_id and event.side is not None:
            self._settle(lost, event)
        elif event.kind == "refused" and event.quote_id == self._live_id():
            # Also a forced accept's refusal, which this ticket did not send itself.
            self._message = Message("error", f"Refused by the service: {event.message}")
        self._publish()

    def _live_id(self) -> str | None:
        return None if self.live is None else self.live.order_id

    def _settle(self, lost: LiveQuote, event: QuoteEvent) -> None:
        """The desk found the order of an accept whose answer was lost (said even when a
        newer quote is on screen: the trader was told it was unknown)."""
        result = self.last_result
        assert result is not None and event.side is not None
        if event.kind == "accepted":
            self._unknown = None
            self.last_result = replace(result, status="filled", message=event.message)
            text = settled_text(lost, event.side)
            self._message = Message("fill", text)
        elif event.kind == "refused":
            self._unknown = None
            self.last_result = replace(result, status="refused", message=event.message)
            self._message = Message("error", f"Refused by the service: {event.message}")

    # -- the entry --------------------------------------------------------------------------

    @property
    def follows_selection(self) -> bool:
        """The pair follows the terminal's selection until the trader picks or types one."""
        return not self.entry.pair_pinned

    def pick_pair(self) -> None:
        """The trader picked or typed a pair: it no longer follows the selection."""
        self.entry.pair_pinned = True
        self.entry_changed()

    def entry_changed(self) -> None:
        """A new pair or size is a new request: an override given for the old one lapses (a
        quote already received keeps its own)."""
        self.entry.blocked = False
        self.entry.override = False
        self._publish()

    def set_override(self, on: bool) -> None:
        self.entry.override = on
        self._publish()

    def set_units(self, in_quote: bool, pair_text: str, size: str) -> str:
        """The size's asset switched between the pair's base and quote. A size already typed
        is converted at the mid of the book (rounded half-even to the new asset's decimals) and
        said so, or cleared and said why (no pair, no price, not a number, under the new asset's
        smallest unit): its digits are never kept in the other asset. Returns the size field's
        new text."""
        if in_quote == self.entry.in_quote:
            return size
        self.entry.in_quote = in_quote
        pair = parse_pair(pair_text)
        text = size.strip().replace(",", "").replace("_", "")
        if not text:
            self._publish()
            return size
        if pair is None:
            self._say("warning", "The size was cleared (no pair to convert it in): choose a pair")
            return ""
        old, new = (pair.quote, pair.base) if not in_quote else (pair.base, pair.quote)
        top = self._snapshot.top(str(pair))
        try:
            value = parse_decimal(text, "size")
        except ParseError:
            value = None
        if value is None or value <= 0 or top is None or top.bid <= 0 or top.ask <= 0:
            why = "no price to convert it" if value is not None else "it was not a number"
            self._say("warning", f"The size was cleared ({why}): enter it in {new}")
            return ""
        mid = top.mid
        with localcontext(MONEY_CONTEXT):
            converted = value * mid if in_quote else divide(value, mid)
        places = self.precision.asset(new)
        shown = format_number(converted, places, grouping=False)
        if Decimal(shown).is_zero():  # under the asset's smallest unit: not a size to send
            smallest = format_number(Decimal(1).scaleb(-places), places)
            self._say(
                "warning",
                f"The size was cleared ({size_text(Amount(value, old))} is less than "
                f"{smallest} {new}): enter it in {new}",
            )
            return ""
        self._say(
            "info",
            f"Size converted at the mid {self.precision.price_text(mid, str(pair))}: "
            f"{size_text(Amount(value, old))} ≈ {format_number(converted, places)} {new}",
        )
        return shown

    def _entered(self, pair_text: str, size: str) -> RfqIntent | None:
        """The intent typed, or None after saying what is wrong (the values stay)."""
        pair = parse_pair(pair_text)
        if pair is None:
            self._say(
                "error", f"Choose a pair such as BTC/USD (got {pair_text.strip()!r})", focus="pair"
            )
            return None
        text = size.strip().replace(",", "").replace("_", "")
        if not text:
            self._say("error", "Enter a size", focus="size")
            return None
        try:
            value = parse_decimal(text, "size")
        except ParseError:
            self._say(
                "error",
                f"The size must be a number such as 0.5 (got {size.strip()!r})",
                focus="size",
            )
            return None
        if value <= 0:
            self._say("error", "The size must be greater than zero", focus="size")
            return None
        asset = pair.quote if self.entry.in_quote else pair.base
        return RfqIntent(str(pair), Amount(value, asset), self.entry.override)

    # -- requests ---------------------------------------------------------------------------

    def start_request(self, pair_text: str, size: str) -> Coroutine[Any, Any, None] | None:
        """Request a quote for what is entered (Request, Enter in the size field): the
        coroutine that asks, or None when nothing is to be sent (the message says why)."""
        if self._requesting or self._accepting is not None:
            return None
        intent = self._entered(pair_text, size)
        if intent is None:
            return None
        market = self.desk.market_at(self._snapshot)
        offline = market.offline_reason()
        if offline is not None:
            self._say("warning", f"Not requested: {offline}. Requests resume when it is back.")
            return None
        found = request_checks(
            intent.pair, intent.size, market, override=intent.override, precision=self.precision
        )
        if found.blocks():
            self.entry.blocked = True
            reason = request_block_text(intent.size, found, market, self.precision)
            self._say("error", f"Not requested: {reason}. Tick “{OVERRIDE_TEXT}” to ask anyway.")
            return None
        notes = [check.text for check in found.warnings()]
        request = self.desk.request(intent.pair, intent.size, override=intent.override)
        return self._begin_request(request, intent.words, notes)

    def start_requote(self) -> Coroutine[Any, Any, None] | None:
        """A fresh quote for the pair and size of the quote on screen."""
        live = self.live
        if self._requesting or self._accepting is not None or live is None:
            return None
        offline = self.desk.market_at(self._snapshot).offline_reason()
        if offline is not None:
            self._say("warning", f"Not requested: {offline}. Requests resume when it is back.")
            return None
        return self._begin_request(self.desk.requote(), f"{live.pair} {size_text(live.size)}")

    def _begin_request(
        self, request: Coroutine[Any, Any, LiveQuote], what: str, notes: list[str] | None = None
    ) -> Coroutine[Any, Any, None]:
        extra = "".join(f"\n{note}" for note in notes or [])
        self._requesting = True
        self._say("warning" if notes else "info", f"Requesting a quote for {what}…{extra}")
        return self._request(request, what)

    async def _request(self, request: Coroutine[Any, Any, LiveQuote], what: str) -> None:
        try:
            await request
        except ChecksBlock as exc:  # the market moved past the limit since the preview
            self.entry.blocked = True
            self._message = Message(
                "error", f"Not requested: {exc.reason}. Tick “{OVERRIDE_TEXT}” to ask anyway."
            )
        except AcceptClosed as exc:
            self._message = Message("warning", f"No quote requested: {exc.reason}")
        except ParseError as exc:
            self._message = Message("error", f"No quote for {what}: {exc}")
        except Exception as exc:  # the client's typed errors, and anything unforeseen
            log.info("RFQ request for %s failed", what, exc_info=exc)
            self._message = Message("error", f"No quote for {what}: {describe(exc)}")
            self.desk.session.log(
                LogLevel.WARNING, f"RFQ request for {what} failed: {describe(exc)}"
            )
        finally:
            self._requesting = False
        self._publish()

    # -- accept -----------------------------------------------------------------------------

    def start_accept(self, side: Side) -> Coroutine[Any, Any, None] | None:
        """Accept ``side`` of the quote on screen (buttons, Alt+B / Alt+S): the coroutine that
        sends the preview's ``AcceptRequest``, or None when nothing is to be sent (the message
        says why). ACCEPTING is entered here, before anything is sent: a second press finds it."""
        if self._accepting is not None:
            self._say("warning", f"An accept ({self._accepting}) is already in flight")
            return None
        if self._requesting:
            self._say("warning", "A new quote is on its way; accept that one")
            return None
        live = self.live
        if live is None or self.desk.current is not live:
            self._say("warning", "No quote to accept: request one first")
            return None
        self._publish()  # the checks on the market as it is now
        preview = self.preview
        if preview.offline is not None:
            self._say("warning", f"Not sent: {preview.offline}. Accepting resumes when it is back.")
            return None
        shown = preview.sides[side]
        reason = shown.blocked or live.closed_reason(side, self._monotonic())
        if reason is not None:
            self._say("warning", f"Not sent: {reason}")
            return None
        self._accepting = side
        self._publish()
        return self._accept(live, shown.accept)

    async def _accept(self, live: LiveQuote, request: AcceptRequest) -> None:
        result: AcceptResult | None = None
        try:
            # The override as previewed (in ``request``), not as the check box is by now.
            result = await self.desk.accept(request.side, expect=request)
        except AcceptClosed as exc:
            self._message = Message("warning", f"Not sent: {exc.reason}")
        except Exception as exc:
            log.warning("RFQ accept %s failed", request.side, exc_info=exc)
            self._message = Message("error", f"The accept failed: {describe(exc)}")
        finally:
            self._accepting = None
        if result is not None:
            self._result(live, result)
        self._publish()

    def _result(self, live: LiveQuote, result: AcceptResult) -> None:
        self.last_result = result
        self._unknown = live if result.status == "unknown" else None
        if result.status == "filled":
            text = fill_text(live, result, self.precision)
            self._message = Message("fill", text)
        elif result.status == "refused":
            self._message = Message("error", f"Refused by the service: {result.message}")
        elif result.status == "unknown":
            text = unknown_text(live, result.side)
            self._message = Message("error", text, result.message)
        else:
            name = side_name(live.pair, result.side)
            self._message = Message("error", f"{name} did not go through: {result.message}")
