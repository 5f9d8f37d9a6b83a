"""The order book ladder of the selected pair: asks above, bids below, size bars, spread.

Fed by ``bridge.orderBook``; a book of another pair than the selected one (a poll that was in
flight when the trader switched) is ignored.

Fixed price rows, as in TT's MD Trader: the ladder takes its rows from a book and then holds
them (``DepthModel.set_held``): later books change the sizes at those prices, and the touch
moves up and down the rows; a price never slides to another row under the trader's eyes or
pointer. It recentres — new rows from the current book, the touch in the middle — on a first
book or a pair change, on **Space** (the ladder focused) or the **Centre** button, and by
itself only when the pointer leaves the ladder, or while the pointer is away when the touch has
drifted out of the middle third of the visible rows (a market that runs moves the touch up or
down the held rows; on the edge of the view it reads as a one-sided book), or when it is
resized or shown (it may have been tabbed away). Never while the pointer is over it.

A size change recentres twice: at once, and again once the layout has settled (a zero-delay
timer). The first alone can land wrong: the viewport's Resize can arrive in the middle of
Qt's own geometry update (the header turning two lines tall on a first book, a dock being
laid out), when the scroll bar still has the range of the old rows or size and clamps the
value set. Once the trader scrolls (wheel, scroll bar, arrow or page
keys) it stays where they put it until Space or Centre (or a pair change). It scrolls by
pixel, so the touch is exactly in the middle.

Click-to-trade (``app/ui/click_trade.py``): a click on a bid level asks the order ticket for a
sell limit at that price, on an ask level for a buy limit; a double-click sends it through the
ticket (and emits ``levelActivated``: pair, side, Decimal price). The level is the one painted
under the pointer when the button went down (``LadderView``), not whatever the row holds when
it comes up. A row left inside the spread (the touch moved away from it) trades nothing.

The selection follows its price across a recentre (or goes if the price is no longer shown).

While the order book feed is stale (offline, failing, too old: ``bridge.freshness``) the
ladder is greyed and the header says "stale since HH:MM:SS".

The trader's own resting orders: the Own column shows, on each row, the BASE size of the
trader's resting orders there (buys in the bid colour, sells in the ask colour, each order and
its exact price in the tooltip; which row an order between rows goes on:
``app.services.own_orders``). They come from the order query the Orders dock reads, through an
order feed of the ladder's own, filtered to resting orders of the ladder's pair: read every
"orders" feed interval (Settings, 2 s by default) and at once after an order of this terminal,
only while the ladder is shown. A filled or cancelled (expired) order leaves with the next
read. Orders beyond the rows are counted in the header.

Painting: ``app.ui.panels.ladder_painter`` (sizes and bars side by side, the touch's edge).
"""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QObject,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont, QFontMetrics, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import DASH, format_number
from app.domain.records import OrderBook
from app.services.order_feed import OrdersSnapshot
from app.services.own_orders import own_orders, resting_filter
from app.ui.bridge import QtTopic
from app.ui.click_trade import TradeRequest, side_of_click
from app.ui.fonts import number_font
from app.ui.freshness import Freshness
from app.ui.models.depth_model import INSIDE, DepthModel, DepthRow
from app.ui.palette import TradePalette, follow_palette, stale_css
from app.ui.panels.base import PanelContext
from app.ui.panels.ladder_painter import LadderPainter
from app.ui.panels.ladder_view import LadderView
from app.ui.panels.record_parts import stop_with
from app.ui.preferences import Preferences
from app.ui.widgets.live_text import TextHost

#: What the header's width is measured on (its text changes with every book).
HEADER_SAMPLE = "BTC-USD   Spread 00,000.00 (0.0 bps)"
#: Pixels of a fitted column's cell beside its longest text: the text margins, and some air.
FIT_PADDING = 12
#: The Centre button's text and tooltip.
CENTRE_TEXT = "Centre"
CENTRE_TIP = "Recentre the ladder on the best bid and ask (Space)"


