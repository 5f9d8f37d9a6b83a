"""The order book ladder of the selected pair: asks above, bids below, size bars, spread.

Fed by ``bridge.orderBook``; a book of another pair than the selected one (a poll that was in
flight when the trader switched) is ignored.

Centred on the touch (issue 13): the line between the best ask and the best bid sits in the
middle of the visible ladder when a book arrives, on every update, on a pair change and when
the panel is resized or shown (it may have been tabbed away). Once the trader scrolls (wheel,
scroll bar, arrow or page keys) the ladder stays where they put it until **Space** (with the
ladder focused, as in TT MD Trader) recentres it and makes it follow the touch again; a pair
change recentres too. It scrolls by pixel, so the touch is exactly in the middle.

Click-to-trade (``app/ui/click_trade.py``): a click on a bid level asks the order ticket for a
sell limit at that price, on an ask level for a buy limit; a double-click sends it through the
ticket's checks and confirmation (and emits ``levelActivated``: pair, side, Decimal price).

While the order book feed is stale (offline, failing, too old: ``bridge.freshness``) the
ladder is greyed and the header says "stale since HH:MM:SS" (issue 12).
"""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import DASH, format_number
from app.domain.records import OrderBook
from app.ui.click_trade import TradeRequest, side_of_click
from app.ui.fonts import number_font
from app.ui.freshness import Freshness
from app.ui.models.depth_model import DepthModel, DepthRole
from app.ui.palette import TradePalette, follow_palette, stale_css
from app.ui.panels.base import PanelContext
from app.ui.widgets.live_text import TextHost

BAR_ALPHA = 60
#: What the header's width is measured on (its text changes with every book).
HEADER_SAMPLE = "BTC-USD   Spread 00,000.00 (0.0 bps)"
#: Pixels between a size bar and its row's top and bottom edges.
BAR_INSET = 2
#: Keys that move through the ladder: the trader is browsing, the ladder stops following.
BROWSE_KEYS = {
    Qt.Key.Key_Up,
    Qt.Key.Key_Down,
    Qt.Key.Key_PageUp,
    Qt.Key.Key_PageDown,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
}


class LadderView(QTableView):
    """The ladder's table: Space asks to recentre; browsing keys say the trader moved."""

    recentreRequested = Signal()
    browsed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.modifiers():
            self.recentreRequested.emit()
            event.accept()
            return
        if event.key() in BROWSE_KEYS:
            self.browsed.emit()
        super().keyPressEvent(event)


def bar_rect(cell: QRect, fraction: Decimal) -> QRect:
    """The bar of a cell: ``fraction`` of its width from the right edge, inset ``BAR_INSET``
    pixels from the row's top and bottom, so each level's bar stands apart from its
    neighbours' and centred on its own digits (flush bars read as one shape, off by half a
    row from the numbers)."""
    width = max(1, int((cell.width() * fraction).to_integral_value()))
    return QRect(
        cell.right() - width + 1, cell.top() + BAR_INSET, width, cell.height() - 2 * BAR_INSET
    )


