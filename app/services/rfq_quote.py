"""A quote as the terminal holds it (``LiveQuote``: per-side monotonic deadlines, the accept
state) and the words a trader reads about it (sides, sizes, prices in QUOTE per BASE).

Time: every side gets a *monotonic* deadline when the quote arrives, and ``remaining`` is
computed from that deadline each time it is asked — never by counting timer ticks (the
countdown survives a stalled event loop and a wrong wall clock). See ``app.services.rfq_desk``
for how the deadline is keyed to the quote's receive time and the server clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, localcontext
from typing import Literal

from app.api import ServerClock
from app.domain import Amount, AssetPair
from app.domain.display import Precision, format_number
from app.domain.money import MONEY_CONTEXT, format_trimmed
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import Order, Quote, TopOfBook

Side = Literal["buy", "sell"]
SIDES: tuple[Side, Side] = ("buy", "sell")
QuoteState = Literal["live", "amber", "closing", "expired"]

AMBER_SECONDS = 3.0
MIN_ACCEPT_MARGIN = 0.5
ACCEPT_MARGIN_EXTRA = 0.25


def quote_state(left: float, accept_margin: float) -> QuoteState:
    """A side with ``left`` seconds to its deadline: expired, closing (too little time for an
    accept to arrive), amber (about to close) or live. The desk and every frame ask this."""
    if left <= 0:
        return "expired"
    if left <= accept_margin:
        return "closing"
    if left < AMBER_SECONDS:
        return "amber"
    return "live"


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


MarkupMoment = Literal["accept", "expiry"]


@dataclass(frozen=True)
class SettledMarkup:
    """A side's markup frozen when the side's fate was settled (``moment``: the accept, or its
    expiry), against the top of book of market snapshot ``snapshot_id``; ``bps`` None when
    that snapshot had no usable book. Never recomputed against a later book."""

    bps: Decimal | None
    moment: MarkupMoment
    snapshot_id: int
    bid: Decimal | None = None
    ask: Decimal | None = None

    def value(self) -> dict[str, str | int | None]:
        """As the journal stores it (Decimals as text)."""

        def text(number: Decimal | None) -> str | None:
            return None if number is None else format(number, "f")

        return {
            "bps": text(self.bps),
            "moment": self.moment,
            "snapshot": self.snapshot_id,
            "bid": text(self.bid),
            "ask": text(self.ask),
        }


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
        #: Each side's markup once its fate is settled (``settle_markup``): shown from then on.
        self.settled_markup: dict[Side, SettledMarkup] = {}

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
        return quote_state(self.remaining(side, now), self.accept_margin)

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

    def settle_markup(
        self, side: Side, top: TopOfBook | None, moment: MarkupMoment, snapshot_id: int
    ) -> SettledMarkup | None:
        """Freeze ``side``'s markup against ``top`` (the book of that moment); only the first
        call counts — a later one changes nothing and returns None."""
        if side in self.settled_markup:
            return None
        usable = top is not None and top.ask > 0 and top.bid > 0
        bps = self.markup_bps(side, top) if top is not None and usable else None
        settled = SettledMarkup(
            bps,
            moment,
            snapshot_id,
            None if top is None else top.bid,
            None if top is None else top.ask,
        )
        self.settled_markup[side] = settled
        return settled

    def markup_bps(self, side: Side, top: TopOfBook) -> Decimal:
        """Basis points the side's price is worse for the trader than the book: buy against
        the ask, sell against the bid. The price as QUOTE per BASE, like the book's, whichever
        way the wire wrote it."""
        price = pair_price(self, side)
        with localcontext(MONEY_CONTEXT):
            if side == "buy":
                return (price - top.ask) / top.ask * 10_000
            return (top.bid - price) / top.bid * 10_000
