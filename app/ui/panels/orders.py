"""The order list dock: the account's orders, polled (every 2 s by default: Settings, feeds,
orders) and at once after a fill, newest on top with new ones highlighted; filters, sorting,
load more, details, copy and CSV export.

Filter changes apply 300 ms after the last edit (a new query from the newest order); status,
type, pair, asset and time range go to the server (see ``app.services.order_feed``), the
search box filters what is shown. "Load more" reads the page before the oldest order shown.

The table is in the trader's terms (``app.ui.models.orders_model``); the wire's columns are
hidden here and exported. The header's context menu shows or hides the others
(``app.ui.column_choice``, kept under ``columns/orders``); the wire's are not offered. The
service offers no cancel, so a resting order's end time matters: while resting orders with an
end time are shown, a timer (once a second) refreshes their time left in server time, without
polling.

Each fill's mid at fill and the basis points against it come from the chart's stored
mids (``app.services.mid_history``, the store the chart panel of this window records into,
found by its folder), looked up once per fill by the feed; the details list them too.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtGui import QAction, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QWidget,
)

from app.domain import utc_now
from app.services.errors import ReadFailed
from app.services.journal import OrderJournal
from app.services.log_events import LogLevel
from app.services.mid_history import MidHistory, history_of
from app.services.order_feed import (
    DEFAULT_PAGE,
    ORDER_TYPES,
    OrderFilter,
    OrdersSnapshot,
)
from app.services.poller import FeedStatus
from app.services.unknown_outcomes import UnknownOutcomes
from app.ui.bridge import QtTopic
from app.ui.column_choice import ColumnChoice
from app.ui.models.orders_model import (
    WIRE_COLUMNS,
    OrdersModel,
    OrdersProxy,
    economics_fields,
)
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import history_folder
from app.ui.panels.record_parts import (
    FlowLayout,
    OptionalDateTime,
    RecordPanel,
    fill_choices,
    known_assets,
    stop_with,
)
from app.ui.preferences import Preferences
from app.ui.record_details import RecordDetailsDialog, order_fields, order_json
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer
from app.ui.widgets.unknown_outcomes import UnknownOutcomesStrip

#: Filter edits apply this long after the last change (ms).
APPLY_MS = 300
#: The time left of resting orders is refreshed this often (ms): at most once a second.
TIME_LEFT_MS = 1000
STATUS_CHOICES = (
    ("Any status", ""),
    ("filled", "filled"),
    ("resting (submitted)", "submitted"),
    ("canceled", "canceled"),
    ("rejected", "rejected"),
)


class OrdersPanel(RecordPanel):
    export_name = "orders.csv"
    record_words = ("order", "orders")

    def __init__(
        self,
        context: PanelContext,
        journal: OrderJournal | None = None,
        outcomes: UnknownOutcomes | None = None,
        parent: QWidget | None = None,
        *,
        interval: float | None = None,
        page_size: int = DEFAULT_PAGE,
        mids: MidHistory | None = None,
    ) -> None:
        """``interval``: seconds between polls; by default the "orders" feed preference.
        ``outcomes``: the orders and accepts not known, shown above the list until settled.
        ``mids``: the stored mids fills are measured against; by default the chart's store of
        this environment (``history_folder``)."""
        super().__init__(context, parent)
        self.setObjectName("ordersPanel")
        bridge = context.bridge
        self.tasks = TaskOwner(self, self._task_failed)
        if interval is None:
            interval = float(Preferences.load(context.settings).orders)
        self.feed = bridge.feeds.order_feed(journal, interval=interval, page_size=page_size)
        if mids is None:
            folder = history_folder(context.settings, bridge.environment)
            self.feed.use_mids(lambda: history_of(folder))
        else:
            self.feed.use_mids(lambda: mids)
        self.snapshot: OrdersSnapshot | None = None
        self._snapshots = 0  # lists received; a big one shown late yields to a newer one
        self._loading_more = False

        self.model = OrdersModel(context.precision, self, now=self.server_now)
        self.proxy = OrdersProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = self._record_table("orders", "Orders")
        self.columns = ColumnChoice.of_model(
            self.table, "orders", self.model.columns, context.settings, WIRE_COLUMNS
        )
        for key in WIRE_COLUMNS:  # exported and copied, read in the details: never on screen
            self.columns.menu.removeAction(self.columns.actions[key])
            self.table.setColumnHidden(self.model.column(key), True)
        self.time_left_timer = make_timer(
            self, TIME_LEFT_MS, self.model.refresh_time_left, name="ordersTimeLeft"
        )

        # -- filters --------------------------------------------------------------------------
        self.status_filter = self._choice_box("ordersStatus", "Status filter", STATUS_CHOICES)
        self.type_filter = self._choice_box("ordersType", "Type filter")
        fill_choices(self.type_filter, "Any type", list(ORDER_TYPES))
        self.pair_filter = self._choice_box("ordersPair", "Pair filter (either direction)")
        self.pair_filter.setToolTip("Orders between the two assets of the pair, either direction")
        fill_choices(self.pair_filter, "Any pair", sorted(bridge.available_pairs))
        self.asset_filter = self._choice_box("ordersAsset", "Asset filter (sold or bought)")
        self.asset_filter.setToolTip("Orders selling or buying the asset")
        fill_choices(self.asset_filter, "Any asset", known_assets(bridge.available_pairs))
        self.start_filter = OptionalDateTime("From", "ordersFrom", self)
        self.end_filter = OptionalDateTime("To", "ordersTo", self)
        self.search = self._search_box("ordersSearch", "Search shown orders…")
        context.records.show.connect(self._show_record)

        # -- actions --------------------------------------------------------------------------
        self.load_more_button = self._load_more_button(
            "orders", "Read the orders before the oldest one shown"
        )
        self.details_button, self.copy_button, self.export_button = self._record_buttons("orders")
        self.export_button.setToolTip("Save the orders shown, in this order, to a CSV file")
        self.status_label = self._status_line("orders", "Loading orders…")
        self.details_action = QAction("Details…", self)
        self.table.addAction(self.details_action)

        query: tuple[QWidget, ...] = (  # a change to any of them asks the server again
            self.status_filter,
            self.type_filter,
            self.pair_filter,
            self.asset_filter,
            self.start_filter,
            self.end_filter,
        )
        filters = FlowLayout()  # wraps onto a second row in a narrow dock
        for widget in query:
            filters.addWidget(widget)
        filters.addWidget(self.search)
        layout = self._lay_out(filters, self.load_more_button)
        self.unknowns: UnknownOutcomesStrip | None = None
        if outcomes is not None:
            self.unknowns = UnknownOutcomesStrip(outcomes, self)
            layout.insertWidget(1, self.unknowns)  # between the filters and the table
        QWidget.setTabOrder(self.end_filter, self.search)
        QWidget.setTabOrder(self.search, self.table)

        self._apply_timer = make_timer(self, APPLY_MS, self.apply_filters, single_shot=True)
        self._on_edit(self._filters_edited, *query)
        self.search.textChanged.connect(self.proxy.set_text)
        self.search.textChanged.connect(lambda _: self._show_count())
        self.proxy.viewChanged.connect(self._show_count)  # a deferred sort or filter is shown
        self.load_more_button.clicked.connect(self.load_more)
        self.details_action.triggered.connect(lambda: self.show_details(self.table.currentIndex()))
        context.bridge.watchlistChanged.connect(self._refresh_choices)
        self.snapshots: QtTopic[OrdersSnapshot] = QtTopic(self.feed.updates, self)
        self.feed_statuses: QtTopic[FeedStatus] = QtTopic(self.feed.poller.status, self)
        self.snapshots.connect(self._on_snapshot)
        self.feed_statuses.connect(self._on_feed_status)
        stop_with(self, self.feed)
        self.feed.start()

    async def stop_feed(self) -> None:
        await self.feed.stop()

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings > feeds > orders: the poll interval, at once."""
        self.feed.poller.interval = float(prefs.orders)

    # -- visibility: a hidden list (closed dock, tab behind another) is not polled -------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.feed.set_active(True)
        self._arm_time_left()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.feed.set_active(False)
        self.time_left_timer.stop()

    # -- time left ------------------------------------------------------------------------------

    def server_now(self) -> datetime:
        """The service's time: resting orders end by its clock, not this machine's."""
        return utc_now() + self._context.bridge.clock_offset

    def _arm_time_left(self) -> None:
        """Tick only while resting orders with an end time are shown and the list is seen."""
        if self.isVisible() and self.model.counting_down():
            if not self.time_left_timer.isActive():
                self.model.refresh_time_left()
                self.time_left_timer.start()
        else:
            self.time_left_timer.stop()

    # -- filters --------------------------------------------------------------------------------

    def _refresh_choices(self, *_: object) -> None:
        """The pairs and assets are known once the session has read them."""
        pairs = self._context.bridge.available_pairs
        fill_choices(self.pair_filter, "Any pair", sorted(pairs))
        fill_choices(self.asset_filter, "Any asset", known_assets(pairs))

    def current_filter(self) -> OrderFilter:
        return OrderFilter(
            status=str(self.status_filter.currentData() or ""),
            order_type=str(self.type_filter.currentData() or ""),
            pair=str(self.pair_filter.currentData() or ""),
            asset=str(self.asset_filter.currentData() or ""),
            start=self.start_filter.value(),
            end=self.end_filter.value(),
        )

    def _filters_edited(self, *_: object) -> None:
        self._apply_timer.start()

    def apply_filters(self) -> bool:
        """Send the filters to the feed now; False (and a message) when they are invalid."""
        self._apply_timer.stop()
        wanted = self.current_filter()
        if wanted == self.feed.filter:
            return True
        try:
            self.feed.set_filter(wanted)
        except ValueError as exc:
            self._say(f"Filter not applied: {exc}", error=True)
            return False
        return True

    # -- feed -----------------------------------------------------------------------------------

    def _on_snapshot(self, snapshot: OrdersSnapshot) -> None:
        """A poll's list: at once when small; a big one (tens of thousands of orders loaded)
        as sliced jobs, a newer list dropping an older one still being taken in."""
        self._snapshots += 1
        if len(snapshot.rows) + self.model.rowCount() > self.model.sync_rows:
            self.tasks.spawn(self._show_big(snapshot, self._snapshots), "show the orders")
            return
        self.snapshot = snapshot
        self.model.set_snapshot(snapshot)
        self._shown(snapshot)

    async def _show_big(self, snapshot: OrdersSnapshot, number: int) -> None:
        if await self.model.show_snapshot(snapshot, lambda: number == self._snapshots):
            self.snapshot = snapshot
            self._shown(snapshot)

    def _shown(self, snapshot: OrdersSnapshot) -> None:
        self.load_more_button.setEnabled(snapshot.more and not self._loading_more)
        self._arm_time_left()
        self._show_count()

    def _on_feed_status(self, status: FeedStatus) -> None:
        if status.failures and status.last_error is not None:
            self._say(f"Cannot read the orders ({status.last_error}); retrying", error=True)
        else:
            self._show_count()

    def _show_count(self) -> None:
        snapshot = self.snapshot
        if snapshot is None or snapshot.loading:
            self._say("Loading orders…")
            return
        shown, loaded = self.proxy.rowCount(), self.model.rowCount()
        text = (
            self.count_text(loaded)
            if shown == loaded
            else f"{shown:,} of {self.count_text(loaded)}"
        )
        if snapshot.more:
            text += " · older ones: Load more"
        self._say(text)

    def load_more(self) -> None:
        if self._loading_more:
            return
        self._loading_more = True
        self.load_more_button.setEnabled(False)
        self.tasks.spawn(self._load_more(), "load more orders")

    async def _load_more(self) -> None:
        try:
            added = await self.feed.load_more()
        except ReadFailed as exc:
            self._say(f"Cannot load older orders: {exc.message}", error=True)
            self._context.notify(LogLevel.ERROR, f"Orders: cannot load older orders: {exc.message}")
        else:
            if added == 0:
                self._say("No older orders")
        finally:
            self._loading_more = False
            if self.snapshot is not None:
                self.load_more_button.setEnabled(self.snapshot.more)

    def _task_failed(self, what: str, exc: BaseException) -> None:
        self._loading_more = False
        self._context.notify(LogLevel.ERROR, f"Orders: {what} failed: {exc}")

    # -- details --------------------------------------------------------------------------------

    def details_of(self, row: int) -> RecordDetailsDialog:
        """The order's fields as the service sent them, then its mid at fill (computed)."""
        record = self.model.order_row(row)
        return RecordDetailsDialog(
            f"Order {record.order_id} · {record.terms.pair_side}",
            [*order_fields(record), *economics_fields(record)],
            order_json(record.order),
            parent=self,
        )

    def _show_record(self, panel: str, words: str) -> None:
        """Another dock asked to show a record here: its words in the search box."""
        if panel == "orders":
            self.search.setText(words)
