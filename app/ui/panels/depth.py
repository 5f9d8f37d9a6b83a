"""The order book ladder of the selected pair: asks above, bids below, size bars, spread.

Fed by ``bridge.orderBook``; a book of another pair than the selected one (a poll that was in
flight when the trader switched) is ignored. Double-clicking a level emits ``levelActivated``
(pair, side, Decimal price), e.g. for the order ticket to take the price.

While the order book feed is stale (offline, failing, too old: ``bridge.freshness``) the
ladder is greyed and the header says "stale since HH:MM:SS" (issue 12).
"""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QPainter
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
from app.ui.bridge import Freshness
from app.ui.models.depth_model import DepthModel, DepthRole
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.panels.base import PanelContext

BAR_ALPHA = 60


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
            rect: QRect = option.rect
            width = max(1, int((rect.width() * fraction).to_integral_value()))
            colour = QColor(side_colour)
            colour.setAlpha(BAR_ALPHA)
            painter.fillRect(
                QRect(rect.right() - width + 1, rect.top(), width, rect.height()), colour
            )
        super().paint(painter, option, index)


class DepthPanel(QWidget):
    levelActivated = Signal(str, str, object)  # pair, "ask" | "bid", Decimal price

    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("depthPanel")
        self._context = context
        self._pair: str | None = context.bridge.selected_pair
        self._centre_next = True

        self.header = QLabel(self)
        self.header.setObjectName("depthHeader")
        self.header.setTextFormat(Qt.TextFormat.PlainText)

        self.model = DepthModel(context.precision, self)
        self.view = QTableView(self)
        self.view.setObjectName("depthView")
        self.view.setModel(self.model)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.verticalHeader().hide()
        self.view.setShowGrid(False)
        self.view.setAlternatingRowColors(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 4)
        self._bars = SizeBarDelegate(self.view)
        for column in (self.model.column("size"), self.model.column("cumulative")):
            self.view.setItemDelegateForColumn(column, self._bars)
        self.view.doubleClicked.connect(self._activated)
        self.model.modelReset.connect(self._after_reset)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        layout.addWidget(self.view)

        self.freshness = context.bridge.freshness(context.bridge.order_book_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        context.bridge.orderBook.connect(self.set_book)
        context.bridge.selectionChanged.connect(self.set_pair)
        self._update_header()
        follow_palette(self.set_palette)

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the header's stale grey (the model follows by itself)."""
        self._style_header(palette)

    def _style_header(self, palette: TradePalette | None = None) -> None:
        if self.freshness.stale:
            colour = (palette or current_palette()).stale.name()
            self.header.setStyleSheet(f"QLabel {{ color:{colour}; }}")
        else:
            self.header.setStyleSheet("")

    def _freshness_changed(self, freshness: Freshness) -> None:
        self.model.set_stale(freshness.stale)
        self.header.setToolTip(freshness.reason if freshness.stale else "")
        self._style_header()
        self._update_header()

    @property
    def pair(self) -> str | None:
        return self._pair

    def set_pair(self, pair: str) -> None:
        """The trader picked another pair: empty until its first book arrives."""
        if pair == self._pair:
            return
        self._pair = pair
        self._centre_next = True
        self.model.set_book(None)
        self._update_header()

    def set_book(self, book: OrderBook | None) -> None:
        if book is not None and self._pair is not None and str(book.pair) != self._pair:
            return  # a stale poll of the previous pair
        if book is not None and self._pair is None:
            self._pair = str(book.pair)
        self.model.set_book(book)
        self._update_header()

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

    def _after_reset(self) -> None:
        """Keep the touch (best ask / best bid) in the middle when a new pair's book arrives."""
        if self._centre_next and self.model.rowCount() > 0:
            self._centre_next = False
            centre = max(0, self.model.ask_count - 1)
            self.view.scrollTo(
                self.model.index(centre, 0), QAbstractItemView.ScrollHint.PositionAtCenter
            )

    def _activated(self, index: QModelIndex) -> None:
        pair = self.model.pair
        if pair is None or not index.isValid():
            return
        row = self.model.row(index.row())
        self.levelActivated.emit(pair, row.side, row.price)
