"""The positions dock (Ctrl+9): where the trader stands per asset — quantity, average
cost, mark, market value, unrealised P&L, realised P&L today and since a chosen day, share of
the portfolio — with a totals row, CSV export and a small chart of P&L over time.

Two paces:

- **The ledger-derived part** (``PositionsService.refresh``: new ledger entries, the cache's
  check, first marks, the book) runs off the tick path: when the dock is shown, every
  ``REFRESH_MS`` while shown, shortly after a fill or after the balances' holdings stop
  matching the table (a deposit or withdrawal credited), on Refresh, and when Settings change
  the valuation currency. One refresh at a time; one asked for meanwhile runs after it. A
  hidden dock, or one behind another tab, reads and re-values nothing until it is in front.
- **Marks**: the positions service follows the market itself and, at every new top of book,
  re-values the last book (no request, no pass over the ledger) and publishes the report
  (``PositionsService.reports``) while the dock is in front. The dock only renders: the newest
  report is painted in a frame of the application's frame clock at most every
  ``MARK_SECONDS``, and only the cells that changed are repainted. The columns keep their
  widths (fitted only when rows come or go, or a refresh ends), the status line is in a
  ``TextHost``: a tick never relayouts the window.

Settings (cost method, "since" day, valuation currency) apply at once (``apply_preferences``):
the book is made again from the entries already read. "Set cost of deposits…" (the table's
context menu) gives an entry the trader's own unit cost (``app.ui.cost_dialog``).

The chart (``app.ui.widgets.pnl_chart``) is computed after each refresh and every
``CHART_MS`` while shown, from the entries, the book's realisations and the chart's stored mids
(read on a worker thread); it is redrawn only when its lines changed.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPoint, QSettings, Qt, QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.domain.positions import CostMethod, MarkKey
from app.services.errors import ReadFailed
from app.services.log_events import LogLevel
from app.services.mid_history import MidHistory
from app.services.pnl_history import MidReader, grid, pnl_series, unit_history
from app.services.positions import PositionsCache, PositionsReport, PositionsService
from app.services.session import Environment
from app.ui.bridge import Freshness, QtTopic
from app.ui.cost_dialog import CostChoice, CostDialog
from app.ui.csv_export import ask_and_export
from app.ui.frame_clock import FrameClock, shared_frame_clock
from app.ui.level_text import restyle_level, show_level
from app.ui.models.positions_model import (
    EXPORT_ONLY,
    ExportHeaders,
    PositionsModel,
    PositionsSortProxy,
)
from app.ui.palette import TradePalette, follow_palette
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import history_folder
from app.ui.preferences import Preferences
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer
from app.ui.widgets.live_text import TextHost
from app.ui.widgets.pnl_chart import WINDOW_KEY, PnlChart
from app.ui.widgets.read_only_table import read_only_rows

#: While shown, the ledger is read again this often (ms).
REFRESH_MS = 30_000
#: A fill or a credited deposit comes with its settling: read once they pause (ms).
CHANGED_MS = 700
#: Marks are re-valued at most this often (s): the top-of-book poll is 0.5 s by default.
MARK_SECONDS = 0.25
#: While shown, the chart is computed again this often (ms): the stored mids move on.
CHART_MS = 60_000
STATUS_SAMPLE = "Ledger to #0000000 · read 00:00:00 · in USDT · average cost · 000 without a value"
#: Ledger event types that take a cost the trader enters.
COSTED = ("deposit", "withdrawal", "initialBalances")


def positions_cache_path(settings: QSettings, environment: Environment) -> Path:
    """``positions.db`` in the folder the chart history lives under: the user data directory,
    or beside the settings file when the settings are not the user's own (a test)."""
    return history_folder(settings, environment).parent.parent / "positions.db"


