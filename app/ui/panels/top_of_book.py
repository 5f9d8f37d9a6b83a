"""The watchlist panel: top of book of every watched pair, live.

Ticks from the bridge are conflated in the model's one tick buffer: the slot only stages the
snapshot there (``TopOfBookModel.stage``) and the application's frame clock
(``app.ui.frame_clock``) flushes it — the rows in view are applied and repainted, the others
wait until read — so a burst costs one repaint and no turn is blocked. The panel keeps no
ticks of its own. The model keeps the sort order itself (no proxy) and never re-sorts on a
tick: while a sort column is set and data changed, it re-sorts at most once a second, in a
frame. The model is told which rows are in view (only they are formatted on a tick) and which
columns the trader hid (not formatted at all); the table paints its rows itself
(``app.ui.panels.watchlist_table``).

The watchlist is the session's: adding (pair box + Add) and removing (Remove or the Delete key
on the highlighted row) go through ``bridge.set_watchlist``; every change is saved in the
settings under ``watchlist`` and restored when a panel is built, as is the traded pair.

The highlighted row *is* the traded pair (a highlight that differed from the bold,
traded row let a trader trade a pair they were not looking at). One row at a time is
highlighted; a click or the arrow keys select its pair for the whole terminal
(``bridge.select_pair``: tickets, chart, depth), and the highlight follows the session's
selection whatever moved it (another panel, a sort, a watchlist change). Removing the selected
pair selects the row that takes its place. Double-click and Enter on other cells do what a
click does (the pair is already selected by the first click).

Click-to-trade (``app/ui/click_trade.py``): a click on a Bid cell asks the order ticket for a
sell limit at that bid, on an Ask cell for a buy limit at that ask; a double-click there sends
it through the ticket's checks and confirmation.

Price alerts: a right click on a row offers "Price alert on <pair>…", which opens the
alert dialog (``app.ui.alert_dialog``) for that pair, on the bid or ask when the click was on
that column (the mid otherwise) and at the price shown there.
"""

from __future__ import annotations

import time
from decimal import Decimal

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSettings,
    Qt,
)
from PySide6.QtGui import QAction, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QMenu,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.domain.alerts import PriceSource
from app.domain.errors import ParseError
from app.domain.money import AssetPair
from app.domain.records import TopOfBook
from app.services.log_events import LogLevel
from app.services.poller import FeedStatus
from app.ui.alert_dialog import AlertDialog, open_alert_dialog
from app.ui.click_trade import TradeRequest, side_of_click
from app.ui.column_choice import ColumnChoice
from app.ui.frame_clock import FrameClock, shared_frame_clock
from app.ui.freshness import stale_after
from app.ui.models.top_of_book_model import (
    COLUMNS,
    FLASH_KEYS,
    UP_SIGN,
    Clock,
    TopOfBookModel,
)
from app.ui.panels.base import PanelContext
from app.ui.panels.watchlist_table import WatchlistTable

SETTINGS_KEY = "watchlist"
#: The traded pair, kept so a relaunch trades what the trader left selected.
SELECTED_KEY = "watchlist/selected"
#: Room around a cell's text when fitting columns (px).
CELL_PADDING = 16
#: Columns hidden until the trader shows them (header context menu): the watchlist then fits
#: a 1366×768 layout without a horizontal scrollbar.
DEFAULT_HIDDEN = ("bid_size", "ask_size", "mid", "spread_bps")

Index = QModelIndex | QPersistentModelIndex


def read_watchlist(settings: QSettings) -> list[str] | None:
    """The saved watchlist; None when there is none or it is not a list of names."""
    value = settings.value(SETTINGS_KEY)
    if value is None:
        return None
    if isinstance(value, str):  # INI files give a one-element list back as a plain string
        return [value] if value else []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _mid(bid: Decimal | None, ask: Decimal | None) -> Decimal | None:
    return None if bid is None or ask is None else (bid + ask) / 2


