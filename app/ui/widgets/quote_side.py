"""One side of a two-way RFQ quote: price, what is paid and what is received, the markup against
the book, a countdown, and the accept button (``&Buy …`` / ``&Sell …``, so Alt+B / Alt+S).

The accept button carries the dynamic property ``side`` ("buy" / "sell"): the theme's style
sheet paints it in that theme's bid blue or ask orange, and a theme switch repaints it."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from PySide6.QtWidgets import QGroupBox, QLabel, QPushButton, QVBoxLayout, QWidget

from app.domain import Amount
from app.domain.display import DASH, Precision, decimals_of, format_number
from app.domain.records import QuoteSide
from app.ui.widgets.countdown import CountdownBar

SideName = Literal["buy", "sell"]
#: The book price each side's markup is measured against.
BOOK_SIDE = {"buy": "ask", "sell": "bid"}
PRICE_SCALE = 1.5


def exact_amount(amount: Amount, precision: Precision) -> str:
    """``1,234.50 USD``: the asset's display decimals, more if the amount has more — what is
    paid or received is never rounded on screen."""
    places = max(precision.asset(amount.asset), decimals_of(amount.value))
    return f"{format_number(amount.value, places)} {amount.asset}"


class QuoteSideBox(QGroupBox):
    """Object names ``rfq<Side>Price``, ``…Pay``, ``…Get``, ``…Markup``, ``…Countdown`` and
    ``rfqAccept<Side>`` (``<Side>`` is Buy or Sell)."""

    def __init__(self, side: SideName, parent: QWidget | None = None) -> None:
        name = side.capitalize()
        super().__init__(name, parent)
        self.side = side
        self.name = name
        self.setObjectName(f"rfq{name}Side")
        self.price = QLabel(DASH, self)
        font = self.price.font()
        font.setPointSizeF(font.pointSizeF() * PRICE_SCALE)
        font.setBold(True)
        self.price.setFont(font)
        self.pay, self.get, self.markup = QLabel(self), QLabel(self), QLabel(self)
        self.countdown = CountdownBar(self)
        self.countdown.setAccessibleName(f"{name} side time left")
        self.accept = QPushButton(f"&{name}", self)
        self.accept.setToolTip(f"Accept the {side} side (Alt+{name[0]})")
        self.accept.setEnabled(False)
        self.accept.setProperty("side", side)  # the theme's buy / sell button colours
        named: list[tuple[QWidget, str]] = [
            (self.price, f"rfq{name}Price"),
            (self.pay, f"rfq{name}Pay"),
            (self.get, f"rfq{name}Get"),
            (self.markup, f"rfq{name}Markup"),
            (self.countdown, f"rfq{name}Countdown"),
            (self.accept, f"rfqAccept{name}"),
        ]
        layout = QVBoxLayout(self)
        for widget, object_name in named:
            widget.setObjectName(object_name)
            layout.addWidget(widget)

    def show_quote(self, quoted: QuoteSide, pair: str, precision: Precision) -> None:
        """The side as quoted; the accept button names the base amount bought or sold."""
        self.price.setText(precision.price_text(quoted.price.value, pair))
        self.price.setToolTip(f"{quoted.price.quote} per {quoted.price.base}")
        self.pay.setText(f"Pay {exact_amount(quoted.source, precision)}")
        self.get.setText(f"Get {exact_amount(quoted.destination, precision)}")
        base = quoted.destination if self.side == "buy" else quoted.source
        label = exact_amount(base, precision).replace("&", "&&")
        self.accept.setText(f"&{self.name} {label}")

    def show_markup(self, bps: Decimal | None) -> None:
        """Basis points the price is worse than the book's (None: no book to compare)."""
        if bps is None:
            self.markup.setText(f"Markup {DASH} (no top of book)")
        else:
            signed = format_number(bps, 1, signed=True)
            self.markup.setText(f"Markup {signed} bp vs {BOOK_SIDE[self.side]}")