class PositionsPanel(QWidget):
    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        service: PositionsService | None = None,
        mids: MidReader | None = None,
        refresh_ms: int = REFRESH_MS,
        frames: FrameClock | None = None,
    ) -> None:
        """``service``: the positions service (default: one over ``positions.db``);
        ``mids``: the stored mids of a pair (default: the chart's history)."""
        super().__init__(parent)
        self.setObjectName("positionsPanel")
        self._context = context
        bridge = context.bridge
        prefs = Preferences.load(context.settings)
        self._since: datetime | None = prefs.since()
        if service is None:
            path = positions_cache_path(context.settings, bridge.environment)
            cache = PositionsCache(path)
            service = bridge.feeds.positions(
                cache, currency=prefs.valuation_currency, method=prefs.cost_method()
            )
            self.destroyed.connect(lambda *_: cache.close())
        self.service = service
        service.since = self._since
        service.active = False  # until the dock is in front
        if mids is None:
            store = MidHistory(history_folder(context.settings, bridge.environment))
            self.destroyed.connect(lambda *_: store.close())
            mids = store.read
        self._mids = mids
        self._frames = frames if frames is not None else shared_frame_clock()
        self.tasks = TaskOwner(self, self._task_failed)
        self.report: PositionsReport | None = None
        self.refreshing = False
        self.refreshes = 0  # refreshes finished, chart included (tests wait on it)
        self.revaluations = 0  # re-valuations at new marks
        self.rebuilds = 0  # books made again after a setting or a cost changed
        self._again = False
        self._stale = True  # the ledger may have moved since the last refresh
        self._pending: PositionsReport | None = None  # the newest re-valuation not painted
        self._marks_due = False
        self._front = False  # shown, and not behind another tab
        self._hooked = False
        self._fitted: dict[int, int] = {}  # column -> the longest text it was fitted to
        self._read_at: datetime | None = None
        self.cost_dialog: CostDialog | None = None
        self.export_dialog: QFileDialog | None = None

        self.model = PositionsModel(context.precision, self)
        self.proxy = PositionsSortProxy(self, dynamic=False)
        self.proxy.setSourceModel(self.model)
        self.export_view = ExportHeaders(self.model, self.proxy)
        self.table = QTableView(self)
        self.table.setObjectName("positionsTable")
        self.table.setAccessibleName("Positions")
        self.table.setModel(self.proxy)
        read_only_rows(self.table).setStretchLastSection(False)  # columns fitted, no gap
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(self.model.column("asset"), Qt.SortOrder.AscendingOrder)
        for key in EXPORT_ONLY:
            self.table.setColumnHidden(self.model.column(key), True)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.menu: QMenu | None = None

        self.status_label = QLabel("Reading the ledger…", self)
        self.status_label.setObjectName("positionsStatusLabel")
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setObjectName("positionsRefresh")
        self.refresh_button.setToolTip("Read the new ledger entries and prices now")
        self.export_button = QPushButton("Export CSV…", self)
        self.export_button.setObjectName("positionsExport")
        self.export_button.setToolTip("Save the positions and totals, every digit, to a CSV file")
        self.refresh_button.clicked.connect(self.refresh)
        self.export_button.clicked.connect(self.ask_export)

        window = str(context.settings.value(WINDOW_KEY, "Day") or "Day")
        self.chart = PnlChart(window, self)
        self.chart.windowChanged.connect(self._window_chosen)

        left = QWidget(self)
        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        # hosted: the status line changes every refresh and never relayouts the window
        actions.addWidget(TextHost(self.status_label, STATUS_SAMPLE, left), 1)
        actions.addWidget(self.refresh_button)
        actions.addWidget(self.export_button)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.table, 1)
        column.addLayout(actions)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("positionsSplitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.chart)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([720, 280])  # scaled to the dock's width: the chart gets 30 %
        self.splitter.setChildrenCollapsible(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.splitter)
        follow_palette(self.set_palette)

        self.refresh_timer = make_timer(
            self, refresh_ms, self.refresh, name="positionsRefreshTimer"
        )
        self.changed_timer = make_timer(self, CHANGED_MS, self.refresh, single_shot=True)
        self.chart_timer = make_timer(self, CHART_MS, self._chart_due, name="positionsChartTimer")
        self._frames.listen(self._on_frame)
        self.freshness = bridge.freshness(bridge.top_of_book_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        self.model.modelReset.connect(self._fit_columns)
        self.model.rowsInserted.connect(self._fit_columns)
        self.reports: QtTopic[PositionsReport] = QtTopic(service.reports, self)
        self.reports.connect(self._on_report)
        self.moved: QtTopic[None] = QtTopic(service.moved, self)
        self.moved.connect(self._ledger_moved)

    async def stop_feed(self) -> None:
        """At quit: end a refresh under way before the connection closes (``OwnsFeed``)."""
        self.refresh_timer.stop()
        self.changed_timer.stop()
        self.chart_timer.stop()
        await self.tasks.aclose()

    # -- when to read ---------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        dock = self.parentWidget()
        if isinstance(dock, QDockWidget) and not self._hooked:
            # A dock behind another tab stays "visible" (moved off screen): its tab's changes
            # come as the dock's visibilityChanged.
            self._hooked = True
            dock.visibilityChanged.connect(self._tab_changed)
        self._tab_changed()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._set_front(False)

    def _tab_changed(self, *_: object) -> None:
        """Look once the dock area has placed the tabs (a zero-time timer)."""
        QTimer.singleShot(0, self, self._look)

    def _look(self) -> None:
        self._set_front(self.isVisible() and not self.visibleRegion().isEmpty())

    @property
    def in_front(self) -> bool:
        """Shown and not behind another tab: only then does the dock read and re-value."""
        return self._front

    def _set_front(self, front: bool) -> None:
        if front == self._front:
            return
        self._front = front
        self.service.active = front
        if not front:
            self.refresh_timer.stop()
            self.chart_timer.stop()
            return
        self.refresh_timer.start()
        self.chart_timer.start()
        if self._stale:
            self.refresh()
        elif self._marks_due:
            self._frames.request()

    def _ledger_moved(self, *_: object) -> None:
        """The service says the ledger moved (a fill, a credited deposit): read shortly, if
        shown."""
        self._stale = True
        if self._front:
            self.changed_timer.start()

    def refresh(self) -> None:
        """Read the ledger's new entries and the prices (after the current read, if one runs)."""
        self.changed_timer.stop()
        if self.refreshing:
            self._again = True
            return
        self.refreshing = True
        self._again = False
        self._stale = False
        self.tasks.spawn(self._refresh(), "refresh positions")

    async def _refresh(self) -> None:
        try:
            report = await self.service.refresh(since=self._since)
        except ReadFailed as exc:
            self._stale = True
            when = "" if self._read_at is None else f" (figures as of {self._read_at:%H:%M:%S})"
            show_level(self.status_label, f"Cannot read the ledger: {exc}{when}", "error")
            return
        finally:
            self.refreshing = False
        self._read_at = datetime.now()
        self._show(report)
        self._fit_columns()
        await self._update_chart()
        self.refreshes += 1
        if self._again:
            self.refresh()

    # -- marks on the frame clock ---------------------------------------------------------------

    def _on_report(self, report: PositionsReport) -> None:
        """The service re-valued the book at new prices: painted on the next frame."""
        self._pending = report
        if not self._marks_due:
            self._marks_due = True
            if self._front:
                self._frames.request(MARK_SECONDS)

    def _freshness_changed(self, freshness: Freshness) -> None:
        """Stale prices (offline, a failing feed): the marks and all that follows from them
        are greyed, with the reason as the table's tooltip."""
        self.model.set_stale(freshness.stale)
        self.table.setToolTip(freshness.reason if freshness.stale else "")

    def _on_frame(self, _now: float) -> None:
        """Paint the newest re-valuation the service published (only when one came, and
        shown)."""
        if not self._marks_due or self.report is None or not self._front:
            return
        self._marks_due = False
        report = self._pending
        if report is None:
            return
        self.revaluations += 1
        self._show(report, status=False)
        self._fit_grown()

    def _show(self, report: PositionsReport, *, status: bool = True) -> None:
        self._pending = None  # a re-valuation published before this report is older than it
        self.report = report
        self.model.set_table(report.table)
        if status:
            self._say_status(report)

    def _say_status(self, report: PositionsReport) -> None:
        last = report.last_ordering
        parts = ["No ledger entries" if last is None else f"Ledger to #{last}"]
        if self._read_at is not None:
            parts.append(f"read {self._read_at:%H:%M:%S}")
        method = report.table.method
        parts.append(f"in {report.table.currency}")
        parts.append("FIFO" if method is CostMethod.FIFO else "average cost")
        level = ""
        if report.unpriced:
            count = len(report.unpriced)
            parts.append(f"{count} {'entry' if count == 1 else 'entries'} without a value")
            level = "warning"
        if report.rebuilt:
            parts.append("cache rebuilt from the ledger")
        show_level(self.status_label, " · ".join(parts), level)

    def _fit_columns(self, *_: object) -> None:
        """Every column to its contents (rows came or went, a refresh ended)."""
        self._fitted = {
            c: max(map(len, self.model.column_texts(c)), default=0)
            for c in range(self.model.columnCount())
        }
        self.table.resizeColumnsToContents()

    def _fit_grown(self) -> None:
        """After new marks: only the columns whose longest text grew (never a shrink and
        grow on every tick)."""
        for column in range(self.model.columnCount()):
            longest = max(map(len, self.model.column_texts(column)), default=0)
            if longest > self._fitted.get(column, 0):
                self._fitted[column] = longest
                self.table.resizeColumnToContents(column)

    # -- settings -------------------------------------------------------------------------------

    def apply_preferences(self, prefs: Preferences) -> None:
        """Cost method, "since" day and valuation currency, at once: the since day re-reads
        the book's realisations; a new method or currency makes the book again from the
        entries already read, in slices (``rebuilds`` counts them)."""
        self._since = prefs.since()
        self.service.since = self._since
        rebuild = False
        method = prefs.cost_method()
        if method is not self.service.method:
            self.service.set_method(method, rebuild=False)
            rebuild = True
        if prefs.valuation_currency != self.service.currency:
            self.service.set_currency(prefs.valuation_currency, rebuild=False)
            rebuild = True
            self._stale = True  # entries get their first marks in it at the next refresh
            if self._front:
                self.refresh()
        if rebuild:
            self.tasks.spawn(self._rebuilt(), "make the positions again")
        elif self.report is not None:
            self._show(self.service.report(since=self._since))
            self._fit_columns()
            self.tasks.spawn(self._update_chart(), "chart positions")

    async def _rebuilt(self) -> None:
        """The book made again (in slices), then shown with its chart."""
        await self.service.rebuild()
        if self.report is not None:
            self._show(self.service.report(since=self._since))
            self._fit_columns()
            await self._update_chart()
        self.rebuilds += 1

    # -- cost of deposits -----------------------------------------------------------------------

    def cost_choices(self, asset: str) -> list[CostChoice]:
        """The asset's deposits, withdrawals and initial balances, newest first."""
        values = self.report.values if self.report is not None else {}
        found = [
            CostChoice(key, entry.event_type, entry.amount, values.get(key))
            for entry in self.service.entries
            if entry.asset == asset and entry.event_type in COSTED and entry.amount
            for key in (MarkKey.of(entry),)
        ]
        return found[::-1]

    def open_cost_dialog(self, asset: str) -> CostDialog:
        dialog = CostDialog(
            asset, self.service.currency, self.cost_choices(asset), self._context.precision, self
        )
        dialog.costSet.connect(self.set_cost)
        dialog.finished.connect(lambda _: dialog.deleteLater())
        dialog.open()
        self.cost_dialog = dialog
        return dialog

    def set_cost(self, transaction_id: str, asset: str, unit: Decimal | None) -> None:
        """The trader's unit cost (None: the first mark again), shown at once."""
        self.service.set_cost(transaction_id, asset, unit, rebuild=False)
        self.tasks.spawn(self._rebuilt(), "make the positions again")
        what = "cost entered" if unit is not None else "back to its first mark"
        self._context.notify(LogLevel.INFO, f"Positions: {asset} entry {transaction_id}: {what}")

    def asset_at(self, index: QModelIndex) -> str | None:
        if not index.isValid():
            return None
        line = self.model.record(self.proxy.mapToSource(index).row())
        return None if line.total else line.asset

    def menu_for(self, asset: str | None) -> QMenu:
        """The table's context menu for the row of ``asset`` (None: no asset row)."""
        menu = QMenu(self)
        menu.setObjectName("positionsMenu")
        cost = menu.addAction("Set cost of deposits…")
        cost.setObjectName("positionsSetCost")
        cost.setEnabled(asset is not None and asset != self.service.currency)
        if asset is not None:
            cost.triggered.connect(lambda: self.open_cost_dialog(asset))
        menu.addSeparator()
        menu.addAction("Refresh", self.refresh)
        menu.addAction("Export CSV…", self.ask_export)
        return menu

    def _context_menu(self, point: QPoint) -> None:
        menu = self.menu_for(self.asset_at(self.table.indexAt(point)))
        menu.aboutToHide.connect(menu.deleteLater)
        self.menu = menu
        menu.popup(self.table.viewport().mapToGlobal(point))

    # -- export ---------------------------------------------------------------------------------

    def ask_export(self) -> QFileDialog:
        notify = self._context.notify
        self.export_dialog = ask_and_export(
            self,
            self.export_view,
            "positions.csv",
            lambda path, rows: notify(LogLevel.INFO, f"Exported {rows - 1} positions to {path}"),
            lambda path, exc: notify(LogLevel.ERROR, f"Cannot write {path}: {exc.strerror or exc}"),
            self._context.settings,
        )
        return self.export_dialog

    # -- the chart ------------------------------------------------------------------------------

    def _window_chosen(self, _seconds: int) -> None:
        self._context.settings.setValue(WINDOW_KEY, self.chart.window_name)
        self.tasks.spawn(self._update_chart(), "chart positions")

    def _chart_due(self) -> None:
        self.tasks.spawn(self._update_chart(), "chart positions")

    async def _update_chart(self) -> None:
        """The lines of the window chosen; the stored mids read on a worker thread."""
        report = self.report
        if report is None:
            return
        service, currency = self.service, self.service.currency
        assets = [row.asset for row in report.table.rows if row.asset != currency]
        pairs = self._context.bridge.available_pairs
        read = self._mids
        units = await asyncio.to_thread(
            lambda: {a: unit_history(a, currency, pairs, read) for a in assets}
        )
        marks = {row.asset: row.mark for row in report.table.rows}
        entries = service.entries
        first = entries[0].event_time.timestamp() if entries else None
        now = time.time()
        times = grid(now, self.chart.window_seconds, first=first)
        realised = service.book.realisations_of_priced()
        series = pnl_series(entries, realised, currency, times, units, marks, now=now)
        self.chart.set_series(series, currency)

    # -- looks ----------------------------------------------------------------------------------

    def set_palette(self, palette: TradePalette) -> None:
        restyle_level(self.status_label, palette)

    def _task_failed(self, what: str, exc: BaseException) -> None:
        show_level(self.status_label, f"Positions: {what} failed: {exc}", "error")
        self._context.notify(LogLevel.ERROR, f"Positions: {what} failed: {exc}")