class TopOfBookPanel(QWidget):
    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        frames: FrameClock | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """``frames``: the frame clock (the application's by default); ``clock``: the model's
        clock for ages, staleness and fades (tests inject one)."""
        super().__init__(parent)
        self.setObjectName("topOfBookPanel")
        self._frames = frames if frames is not None else shared_frame_clock()
        self._context = context
        self._bridge = context.bridge
        self._sized = False
        #: Per column, the longest text (characters) its width was fitted to.
        self._fitted = [0] * len(COLUMNS)
        self._choices_from: tuple[str, ...] | None = None
        #: True while the panel itself moves the highlight: that is not the trader choosing.
        self._syncing = False

        # Before the model's: each frame tells the model which rows are in view, then the
        # model applies the ticks staged for them.
        self._frames.listen(self._on_frame)
        self.model = TopOfBookModel(context.precision, self, frames=self._frames, clock=clock)

        self.table = WatchlistTable(self)
        self.table.setAccessibleName("Watchlist")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setSortIndicatorClearable(True)  # third click: back to watchlist order
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.columns = ColumnChoice.of_model(
            self.table, "watchlist", self.model.columns, context.settings, DEFAULT_HIDDEN
        )
        self._columns_hidden()
        header.sectionResized.connect(self._columns_hidden)  # a hidden column is sized 0

        self.pair_choice = QComboBox(self)
        self.pair_choice.setToolTip("A pair to add to the watchlist")
        self.pair_choice.setAccessibleName("Pair to add")
        self.pair_choice.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.pair_choice.setMinimumContentsLength(12)
        self.add_action = QAction("Add", self)
        self.add_action.setToolTip("Add the chosen pair to the watchlist")
        self.remove_action = QAction("Remove", self)
        self.remove_action.setToolTip("Remove the selected pair from the watchlist (Delete)")
        self.remove_action.setEnabled(False)
        self.toolbar = QToolBar(self)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toolbar.addWidget(self.pair_choice)
        self.toolbar.addAction(self.add_action)
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.remove_action)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.table)

        self.model.flushed.connect(self._after_flush)
        self.model.resorted.connect(self._show_selection)
        self.table.verticalScrollBar().valueChanged.connect(self._view_moved)
        self.table.viewport().installEventFilter(self)

        self._restore_watchlist()
        self._restore_selection()
        self.model.set_pairs(self._bridge.watchlist)
        self.model.set_selected(self._bridge.selected_pair)
        self.model.stale_after = stale_after(self._bridge.top_of_book_interval)
        self._refresh_choices()
        self._show_selection()

        self._bridge.topOfBook.connect(self._on_top_of_book)
        self._bridge.watchlistChanged.connect(self._on_watchlist_changed)
        self._bridge.selectionChanged.connect(self._on_selection_changed)
        self._bridge.feedStatus.connect(self._on_feed_status)
        self.table.doubleClicked.connect(self._choose)
        self.table.clicked.connect(self._price_clicked)
        self.table.doubleClicked.connect(self._price_double_clicked)
        self.table.enterRequested.connect(self._choose)
        self.table.removeRequested.connect(self.remove_selected)
        self.table.selectionModel().selectionChanged.connect(self._highlight_moved)
        self.add_action.triggered.connect(self.add_chosen)
        self.remove_action.triggered.connect(self.remove_selected)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._row_menu)
        self._menu_index = QPersistentModelIndex()  # the row the menu was opened on
        self.row_menu = QMenu(self.table)
        self.row_menu.setObjectName("watchlistRowMenu")
        self.alert_action = self.row_menu.addAction("Price &alert…")
        self.alert_action.setObjectName("newPriceAlert")
        self.alert_action.triggered.connect(lambda: self.new_alert(self._menu_index))
        #: The price alert dialog last opened from the row menu.
        self.alert_dialog: AlertDialog | None = None

    # -- watchlist ------------------------------------------------------------------------------

    def _valid_pair(self, name: str) -> bool:
        try:
            AssetPair.parse(name)
        except ParseError:
            return False
        known = self._bridge.available_pairs
        return not known or name in known

    def _restore_watchlist(self) -> None:
        saved = read_watchlist(self._context.settings)
        if saved is None:
            return
        valid = [name for name in dict.fromkeys(saved) if self._valid_pair(name)]
        dropped = [name for name in saved if name not in valid]
        if dropped:
            what = "an unknown pair" if len(dropped) == 1 else f"{len(dropped)} unknown pairs"
            self._context.notify(
                LogLevel.WARNING,
                f"Watchlist: ignored {what}: {', '.join(map(repr, dropped))}",
            )
        if valid and valid != self._bridge.watchlist:
            self._bridge.set_watchlist(valid)

    def _restore_selection(self) -> None:
        """The pair traded when the terminal last ran, if it is still watched."""
        selected = self._context.settings.value(SELECTED_KEY)
        if isinstance(selected, str) and selected in self._bridge.watchlist:
            self._bridge.select_pair(selected)

    def _on_watchlist_changed(self, pairs: list[str]) -> None:
        """New rows; if the traded pair went, the row that takes its place is traded instead."""
        selected = self._bridge.selected_pair
        old_row = self._shown_row(selected)
        self._syncing = True  # the view moves its highlight as rows go: not the trader's doing
        try:
            self.model.set_pairs(pairs)
        finally:
            self._syncing = False
        self._context.settings.setValue(SETTINGS_KEY, list(pairs))
        self._refresh_choices(force=True)
        if old_row is not None and selected not in pairs and self.model.rowCount():
            self._choose(self.model.index(min(old_row, self.model.rowCount() - 1), 0))
        self._show_selection()

    def _refresh_choices(self, force: bool = False) -> None:
        """The pair box lists the available pairs that are not watched yet."""
        available = tuple(self._bridge.available_pairs)
        if not force and available == self._choices_from:
            return
        self._choices_from = available
        watched = set(self._bridge.watchlist)
        choices = sorted(pair for pair in available if pair not in watched)
        current = self.pair_choice.currentText()
        self.pair_choice.clear()
        self.pair_choice.addItems(choices)
        if current in choices:
            self.pair_choice.setCurrentText(current)
        self.pair_choice.setEnabled(bool(choices))
        self.add_action.setEnabled(bool(choices))
        if not choices:
            self.pair_choice.setPlaceholderText("All watched" if available else "No pairs known")

    def add_chosen(self) -> None:
        pair = self.pair_choice.currentText()
        watchlist = self._bridge.watchlist
        if pair and pair not in watchlist:
            self._bridge.set_watchlist([*watchlist, pair])

    def selected_pairs(self) -> list[str]:
        """The highlighted pair (one at most: it is the traded pair)."""
        rows = self.table.selectionModel().selectedRows()
        return [self.model.pair_at(index.row()) for index in rows]

    def remove_selected(self) -> None:
        """Remove the highlighted pair; the row that takes its place becomes the traded pair
        (``_on_watchlist_changed``), so Delete can be pressed again."""
        doomed = set(self.selected_pairs())
        if doomed:
            self._bridge.set_watchlist([p for p in self._bridge.watchlist if p not in doomed])

    # -- selection --------------------------------------------------------------------------------

    def _choose(self, index: Index) -> None:
        if index.isValid():
            self._bridge.select_pair(self.model.pair_at(index.row()))

    def _highlight_moved(self) -> None:
        """The trader moved the highlight (click, arrow keys): that pair is now traded."""
        selection = self.table.selectionModel()
        self.remove_action.setEnabled(selection.hasSelection())
        if self._syncing:
            return
        rows = selection.selectedRows()
        if len(rows) == 1:
            self._choose(rows[0])
        else:
            self._show_selection()  # nothing highlighted (e.g. Ctrl+click): back to the pair

    def _on_selection_changed(self, pair: str) -> None:
        self._context.settings.setValue(SELECTED_KEY, pair)
        self.model.set_selected(pair)
        self._show_selection()

    def _shown_row(self, pair: str | None) -> int | None:
        """The table row (after sorting) of ``pair``, None when it is not watched."""
        return None if pair is None else self.model.row_of(pair)

    def _show_selection(self) -> None:
        """Highlight exactly the session's selected pair (none when it is not watched)."""
        pair = self._bridge.selected_pair
        self.model.set_selected(pair)
        row = self._shown_row(pair)
        selection = self.table.selectionModel()
        self._syncing = True
        try:
            if row is None:
                selection.clearSelection()
            elif self.selected_pairs() != [pair] or self.table.currentIndex().row() != row:
                flags = (
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows
                )
                current = self.table.currentIndex()
                column = current.column() if current.isValid() else 0
                selection.setCurrentIndex(self.model.index(row, column), flags)
        finally:
            self._syncing = False
        self.remove_action.setEnabled(selection.hasSelection())

    # -- click-to-trade (cell clicks) -------------------------------------------------------------

    def _price_clicked(self, index: QModelIndex) -> None:
        self._trade_price(index, send=False)

    def _price_double_clicked(self, index: QModelIndex) -> None:
        self._trade_price(index, send=True)

    def _trade_price(self, index: Index, *, send: bool) -> None:
        """A Bid or Ask cell clicked: that price, as the book has it (Decimal), to the ticket."""
        if not index.isValid():
            return
        key = self.model.columns[index.column()].key
        if key not in ("bid", "ask"):
            return
        row = self.model.record(index.row())
        price = row.bid if key == "bid" else row.ask
        if price is not None:
            request = TradeRequest(row.pair, side_of_click(key), price, send=send)
            self._context.trade.request(request)

    # -- price alerts (row context menu) ----------------------------------------------------------

    def _row_menu(self, point: QPoint) -> None:
        """The row menu (one menu, kept: a menu deleted on close while its action opened a
        dialog crashed offscreen), for the row under the pointer."""
        index = self.table.indexAt(point)
        if not index.isValid():
            return
        self._menu_index = QPersistentModelIndex(index)
        self.alert_action.setText(f"Price &alert on {self.model.pair_at(index.row())}…")
        self.row_menu.popup(self.table.viewport().mapToGlobal(point))

    def new_alert(self, index: Index) -> AlertDialog | None:
        """The alert dialog for the row's pair: on the clicked column's bid or ask (the mid
        elsewhere), at the price the row shows."""
        if not index.isValid():
            return None
        row = self.model.record(index.row())
        key = self.model.columns[index.column()].key
        source = PriceSource(key) if key in ("bid", "ask") else PriceSource.MID
        price = {"bid": row.bid, "ask": row.ask}.get(key, _mid(row.bid, row.ask))
        self.alert_dialog = open_alert_dialog(
            self._context, self, pair=row.pair, source=source, level=price
        )
        return self.alert_dialog

    # -- feed -------------------------------------------------------------------------------------

    def _on_top_of_book(self, books: dict[str, TopOfBook]) -> None:
        """Ticks go to the model's buffer; the frame clock shows them."""
        self.model.stage(books)

    def _on_frame(self, now: float) -> None:
        """Before the model's frame, when ticks wait: the rows in view now (they change
        without a scroll or a resize too: rows added or removed by a new watchlist)."""
        if self.model.has_staged():
            self.model.set_visible(self.visible_rows())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A resized viewport shows other rows: tell the model which."""
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            self._view_moved()
        return super().eventFilter(watched, event)

    def _columns_hidden(self, *_: object) -> None:
        """The model need not format the columns the trader hid."""
        count = self.model.columnCount()
        self.model.set_hidden_columns(
            [column for column in range(count) if self.table.isColumnHidden(column)]
        )

    def _view_moved(self, *_: object) -> None:
        self.model.set_visible(self.visible_rows())

    def visible_rows(self) -> tuple[int, int]:
        """The rows in the table's viewport (first, last)."""
        count = self.model.rowCount()
        first = max(0, self.table.rowAt(0))
        last = self.table.rowAt(self.table.viewport().height() - 1)
        return first, count - 1 if last < 0 else last

    def _after_flush(self) -> None:
        """A frame showed new ticks: columns fitted to the first data, widened when a longest
        text grew; the pair box follows a grown pairs list."""
        if not self._sized:
            self._sized = True
            self._fit_columns()
        else:
            self._fit_grown()
        if len(self._bridge.available_pairs) != len(self._choices_from or ()):
            self._refresh_choices()

    def _fit_grown(self) -> None:
        """Columns whose longest text grew (e.g. more decimals once the pairs are known) are
        fitted again; nothing else changes width on a tick."""
        grown = [c for c, fitted in enumerate(self._fitted) if self.model.widest(c) > fitted]
        if grown:
            self._fit_columns(grown)

    def _fit_columns(self, columns: list[int] | None = None) -> None:
        """Fit the columns to the first data, with room for the ▲/▼ sign prices gain later.

        Measures the longest text each column has shown (fixed-pitch digits: longest is
        widest), which the model keeps as it formats rows, instead of
        ``resizeColumnsToContents``, which asks every row for every role: the first fit reads
        no row out of view, so it applies none of their waiting ticks (500 of them at once
        held the first frame 25 ms); a column whose text grows later is fitted again."""
        numbers = QFontMetrics(self.model.number_font)
        bold = QFont(self.table.font())
        bold.setBold(True)
        names = QFontMetrics(bold)
        header = self.table.horizontalHeader()
        for column, spec in enumerate(self.model.columns):
            if columns is not None and column not in columns:
                continue
            self._fitted[column] = self.model.widest(column)
            longest = self.model.longest_text(column)
            if spec.key in FLASH_KEYS:
                longest = UP_SIGN + longest
            metrics = names if spec.key == "pair" else numbers
            width = metrics.horizontalAdvance(longest) + CELL_PADDING
            title = header.sectionSizeFromContents(column).width()
            self.table.setColumnWidth(column, max(width, title))

    def _on_feed_status(self, status: FeedStatus) -> None:
        if status.name == self._bridge.top_of_book_feed:
            self.model.stale_after = stale_after(status.interval)

    @property
    def sort_column(self) -> int | None:
        column = self.model.sort_column
        return column if column >= 0 else None