class SizeBarDelegate(QStyledItemDelegate):
    """Paints a translucent bar of the side's colour (``DepthRole.SIDE_COLOUR``, the model's
    palette: it follows the theme) behind the number, as long as the cell's share of the
    largest value in the visible book (``DepthRole.BAR_FRACTION``), growing from the right
    edge where the right-aligned digits end."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        fraction = index.data(DepthRole.BAR_FRACTION)
        side_colour = index.data(DepthRole.SIDE_COLOUR)
        if isinstance(fraction, Decimal) and fraction > 0 and isinstance(side_colour, QColor):
            colour = QColor(side_colour)
            colour.setAlpha(BAR_ALPHA)
            painter.fillRect(bar_rect(option.rect, fraction), colour)
        super().paint(painter, option, index)


class DepthPanel(QWidget):
    levelActivated = Signal(str, str, object)  # pair, "ask" | "bid", Decimal price

    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("depthPanel")
        self._context = context
        self._pair: str | None = context.bridge.selected_pair
        #: The ladder keeps the touch in the middle until the trader scrolls away.
        self._following = True

        self.header = QLabel(self)
        self.header.setObjectName("depthHeader")
        self.header.setTextFormat(Qt.TextFormat.PlainText)

        self.model = DepthModel(context.precision, self)
        self.view = LadderView(self)
        self.view.setObjectName("depthView")
        self.view.setModel(self.model)
        self.view.setFont(number_font())
        self.view.verticalHeader().hide()
        self.view.setShowGrid(False)
        self.view.setAlternatingRowColors(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 4)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._bars = SizeBarDelegate(self.view)
        for column in (self.model.column("size"), self.model.column("cumulative")):
            self.view.setItemDelegateForColumn(column, self._bars)
        self.view.clicked.connect(self._clicked)
        self.view.doubleClicked.connect(self._activated)
        self.view.recentreRequested.connect(self.recentre)
        self.view.browsed.connect(self._scrolled_away)
        self.view.verticalScrollBar().actionTriggered.connect(self._scrolled_away)
        self.view.viewport().installEventFilter(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        # the spread changes with every book: its own host, so the window is not relaid out
        layout.addWidget(TextHost(self.header, HEADER_SAMPLE, self))
        layout.addWidget(self.view)

        self.freshness = context.bridge.freshness(context.bridge.order_book_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        context.bridge.orderBook.connect(self.set_book)
        context.bridge.selectionChanged.connect(self.set_pair)
        self._update_header()
        follow_palette(self.set_palette)

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the header's stale grey (the model follows by itself)."""
        self.header.setStyleSheet(stale_css(self.freshness.stale, palette))

    def _freshness_changed(self, freshness: Freshness) -> None:
        self.model.set_stale(freshness.stale)
        self.header.setToolTip(freshness.reason if freshness.stale else "")
        self.header.setStyleSheet(stale_css(self.freshness.stale))
        self._update_header()

    @property
    def pair(self) -> str | None:
        return self._pair

    def set_pair(self, pair: str) -> None:
        """The trader picked another pair: empty until its first book arrives."""
        if pair == self._pair:
            return
        self._pair = pair
        self._following = True
        self.model.set_book(None)
        self._update_header()

    def set_book(self, book: OrderBook | None) -> None:
        if book is not None and self._pair is not None and str(book.pair) != self._pair:
            return  # a stale poll of the previous pair
        if book is not None and self._pair is None:
            self._pair = str(book.pair)
        self.model.set_book(book)
        self._update_header()
        if self._following:
            self._centre()

    def header_text(self) -> str:
        text = self._book_text()
        mark = self.freshness.current.mark()
        return f"{text}   — {mark}" if mark else text

    def _book_text(self) -> str:
        if self._pair is None:
            return "No pair selected"
        spread = self.model.spread()
        if self.model.book is None:
            return f"{self._pair}   waiting for the order book…"
        if spread is None:
            return f"{self._pair}   Spread {DASH}"
        text = f"{self._pair}   Spread {self._context.precision.price_text(spread, self._pair)}"
        ask, bid = self.model.best_ask(), self.model.best_bid()
        if ask is not None and bid is not None and ask + bid > 0:
            bps = spread / ((ask + bid) / 2) * 10_000
            text += f" ({format_number(bps, 1)} bps)"
        return text

    def _update_header(self) -> None:
        text = self.header_text()
        if self.header.text() != text:
            self.header.setText(text)

    # -- centred on the touch ------------------------------------------------------------------

    @property
    def following(self) -> bool:
        """True while the ladder keeps the touch in the middle (False once scrolled away)."""
        return self._following

    def recentre(self) -> None:
        """Space: the touch back in the middle, and kept there on updates again."""
        self._following = True
        self._centre()

    def _scrolled_away(self, *_: object) -> None:
        self._following = False

    def touch_y(self) -> int:
        """Where the best ask meets the best bid, in pixels from the ladder's top row."""
        header = self.view.verticalHeader()
        asks, rows = self.model.ask_count, self.model.rowCount()
        if asks >= rows:  # only asks: their bottom edge
            return header.length()
        return header.sectionPosition(asks)

    def _centre(self) -> None:
        """Scroll so the touch is in the middle of the viewport (clamped at the ends)."""
        if self.model.rowCount() == 0:
            return
        view = self.view
        view.updateGeometries()  # the scroll range of the rows just set, not of the last ones
        bar = view.verticalScrollBar()
        bar.setValue(self.touch_y() - view.viewport().height() // 2)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A resized or newly shown ladder (it may have been tabbed away) recentres."""
        if (
            watched is self.view.viewport()
            and event.type() in (QEvent.Type.Resize, QEvent.Type.Show)
            and self._following
        ):
            self._centre()
        return super().eventFilter(watched, event)

    # -- click-to-trade -------------------------------------------------------------------------

    def _request(self, index: QModelIndex, *, send: bool) -> None:
        pair = self.model.pair
        if pair is None or not index.isValid():
            return
        row = self.model.row(index.row())
        self._context.trade.request(TradeRequest(pair, side_of_click(row.side), row.price, send))

    def _clicked(self, index: QModelIndex) -> None:
        """A level clicked: a limit at its price in the ticket (a bid sells, an ask buys)."""
        self._request(index, send=False)

    def _activated(self, index: QModelIndex) -> None:
        """A level double-clicked: sent through the ticket's checks and confirmation."""
        pair = self.model.pair
        if pair is None or not index.isValid():
            return
        row = self.model.row(index.row())
        self.levelActivated.emit(pair, row.side, row.price)
        self._request(index, send=True)
