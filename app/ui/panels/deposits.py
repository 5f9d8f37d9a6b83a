"""Deposits (and withdrawals): the account's transfer records, newest first by default.

"Oldest first" changes the question put to the server (``asc=true``), so with a row limit it
shows the *oldest* records rather than the newest ones reversed; the table then shows the
server's order until a column header is clicked (numbers and times sort as such; a third click
returns to the server's order). The list refreshes every ``interval`` seconds (a pending deposit
completes by itself) and on Refresh. The hash, the transaction id, an address or a whole row
can be copied exactly (context menu, Copy hash, or Ctrl+C for the current cell); Export CSV
writes what the table shows, in its order, with exact amounts and UTC times. Errors on the
status line are in the theme's error colour and follow a theme switch.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QLabel,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.domain.records import DepositRecord
from app.services.log_events import LogLevel
from app.services.transfers import (
    DEFAULT_INTERVAL,
    DEFAULT_MAX,
    MAX_RECORDS,
    TransferKind,
    TransferPage,
    TransferQuery,
)
from app.ui.bridge import QtTopic
from app.ui.column_sizer import ColumnSizer
from app.ui.csv_export import EXPORT_ROLE, ask_and_export, export_csv, rows_as_tsv
from app.ui.level_text import restyle_level, show_level
from app.ui.models.deposits_model import RECORD_ROLE, DepositsModel, DepositsSortProxy
from app.ui.palette import TradePalette, follow_palette
from app.ui.panels.base import PanelContext
from app.ui.panels.record_parts import FlowLayout, counted, stop_with
from app.ui.widgets.copy_field import copy_text
from app.ui.widgets.live_text import TextHost
from app.ui.widgets.read_only_table import read_only_rows

KINDS: tuple[tuple[str, TransferKind], ...] = (
    ("Deposits", "deposit"),
    ("Withdrawals", "withdrawal"),
)
#: What the status line's width is measured on.
STATUS_SAMPLE = "20 deposits, newest first · updated 00:00:00"


def plural(kind: TransferKind, count: int) -> str:
    """``1 deposit``, ``1,234 withdrawals``."""
    return counted(count, "deposit" if kind == "deposit" else "withdrawal")


class DepositsPanel(QWidget):
    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("depositsPanel")
        self._context = context
        self.model = DepositsModel(context.precision, self)
        self.proxy = DepositsSortProxy(self)
        self.proxy.setSourceModel(self.model)
        self.page: TransferPage | None = None
        self.last_error = ""

        self.kind_box = QComboBox(self)
        self.kind_box.setObjectName("transferKind")
        self.kind_box.setToolTip("Show deposits or withdrawal requests")
        for text, kind in KINDS:
            self.kind_box.addItem(text, kind)
        self.kind_box.currentIndexChanged.connect(self._query_changed)

        self.oldest_first = QCheckBox("&Oldest first", self)
        self.oldest_first.setObjectName("depositsAscending")
        self.oldest_first.setToolTip(
            "Ask the service for the oldest records first (with the row limit, these are the"
            " oldest ones); unticked: newest first"
        )
        self.oldest_first.toggled.connect(self._query_changed)

        self.max_box = QSpinBox(self)
        self.max_box.setObjectName("depositsMax")
        self.max_box.setRange(1, MAX_RECORDS)
        self.max_box.setValue(DEFAULT_MAX)
        self.max_box.setKeyboardTracking(False)  # ask once the number is typed, not per digit
        self.max_box.setToolTip("How many records to ask for")
        self.max_box.valueChanged.connect(self._query_changed)

        self.refresh_button = self._button("Refresh", "depositsRefresh", self.refresh)
        self.copy_hash_button = self._button("Copy hash", "copyHash", self.copy_hash)
        self.copy_hash_button.setEnabled(False)
        self.export_button = self._button("Export CSV…", "exportCsv", self.ask_export)

        self.table = QTableView(self)
        self.table.setObjectName("depositsTable")
        self.table.setModel(self.proxy)
        header = read_only_rows(self.table)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        # Each column as wide as its widest value in view: amounts and times whole, the hash,
        # the names and the address give way first (cut at the right, whole in the tooltip).
        self.sizer = ColumnSizer(self.table)
        self.sizer.remember(context.settings, "deposits")
        header.setSortIndicatorClearable(True)
        self.table.setSortingEnabled(True)
        self.show_server_order()
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.copy_cell_action = QAction("Copy", self.table)
        self.copy_cell_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_cell_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_cell_action.triggered.connect(self.copy_current_cell)
        self.table.addAction(self.copy_cell_action)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)

        self.status = QLabel(self)
        self.status.setObjectName("depositsStatus")
        self.status.setWordWrap(True)

        top = FlowLayout()  # wraps onto a second row in a narrow dock
        top.addWidget(self.kind_box)
        top.addWidget(self.oldest_first)
        rows_label = QLabel("&Rows:", self)
        rows_label.setBuddy(self.max_box)
        top.addWidget(rows_label)
        top.addWidget(self.max_box)
        top.addWidget(self.copy_hash_button)
        top.addWidget(self.export_button)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        # refreshed every 15 s: its own host, so a new time does not relayout the window
        layout.addWidget(TextHost(self.status, STATUS_SAMPLE, self))
        for first, second in (
            (self.kind_box, self.oldest_first),
            (self.oldest_first, self.max_box),
            (self.max_box, self.table),
            (self.table, self.copy_hash_button),
            (self.copy_hash_button, self.export_button),
            (self.export_button, self.refresh_button),
        ):
            self.setTabOrder(first, second)

        self.feed = context.bridge.feeds.transfer_feed(self.query(), interval=interval)
        self.page_topic: QtTopic[TransferPage] = QtTopic(self.feed.pages, self)
        self.failure_topic: QtTopic[str] = QtTopic(self.feed.failures, self)
        self.page_topic.connect(self._on_page)
        self.failure_topic.connect(self._on_failure)
        stop_with(self, self.feed)
        self._columns_for(self.query().kind)
        self.status.setText("Loading…")
        follow_palette(self.set_palette)
        self.feed.start()

    def _say(self, text: str, level: str = "") -> None:
        """``text`` on the status line in the colour of ``level`` ("error", or "" for ordinary
        text); the level stays on the label (property "level") for a theme switch."""
        show_level(self.status, text, level)

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the status line in the new colour of its level."""
        restyle_level(self.status, palette)

    def _button(self, text: str, name: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.clicked.connect(slot)
        return button

    # -- the query --------------------------------------------------------------------------

    def query(self) -> TransferQuery:
        kind: TransferKind = self.kind_box.currentData() or "deposit"
        return TransferQuery(kind, self.oldest_first.isChecked(), self.max_box.value())

    def set_ascending(self, ascending: bool) -> None:
        self.oldest_first.setChecked(ascending)

    def set_kind(self, kind: TransferKind) -> None:
        self.kind_box.setCurrentIndex(self.kind_box.findData(kind))

    def refresh(self) -> None:
        self.feed.refresh()

    def _query_changed(self, *_: object) -> None:
        query = self.query()
        if query == self.feed.query:
            return
        if query.kind != self.feed.query.kind:
            self.model.set_records([])
            self._columns_for(query.kind)
        self.show_server_order()
        order = "oldest first" if query.ascending else "newest first"
        self._say(f"Loading {query.kind}s, {order}…")
        self.feed.set_query(query)

    def _columns_for(self, kind: TransferKind) -> None:
        self.table.setColumnHidden(self.model.column("address"), kind != "withdrawal")

    def show_server_order(self) -> None:
        """Drop any column sort: rows in the order the server sent them."""
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.proxy.sort(-1)

    # -- feed -------------------------------------------------------------------------------

    async def stop_feed(self) -> None:
        await self.feed.stop()

    def _on_page(self, page: TransferPage) -> None:
        self.page = page
        self.last_error = ""
        self.model.set_records(page.records)
        order = "oldest first" if page.query.ascending else "newest first"
        stamp = page.fetched_at.astimezone().strftime("%H:%M:%S")
        count = len(page.records)
        limit = (
            " (the row limit: raise Rows to see more)" if count >= page.query.max_records else ""
        )
        self._say(f"{plural(page.query.kind, count)}, {order}{limit} · updated {stamp}")
        self._selection_changed()

    def _on_failure(self, message: str) -> None:
        self.last_error = message
        kept = ""
        if self.page is not None:
            kept = f" — showing the list from {self.page.fetched_at.astimezone():%H:%M:%S}"
        self._say(f"{message}{kept}; retrying", "error")

    # -- copying ----------------------------------------------------------------------------

    def selected_records(self) -> list[DepositRecord]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(row, 0).data(RECORD_ROLE) for row in rows]

    def _current_record(self) -> DepositRecord | None:
        selected = self.selected_records()
        if selected:
            return selected[0]
        current = self.table.currentIndex()
        return current.data(RECORD_ROLE) if current.isValid() else None

    def copy_hash(self) -> None:
        record = self._current_record()
        if record is not None and record.hash:
            self._copy(record.hash, f"Hash of {record.asset} record #{record.ordering}")

    def copy_current_cell(self) -> None:
        index = self.table.currentIndex()
        if index.isValid():
            header = self.proxy.headerData(index.column(), Qt.Orientation.Horizontal)
            self._copy(str(index.data(EXPORT_ROLE) or ""), str(header))

    def _copy_rows(self) -> None:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        if rows:
            self._copy(rows_as_tsv(self.proxy, rows), counted(len(rows), "row"))

    def _copy(self, text: str, what: str) -> None:
        copy_text(text)
        self._say(f"{what} copied")

    def _selection_changed(self, *_: object) -> None:
        record = self._current_record()
        self.copy_hash_button.setEnabled(record is not None and bool(record.hash))

    def _context_menu(self, point: QPoint) -> None:
        index = self.table.indexAt(point)
        if not index.isValid():
            return
        record: DepositRecord = index.data(RECORD_ROLE)
        menu = QMenu(self.table)
        menu.setObjectName("depositsMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        entries = (
            ("Copy hash", record.hash, "Hash"),
            ("Copy transaction id", record.transaction_id, "Transaction id"),
            ("Copy address", record.address, "Address"),
        )
        for text, value, what in entries:
            if value:
                action = menu.addAction(text)
                action.triggered.connect(lambda _=False, v=value, w=what: self._copy(v, w))
        menu.addAction("Copy selected rows").triggered.connect(self._copy_rows)
        menu.popup(self.table.viewport().mapToGlobal(point))

    # -- export -----------------------------------------------------------------------------

    def ask_export(self) -> QFileDialog:
        """Ask where to save (non-blocking), then write the table as shown."""
        kind = self.query().kind
        name = f"{kind}s-{datetime.now():%Y%m%d-%H%M%S}.csv"
        return ask_and_export(
            self, self.proxy, name, self._exported, self._export_failed, self._context.settings
        )

    def export_to(self, path: Path) -> int:
        """Write the table as shown to ``path`` (what the dialog does once a file is chosen)."""
        try:
            rows = export_csv(self.proxy, path)
        except OSError as exc:
            self._export_failed(path, exc)
            return 0
        self._exported(path, rows)
        return rows

    def _exported(self, path: Path, rows: int) -> None:
        message = f"Exported {counted(rows, 'row')} to {path}"
        self._say(message)
        self._context.notify(LogLevel.INFO, message)

    def _export_failed(self, path: Path, exc: OSError) -> None:
        message = f"Could not write {path}: {exc.strerror or exc}"
        self._say(message, "error")
        self._context.notify(LogLevel.ERROR, message)

    # -- reading (tests, other panels) --------------------------------------------------------

    def shown_orderings(self) -> list[int]:
        """Record numbers as the table shows them, top to bottom."""
        return [
            self.proxy.index(row, 0, QModelIndex()).data(RECORD_ROLE).ordering
            for row in range(self.proxy.rowCount())
        ]
