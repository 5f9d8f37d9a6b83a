"""The order ticket's values: what the trader typed (``TicketFields``), the order it means
(``OrderIntent``: pair, side, an amount *with its asset*, type, limit, end, client id) and what
the terminal predicts about it on one market (``Preview``). No I/O, no Qt.

A preview is computed once per change (an edit, a market snapshot, an estimate, the health)
and carries everything a screen shows and everything Send needs: the checks, the what-if,
whether a limit fills now, the estimate, and the exact ``OrderRequest`` with its clientOrderId.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import Enum

from app.domain.display import Precision
from app.domain.money import Amount, AssetPair, Price
from app.domain.order_request import OrderRequest, OrderType
from app.domain.pair_terms import PairSide, Side
from app.domain.records import TopOfBook
from app.services.estimates import EstimateResult
from app.services.market import MarketSnapshot
from app.services.pretrade import Check, CheckLimits, WhatIf, checks, fills_now, what_if
from app.services.ticket import TicketError, TicketForm, TicketInput


class TicketState(Enum):
    """Where the ticket's one order is: being edited, shown for confirmation, on its way, or
    answered. ``UNKNOWN`` may still become ``SETTLED`` or ``REFUSED`` when the settler finds
    the order (an unknown outcome is never called failed)."""

    EDITING = "editing"
    CONFIRMING = "confirming"
    SENDING = "sending"
    SETTLED = "settled"
    REFUSED = "refused"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class TicketFields:
    """The ticket's inputs as typed: the text stays as the trader wrote it (a wrong number
    stays on screen to be fixed). ``end_at`` is the end shown; it applies when ``end_enabled``
    and the order is a limit."""

    pair: str = ""
    side: Side = "buy"
    size: str = ""
    order_type: OrderType = "market"
    limit: str = ""
    end_enabled: bool = True
    end_at: datetime | None = None
    override: bool = False
    #: The asset the amount is in: the pair's base or quote once the trader picked one (the
    #: units toggle, remembered per pair); "" means the asset the order sells.
    amount_asset: str = ""
    #: Hit bid / lift offer: a limit at the touch plus the slippage collar that ends within
    #: seconds (fills now or expires); any edit of the order makes it an ordinary ticket.
    marketable: bool = False

    @property
    def amount_in(self) -> str:
        """The asset the typed amount is in ("" before a pair is chosen)."""
        pair_side = self.pair_side
        if pair_side is None:
            return ""
        if self.amount_asset in (pair_side.pair.base, pair_side.pair.quote):
            return self.amount_asset
        return pair_side.source

    @property
    def pair_side(self) -> PairSide | None:
        """The pair and side (None before a pair is chosen)."""
        if self.pair.count("/") != 1:
            return None
        return PairSide(AssetPair.parse(self.pair), self.side)

    def form(self) -> TicketForm:
        end_at = self.end_at if self.order_type == "limit" and self.end_enabled else None
        pair_side = self.pair_side
        if pair_side is None:
            return TicketForm("", "", self.size, self.order_type, self.limit)
        return TicketForm(
            pair_side.source,
            pair_side.destination,
            self.size,
            self.order_type,
            self.limit,
            end_at,
            pair_side.pair.base,
        )


@dataclass(frozen=True)
class OrderIntent:
    """One order as the trader means it: ``side`` ``pair``'s base, paying ``amount`` (the
    asset the order sells: QUOTE for a buy, BASE for a sell), market or at ``limit`` (in the
    trader's units), resting until ``end_at``, under ``client_order_id``."""

    pair: AssetPair
    side: Side
    amount: Amount
    order_type: OrderType
    limit: Price | None
    end_at: datetime | None
    client_order_id: str

    @property
    def pair_side(self) -> PairSide:
        return PairSide(self.pair, self.side)

    @property
    def ticket(self) -> TicketInput:
        """The same order in the wire's terms (sell ``size`` of ``source``)."""
        pair_side = self.pair_side
        return TicketInput(
            pair_side.source,
            pair_side.destination,
            self.amount.value,
            self.order_type,
            self.limit,
            self.end_at,
        )

    @property
    def request(self) -> OrderRequest:
        """Exactly what Send asks of the service (journaled and sent as it is)."""
        return self.ticket.request(self.client_order_id)

    @classmethod
    def of(cls, ticket: TicketInput, pair_side: PairSide, client_order_id: str) -> OrderIntent:
        return cls(
            pair_side.pair,
            pair_side.side,
            Amount(ticket.size, ticket.source),
            ticket.order_type,
            ticket.limit,
            ticket.end_at,
            client_order_id,
        )


@dataclass(frozen=True)
class Conversion:
    """An amount typed in the asset the order buys (``typed``) and the size sent in the asset
    it sells (``sent``): at the limit (exact terms) or, for a market order, at the touch when
    the ticket was last edited (``approximate``: the fill price decides what ``typed`` really
    becomes; ``sent`` is exactly what leaves)."""

    typed: Amount
    sent: Amount
    price: Decimal
    approximate: bool


@dataclass(frozen=True, eq=False)
class Preview:
    """The ticket on one market: what the screen shows and what Send would send.

    ``number`` grows by one per preview of a ticket; ``snapshot`` is the market it was computed
    from (its ``id`` is what a send is checked against). ``intent`` is None when the fields do
    not make an order (``error`` says why). ``blocked`` is why no order can be sent now
    (offline, login expired), ``busy`` that the desk is sending another order."""

    number: int
    state: TicketState
    fields: TicketFields
    snapshot: MarketSnapshot
    intent: OrderIntent | None = None
    error: TicketError | None = None
    estimate: EstimateResult | None = None
    checks: tuple[Check, ...] = ()
    what_if: WhatIf | None = None
    fills: bool | None = None
    blocked: str | None = None
    busy: bool = False
    #: The amount as typed when it is in the asset bought, and how it became the size sent.
    conversion: Conversion | None = None
    #: The ticket's one line about the last edit (an amount converted, a limit re-seeded):
    #: (level, text), or None; the next edit replaces it.
    note: tuple[str, str] | None = None

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.id

    @property
    def request(self) -> OrderRequest | None:
        return None if self.intent is None else self.intent.request

    @property
    def ticket(self) -> TicketInput | None:
        return None if self.intent is None else self.intent.ticket

    @property
    def tops(self) -> Mapping[str, TopOfBook]:
        return self.snapshot.tops

    @property
    def rests(self) -> bool:
        """A limit order that would not fill now: it rests on the book."""
        return self.fills is False

    @property
    def blocks(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if check.severity == "block")

    @property
    def fat_finger(self) -> bool:
        """The size limit is in play (blocked, or overridden): the override is offered."""
        return any(check.code == "fat_finger" for check in self.checks)

    def changes_from(self, shown: Preview) -> str | None:
        """What differs from ``shown`` that the trader must see before it is sent, in words;
        None when this preview sends what ``shown`` showed. The request must be the same to
        the byte (the client id too: an unknown that settled meanwhile gives the ticket a new
        one, and a new id would be a second order), and no check may have appeared (checks
        exist to be read before Send; one that went away asks nothing more of the trader).
        What the market will do with the order is not a difference: whether a limit fills at
        once, the indicative price, the numbers inside a check's words and the snapshot id move
        with every tick, and the market moves again while the order travels anyway; a
        confirmation that any tick voided could never be answered."""
        if self.request != shown.request:
            return "the order changed"
        before = {(check.code, check.severity) for check in shown.checks}
        added = [c.message for c in self.checks if (c.code, c.severity) not in before]
        if added:
            return f"a new check ({'; '.join(added)})"
        return None

    @property
    def sendable(self) -> bool:
        """Send is offered: nothing in flight or being confirmed, online, the desk free."""
        return (
            self.state not in (TicketState.SENDING, TicketState.CONFIRMING)
            and self.blocked is None
            and not self.busy
        )


def predict(
    intent: OrderIntent,
    snapshot: MarketSnapshot,
    limits: CheckLimits,
    estimate: EstimateResult | None,
    *,
    override: bool,
    precision: Precision | None = None,
    limit_switched: bool = False,
) -> tuple[tuple[Check, ...], WhatIf | None, bool | None]:
    """The checks, what-if and fills-now of ``intent`` on ``snapshot``: run once per preview
    (the send uses these, it does not check again on another copy of the market).
    ``limit_switched``: the limit was typed before a side switch, so one far from the touch
    blocks until the trader edits it."""
    ticket = intent.ticket
    fills = fills_now(ticket, snapshot.tops) if ticket.order_type == "limit" else None
    found = checks(
        ticket,
        snapshot.balances,
        snapshot.tops,
        limits,
        override=override,
        precision=precision,
        limit_switched=limit_switched,
    )
    what = None
    if snapshot.balances is not None:
        received = None if estimate is None else estimate.estimate
        what = what_if(ticket, snapshot.balances, received, rests=fills is False)
    return tuple(found), what, fills
