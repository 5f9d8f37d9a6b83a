"""Click-to-trade: what a click on a price asks of the order ticket.

A click on a bid (watchlist Bid cell, a ladder bid level) asks for a **sell** limit at that
price, a click on an ask for a **buy** limit: the trader hits the bid or lifts the offer at
the price they clicked. A double-click asks the ticket to send it as well — through the
ticket's own checks and confirmation, never around them (``OrderTicketPanel.send_now``).

The panels do not know the ticket: they put a ``TradeRequest`` on the ``TradeIntents`` of
their ``PanelContext`` and whichever ticket shares that context takes it. Prices stay the
Decimals of the book they were clicked on: the price is the one shown under the pointer when
the button went down (the ladder notes what each row painted), never what the row holds by the
time the button comes up.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from PySide6.QtCore import QObject, Signal

from app.domain.pair_terms import Side


@dataclass(frozen=True)
class TradeRequest:
    """A limit order to put in the ticket: ``side`` of ``pair``'s base at ``price`` (QUOTE
    per BASE); ``send``: go on to send it (checks and confirmation first); ``amount``: in the
    asset the order sells; None: the ticket's amount if it is of that asset, else the
    asset's default size (the first size preset)."""

    pair: str
    side: Side
    price: Decimal
    send: bool = False
    amount: Decimal | None = None


def side_of_click(book_side: str) -> Side:
    """A bid clicked sells into it; an ask clicked buys from it."""
    return "sell" if book_side == "bid" else "buy"


class TradeIntents(QObject):
    """The trader's click-to-trade requests, for the ticket that shares the context."""

    requested = Signal(object)  # TradeRequest

    def request(self, request: TradeRequest) -> None:
        self.requested.emit(request)
