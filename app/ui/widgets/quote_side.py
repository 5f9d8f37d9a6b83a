"""One side of a two-way RFQ quote: the side in the trader's words (``Buy BTC · pay 9,090.50 USD ·
get 0.10000000 BTC at 90,905.00``), the price, what is paid and what is received, the markup
against the book, the pre-trade checks that concern the side, a countdown, and the accept button
(``&Buy …`` / ``&Sell …``, so Alt+B / Alt+S; it says "offline" while the connection is down).

The accept button carries the dynamic property ``side`` ("buy" / "sell"): the theme's style
sheet paints it in that theme's bid blue or ask orange, and a theme switch repaints it."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QPushButton, QVBoxLayout, QWidget

from app.domain import Amount
from app.domain.display import DASH, Precision, decimals_of, format_number
from app.domain.records import QuoteSide
from app.ui.level_text import flowing
from app.ui.palette import TradePalette, current_palette, follow_palette, level_css
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
    """Object names ``rfq<Side>Terms``, ``…Price``, ``…Pay``, ``…Get``, ``…Markup``,
    ``…Checks``, ``…Countdown`` and ``rfqAccept<Side>`` (``<Side>`` is Buy or Sell)."""

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
        self.terms = flowing(QLabel(self))
        self.terms.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pay, self.get, self.markup = QLabel(self), QLabel(self), QLabel(self)
        self.checks = flowing(QLabel(self))
        self.checks.setProperty("level", "")
        self.checks.hide()
        self._label = f"&{name}"
        self._offline = False
        self.countdown = CountdownBar(self)
        self.countdown.setAccessibleName(f"{name} side time left")
        self.accept = QPushButton(f"&{name}", self)
        self.accept.setToolTip(f"Accept the {side} side (Alt+{name[0]})")
        self.accept.setEnabled(False)
        self.accept.setProperty("side", side)  # the theme's buy / sell button colours
        named: list[tuple[QWidget, str]] = [
            (self.terms, f"rfq{name}Terms"),
            (self.price, f"rfq{name}Price"),
            (self.pay, f"rfq{name}Pay"),
            (self.get, f"rfq{name}Get"),
            (self.markup, f"rfq{name}Markup"),
            (self.checks, f"rfq{name}Checks"),
            (self.countdown, f"rfq{name}Countdown"),
            (self.accept, f"rfqAccept{name}"),
        ]
        layout = QVBoxLayout(self)
        for widget, object_name in named:
            widget.setObjectName(object_name)
            layout.addWidget(widget)
        follow_palette(self.set_palette)

    def show_quote(
        self, quoted: QuoteSide, pair: str, precision: Precision, price: Decimal, terms: str
    ) -> None:
        """The side as quoted: ``terms`` in the trader's words, ``price`` QUOTE per BASE; the
        accept button names the base amount bought or sold."""
        base_asset, quote_asset = pair.split("/")
        self.terms.setText(terms)
        self.price.setText(precision.price_text(price, pair))
        self.price.setToolTip(f"{quote_asset} per {base_asset}")
        self.pay.setText(f"Pay {exact_amount(quoted.source, precision)}")
        self.get.setText(f"Get {exact_amount(quoted.destination, precision)}")
        base = quoted.destination if self.side == "buy" else quoted.source
        label = exact_amount(base, precision).replace("&", "&&")
        self._label = f"&{self.name} {label}"
        self._show_label()

    def set_offline(self, offline: bool) -> None:
        """While the connection is offline the accept button says so (it is disabled too)."""
        if offline != self._offline:
            self._offline = offline
            self._show_label()

    def _show_label(self) -> None:
        self.accept.setText(f"{self._label} (offline)" if self._offline else self._label)

    def show_checks(self, lines: list[str], level: str) -> None:
        """The pre-trade checks of this side (``level`` "error" when one blocks the accept).
        Re-run on every top of book: nothing is restyled unless the findings changed."""
        text = "\n".join(lines)
        if text != self.checks.text():
            self.checks.setText(text)
            self.checks.setVisible(bool(lines))
        if level != self.checks.property("level"):
            self.checks.setProperty("level", level)
            self.checks.setStyleSheet(level_css(level, current_palette()))

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the checks restyled for their level."""
        self.checks.setStyleSheet(level_css(str(self.checks.property("level")), palette))

    def show_markup(self, bps: Decimal | None, moment: str | None = None) -> None:
        """Basis points the price is worse than the book's (None: no book to compare);
        ``moment``: the figure was frozen at the accept or the expiry ("at accept")."""
        at = "" if moment is None else f" at {moment}"
        if bps is None:
            self.markup.setText(f"Markup {DASH} (no top of book{at})")
        else:
            signed = format_number(bps, 1, signed=True)
            self.markup.setText(f"Markup {signed} bp vs {BOOK_SIDE[self.side]}{at}")