class DepthPanel(QWidget):
    levelActivated = Signal(str, str, object)  # pair, "ask" | "bid", Decimal price

    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("depthPanel")
        self._context = context
        self._pair: str | None = context.bridge.selected_pair
        #: The ladder recentres by itself (pointer away, touch out of view) until the trader
        #: scrolls away; Space, Centre or a pair change turn it back on.
        self._following = True
        #: Recentres once the layout has settled after a size change (see the docstring).
        self._settled = QTimer(self)
        self._settled.setSingleShot(True)
        self._settled.setInterval(0)
        self._settled.timeout.connect(self._recentre_if_following)

        self.header = QLabel(self)
        self.header.setObjectName("depthHeader")
        self.header.setTextFormat(Qt.TextFormat.PlainText)

        self.model = DepthModel(context.precision, self)
        self.model.set_held(True)  # fixed price rows: see the module's docstring
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
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # The Own column is as wide as its header or longest text (``_fit_columns``): mostly
        # empty, it leaves the room to the sizes and their bars. The Cumulative column shares
        # the rest with the others, but never gets less than its header and numbers need (a
        # narrow dock clipped "Cumulative" to "umulative").
        self._fitted = (self.model.column("own"), self.model.column("cumulative"))
        header.setSectionResizeMode(self._fitted[0], QHeaderView.ResizeMode.Fixed)
        self._fits: dict[tuple[int, str, str], int] = {}
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 4)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        own_font = QFont(self.view.font())
        own_font.setBold(True)  # as the model shows own sizes
        self._metrics = (QFontMetrics(own_font), QFontMetrics(self.view.font()))
        self.painter = LadderPainter(self.view, self.model)
        self.view.setItemDelegate(self.painter)
        self.view.levelClicked.connect(self._clicked)
        self.view.levelDoubleClicked.connect(self._activated)
        self.view.hoverChanged.connect(self._hover_changed)
        self.view.recentreRequested.connect(self.recentre)
        self.view.browsed.connect(self._scrolled_away)
        self.view.verticalScrollBar().actionTriggered.connect(self._scrolled_away)
        self.view.viewport().installEventFilter(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        # the spread changes with every book: its own host, so the window is not relaid out
        top.addWidget(TextHost(self.header, HEADER_SAMPLE, self), 1)
        self.centre_button = QToolButton(self)
        self.centre_button.setObjectName("depthCentre")
        self.centre_button.setText(CENTRE_TEXT)
        self.centre_button.setToolTip(CENTRE_TIP)
        self.centre_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the ladder keeps Space
        self.centre_button.clicked.connect(self.recentre)
        top.addWidget(self.centre_button)
        layout.addLayout(top)
        layout.addWidget(self.view)

        self.freshness = context.bridge.freshness(context.bridge.order_book_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        context.bridge.orderBook.connect(self.set_book)
        context.bridge.selectionChanged.connect(self.set_pair)

        # The trader's resting orders of the pair: an order feed of the ladder's own.
        interval = float(Preferences.load(context.settings).orders)
        self.own_feed = context.bridge.feeds.order_feed(None, interval=interval, page_size=100)
        if self._pair is not None:
            self.own_feed.set_filter(resting_filter(self._pair))
        self.own_feed.set_active(False)  # read while shown (``showEvent``)
        self.own_snapshots: QtTopic[OrdersSnapshot] = QtTopic(self.own_feed.updates, self)
        self.own_snapshots.connect(self._own_orders_changed)
        stop_with(self, self.own_feed)
        self.own_feed.start()

        self._update_header()
        follow_palette(self.set_palette)

    async def stop_feed(self) -> None:
        """Stop the own orders' feed before the connection closes."""
        await self.own_feed.stop()

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings > feeds > orders: the own orders are read as often as the Orders dock's."""
        self.own_feed.poller.interval = float(prefs.orders)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.own_feed.set_active(True)

    def hideEvent(self, event: QHideEvent) -> None:
        """Hidden (a closed dock, the tab behind the chart): its orders are not read."""
        super().hideEvent(event)
        self.own_feed.set_active(False)

    def _own_orders_changed(self, snapshot: OrdersSnapshot) -> None:
        """A read of the resting orders: those of the ladder's pair onto their rows."""
        pair = snapshot.filter.pair
        if not pair or pair != self._pair:
            return  # a read of the previous pair's, or before the ladder had a pair
        precision = self._context.precision
        base = pair.partition("/")[0]
        orders = own_orders(snapshot.rows, pair, precision.asset(base), precision.price(pair))
        self.model.set_own(pair, orders)
        self._fit_columns()
        self._update_header()

    def _fit_columns(self) -> None:
        """The Own column as wide as its header and its longest text; the Cumulative column
        stretched with the others unless that leaves it narrower than its header and longest
        text need, then that wide. Resized only when a width changes (a sum that gains a
        digit, an own order placed, the dock resized), not on every book."""
        header = self.view.horizontalHeader()
        own, cumulative = (self._fitting(column) for column in self._fitted)
        if header.sectionSize(self._fitted[0]) != own:
            header.resizeSection(self._fitted[0], own)
        share = (self.view.viewport().width() - own) // (self.model.columnCount() - 1)
        fixed, stretch = QHeaderView.ResizeMode.Fixed, QHeaderView.ResizeMode.Stretch
        mode = fixed if share < cumulative else stretch
        column = self._fitted[1]
        if header.sectionResizeMode(column) != mode:
            header.setSectionResizeMode(column, mode)
        if mode == fixed and header.sectionSize(column) != cumulative:
            header.resizeSection(column, cumulative)

    def _fitting(self, column: int) -> int:
        """The width ``column``'s header and longest text need (an own size is bold): the
        header measured once per title, a text once (a book changes the longest sum often)."""
        title = str(self.model.headerData(column, Qt.Orientation.Horizontal))
        hint = self._fits.get((column, title, ""))
        if hint is None:
            hint = self._fits[(column, title, "")] = self.view.horizontalHeader().sectionSizeHint(
                column
            )
        text = self.model.widest_text(column)
        if not text:
            return hint
        key = (column, "", text)
        width = self._fits.get(key)
        if width is None:
            if len(self._fits) > 512:
                self._fits.clear()
            metrics = self._metrics[self._fitted.index(column)]
            width = self._fits[key] = metrics.horizontalAdvance(text) + FIT_PADDING
        return max(hint, width)

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the header's stale grey (the model follows by itself); the columns
        measured again (the theme's header may differ)."""
        self.header.setStyleSheet(stale_css(self.freshness.stale, palette))
        self._fits.clear()
        self._fit_columns()

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
        self.model.set_own(pair, ())
        self.own_feed.set_filter(resting_filter(pair))
        self._update_header()

    def set_book(self, book: OrderBook | None) -> None:
        if book is not None and self._pair is not None and str(book.pair) != self._pair:
            return  # a stale poll of the previous pair
        if book is not None and self._pair is None:
            self._pair = str(book.pair)
            self.own_feed.set_filter(resting_filter(self._pair))
        new_rows = self.model.set_book(book)
        self._update_header()
        self._fit_columns()
        if new_rows:  # a first book of the pair: its own rows
            if self._following:
                self._centre()
                self._settled.start()  # its header may still change the viewport's height
        elif self._following and not self.view.hovered and not self.touch_in_middle():
            self._recentre()

    def header_text(self) -> str:
        text = self._book_text()
        beyond = len(self.model.own_beyond)
        if beyond:
            text += f"   · {beyond} own order{'' if beyond == 1 else 's'} beyond the rows"
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
        """True while the ladder recentres by itself (False once scrolled away)."""
        return self._following

    def recentre(self) -> None:
        """Space or Centre: rows from the current book, the touch in the middle, and kept in
        view on updates again."""
        self._following = True
        self._recentre()

    def _scrolled_away(self, *_: object) -> None:
        self._following = False

    def _hover_changed(self, hovered: bool) -> None:
        """The pointer left: the ladder may move again, so it recentres now (unless the trader
        scrolled it somewhere), not under a pointer that comes back."""
        if not hovered and self._following:
            self._recentre()

    def _recentre_if_following(self) -> None:
        """The layout settled after a size change: centred again, unless the trader is over
        the ladder or scrolled it away."""
        if self._following and not self.view.hovered:
            self._recentre()

    def _recentre(self) -> None:
        """New rows from the current book, the selection kept on its price, the touch centred."""
        selected = self.selected_price()
        self.model.regrid()
        self._fit_columns()
        self._select_price(selected)
        self._centre()

    def selected_price(self) -> Decimal | None:
        """The price of the selected row (None: nothing selected)."""
        rows = self.view.selectionModel().selectedRows()
        if not rows or rows[0].row() >= self.model.rowCount():
            return None
        return self.model.row(rows[0].row()).price

    def _select_price(self, price: Decimal | None) -> None:
        """Select the row of ``price`` (nothing if no row shows it), without scrolling to it."""
        selection = self.view.selectionModel()
        row = None if price is None else self.model.row_of_price(price)
        if row is None:
            selection.clearSelection()
            return
        index = self.model.index(row, 0)
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        auto_scroll = self.view.hasAutoScroll()
        self.view.setAutoScroll(False)  # the current row may be off screen: no scroll to it
        try:
            selection.setCurrentIndex(index, flags)
        finally:
            self.view.setAutoScroll(auto_scroll)

    def touch_rows(self) -> tuple[int | None, int | None]:
        """The rows showing the best ask and the best bid (None: that side is not shown)."""
        return self.model.best_ask_row, self.model.best_bid_row

    def touch_in_view(self) -> bool:
        """Whether each side the book has shows its best level on a visible row. Hidden (a
        tab behind another), the ladder is recentred when shown: True."""
        if not self.view.isVisible():
            return True
        viewport = self.view.viewport().rect()
        book = self.model.book
        for row, levels in zip(
            self.touch_rows(),
            ((), ()) if book is None else (book.asks, book.bids),
            strict=True,
        ):
            if not levels:
                continue
            if row is None or not viewport.intersects(
                self.view.visualRect(self.model.index(row, 0))
            ):
                return False
        return True

    def touch_in_middle(self) -> bool:
        """Whether the touch (``touch_y``) lies in the middle third of the viewport, and each
        side the book has shows its best level on a visible row. Hidden: True (see
        ``touch_in_view``)."""
        if not self.view.isVisible():
            return True
        if not self.touch_in_view():
            return False
        height = self.view.viewport().height()
        y = self.touch_y() - self.view.verticalScrollBar().value()
        return height // 3 <= y <= height - height // 3

    def touch_y(self) -> int:
        """Where the best ask meets the best bid, in pixels from the ladder's top row (the
        middle of any held rows left between them)."""
        header = self.view.verticalHeader()
        ask, bid = self.touch_rows()
        if ask is None and bid is None:
            return header.length() if self.model.rowCount() else 0
        top = header.sectionPosition(ask) + header.sectionSize(ask) if ask is not None else None
        bottom = header.sectionPosition(bid) if bid is not None else None
        if top is None:
            assert bottom is not None
            return bottom
        if bottom is None:
            return top
        return (top + bottom) // 2

    def _centre(self) -> None:
        """Scroll so the touch is in the middle of the viewport (clamped at the ends)."""
        if self.model.rowCount() == 0:
            return
        view = self.view
        view.updateGeometries()  # the scroll range of the rows just set, not of the last ones
        bar = view.verticalScrollBar()
        bar.setValue(self.touch_y() - view.viewport().height() // 2)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A resized or newly shown ladder (it may have been tabbed away) recentres, unless the
        pointer is over it: now, and again once the layout has settled. Its columns are
        fitted to the new width."""
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        if (
            watched is self.view.viewport()
            and event.type() in (QEvent.Type.Resize, QEvent.Type.Show)
            and self._following
            and not self.view.hovered
        ):
            self._recentre()
            self._settled.start()
        return super().eventFilter(watched, event)

    # -- click-to-trade -------------------------------------------------------------------------

    def _request(self, level: DepthRow, *, send: bool) -> None:
        if level.side == INSIDE or not level.pair:
            return  # a row inside the spread: neither side's level
        side = side_of_click(level.side)
        self._context.trade.request(TradeRequest(level.pair, side, level.price, send))

    def _clicked(self, level: DepthRow) -> None:
        """A level clicked: a limit at its price in the ticket (a bid sells, an ask buys)."""
        self._request(level, send=False)

    def _activated(self, level: DepthRow) -> None:
        """A level double-clicked: sent through the ticket's checks and confirmation."""
        if level.side == INSIDE or not level.pair:
            return
        self.levelActivated.emit(level.pair, level.side, level.price)
        self._request(level, send=True)
