"""The ledger dock: Get Transactions with every filter of the seed and ``max``, paged
backwards, trade legs kept together, a running balance when filtered to one asset, details,
copy and CSV export.

The filters apply as they change: each edit (re)starts a ``APPLY_MS`` timer and the query runs
when the trader pauses, so a docked ledger needs no button at all (Search and Enter stay, as a
shortcut that runs it at once). It opens with the newest 100 transactions. Refresh reads with
the filters as they are now: a changed filter runs the new query, unchanged ones read the new
entries. After a fill, an open-ended query (no end time, no start ordering) adds the new
entries on top by itself. Queries never overlap: a newer one makes the older one's answer be
ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QRegularExpression
from PySide6.QtGui import QRegularExpressionValidator, QShowEvent
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from app.services.errors import ReadFailed
from app.services.ledger_browser import (
    DEFAULT_MAX,
    EVENT_TYPES,
    MAX_TRANSACTIONS,
    LedgerQuery,
    LedgerQueryError,
    LedgerSnapshot,
)
from app.services.log_events import LogLevel
from app.ui.models.ledger_model import LedgerModel, LedgerSortProxy
from app.ui.panels.base import PanelContext
from app.ui.panels.record_parts import (
    FlowLayout,
    OptionalDateTime,
    RecordPanel,
    counted,
    fill_choices,
    known_assets,
)
from app.ui.record_details import RecordDetailsDialog, ledger_details
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer

#: After a fill, wait this long for more before reading the new entries (ms).
FILL_REFRESH_MS = 300
#: Filters apply this long after the last edit (ms): a pause in typing, not every keystroke.
APPLY_MS = 300


class LedgerPanel(RecordPanel):
    export_name = "ledger.csv"
    record_words = ("entry", "entries")

    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(context, parent)
        self.setObjectName("ledgerPanel")
        bridge = context.bridge
        self.tasks = TaskOwner(self, self._task_failed)
        self.browser = bridge.feeds.ledger_browser()
        self.snapshot: LedgerSnapshot | None = None
        self.busy = False
        self._request = 0  # the newest request; older answers are ignored
        self._refresh_on_show = False  # a fill happened while the dock was hidden
        self._wanted: LedgerQuery | None = None  # the query last asked for

        self.model = LedgerModel(context.precision, self)
        self.proxy = LedgerSortProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = self._record_table("ledger", "Ledger")

        # -- the query ------------------------------------------------------------------------
        self.asset_filter = self._choice_box("ledgerAsset", "Asset")
        fill_choices(self.asset_filter, "Any asset", known_assets(bridge.available_pairs))
        self.type_filter = self._choice_box("ledgerType", "Event type")
        fill_choices(self.type_filter, "Any type", list(EVENT_TYPES))
        self.transaction_filter = QLineEdit(self)
        self.transaction_filter.setObjectName("ledgerTransaction")
        self.transaction_filter.setPlaceholderText("Transaction id")
        self.transaction_filter.setAccessibleName("Transaction id")
        self.transaction_filter.setClearButtonEnabled(True)
        self.start_filter = OptionalDateTime("From", "ledgerFrom", self)
        self.end_filter = OptionalDateTime("To", "ledgerTo", self)
        self.end_filter.setToolTip("Entries before this time (the end is exclusive)")
        self.ordering_filter = QLineEdit(self)
        self.ordering_filter.setObjectName("ledgerStartAt")
        self.ordering_filter.setPlaceholderText("Start at ordering")
        self.ordering_filter.setAccessibleName("Start at ordering")
        self.ordering_filter.setToolTip(
            "Begin at this ordering (at or below it, or at or above it: as the service pages)"
        )
        self.ordering_filter.setValidator(
            QRegularExpressionValidator(QRegularExpression(r"\d{0,18}"), self)
        )
        self.max_filter = QSpinBox(self)
        self.max_filter.setObjectName("ledgerMax")
        self.max_filter.setAccessibleName("Maximum transactions")
        self.max_filter.setToolTip("Transactions per page (both legs of a trade count once)")
        self.max_filter.setRange(1, MAX_TRANSACTIONS)
        self.max_filter.setValue(DEFAULT_MAX)
        self.max_filter.setPrefix("max ")
        self.search_button = self._button(
            "Search", "ledgerSearch", "Run the query now (it also runs by itself as you edit)"
        )
        self.search_button.setDefault(True)
        self.search_box = self._search_box(
            "ledgerText", "Search shown entries…", "Search shown entries"
        )

        # -- actions --------------------------------------------------------------------------
        self.load_more_button = self._load_more_button(
            "ledger", "Read the transactions before the oldest one shown"
        )
        self.refresh_button = self._button(
            "Refresh", "ledgerRefresh", "Read again with the filters as they are now"
        )
        self.details_button, self.copy_button, self.export_button = self._record_buttons("ledger")
        self.status_label = self._status_line("ledger")
        self.balance_note = QLabel("", self)
        self.balance_note.setObjectName("ledgerBalanceNote")

        query_row = FlowLayout()
        for widget in (
            self.asset_filter,
            self.type_filter,
            self.transaction_filter,
            self.start_filter,
            self.end_filter,
            self.ordering_filter,
            self.max_filter,
            self.search_button,
        ):
            query_row.addWidget(widget)
        query_row.addWidget(self.search_box)
        self._lay_out(query_row, self.balance_note, self.load_more_button, self.refresh_button)
        QWidget.setTabOrder(self.max_filter, self.search_button)
        QWidget.setTabOrder(self.search_button, self.search_box)
        QWidget.setTabOrder(self.search_box, self.table)

        self._fill_timer = make_timer(self, FILL_REFRESH_MS, self._after_fill, single_shot=True)
        self.apply_timer = make_timer(self, APPLY_MS, self.apply_filters, single_shot=True)
        self._on_edit(
            self._filters_edited,
            self.asset_filter,
            self.type_filter,
            self.transaction_filter,
            self.ordering_filter,
            self.start_filter,
            self.end_filter,
            self.max_filter,
        )
        self.search_button.clicked.connect(self.run_query)
        for edit in (self.transaction_filter, self.ordering_filter):
            edit.returnPressed.connect(self.run_query)
        self.search_box.textChanged.connect(self.proxy.set_text)
        self.search_box.textChanged.connect(lambda _: self._show_count())
        self.proxy.viewChanged.connect(self._show_count)  # a deferred sort or filter is shown
        self.load_more_button.clicked.connect(self.load_more)
        self.refresh_button.clicked.connect(self.refresh)
        bridge.fills.connect(self._on_fill)
        bridge.watchlistChanged.connect(self._refresh_choices)
        self.run_query()

    # -- queries --------------------------------------------------------------------------------

    def _on_fill(self, _: None) -> None:
        """A fill moved money: read the ledger again shortly (fills come in bursts)."""
        self._fill_timer.start()

    def _refresh_choices(self, *_: object) -> None:
        """The assets are known once the session has read the pairs."""
        pairs = self._context.bridge.available_pairs
        fill_choices(self.asset_filter, "Any asset", known_assets(pairs))

    def current_query(self) -> LedgerQuery:
        """The query the fields describe (LedgerQueryError for a value that cannot be sent)."""
        ordering = self.ordering_filter.text().strip()
        query = LedgerQuery(
            max_transactions=self.max_filter.value(),
            asset=str(self.asset_filter.currentData() or ""),
            event_type=str(self.type_filter.currentData() or ""),
            transaction_id=self.transaction_filter.text().strip(),
            start=self.start_filter.value(),
            end=self.end_filter.value(),
            start_at_ordering=int(ordering) if ordering else None,
        )
        query.validate()
        return query

    def _filters_edited(self, *_: object) -> None:
        """A filter changed: apply it once the trader pauses (``APPLY_MS``)."""
        self.apply_timer.start()

    def apply_filters(self) -> bool:
        """Run the query the fields describe unless it is the one shown (or being read);
        False (and a message) when a field is invalid."""
        query = self._query_or_say()
        if query is None:
            return False
        if query == self._wanted:
            return True
        return self.run_query()

    def _query_or_say(self) -> LedgerQuery | None:
        """The query the fields describe, or None after saying which field is invalid."""
        self.apply_timer.stop()
        try:
            return self.current_query()
        except LedgerQueryError as exc:
            self._say(f"Not searched: {exc.message}", error=True)
            return None

    def run_query(self) -> bool:
        """Search with the fields as they are; False (and a message) when they are invalid."""
        query = self._query_or_say()
        if query is None:
            return False
        self._wanted = query
        self._start(lambda: self.browser.load(query), "Reading the ledger…")
        return True

    def load_more(self) -> None:
        self.load_more_button.setEnabled(False)
        older = self.snapshot is None or self.snapshot.older
        self._start(self.browser.load_more, f"Reading {'older' if older else 'newer'} entries…")

    def refresh(self) -> None:
        """Read again with the filters as they are now: a query that changed runs anew (an
        invalid one says why); the same one reads only the new entries."""
        self.apply_timer.stop()
        try:
            query = self.current_query()
        except LedgerQueryError as exc:
            self._say(f"Not refreshed: {exc.message}", error=True)
            return
        if query != self.browser.query:
            self.run_query()
            return
        self._start(self.browser.refresh, "Reading new entries…")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._refresh_on_show:
            self._refresh_on_show = False
            self._fill_timer.start()

    def _after_fill(self) -> None:
        if not self.isVisible():
            self._refresh_on_show = True  # nobody sees it now: read the news when shown
        elif self.browser.query.open_ended and not self.busy:
            self.refresh()
        elif self.browser.query.open_ended:
            self._fill_timer.start()  # try again once the current read is done

    def _start(self, read: Callable[[], Coroutine[Any, Any, LedgerSnapshot]], message: str) -> None:
        self._request += 1
        self.busy = True
        self._say(message)
        self.tasks.spawn(self._read(read, self._request), "read the ledger")

    async def _read(
        self, read: Callable[[], Coroutine[Any, Any, LedgerSnapshot]], request: int
    ) -> None:
        try:
            snapshot = await read()
        except ReadFailed as exc:
            if request == self._request:
                self.busy = False
                self._say(f"Cannot read the ledger: {exc.message}", error=True)
                self._context.notify(LogLevel.ERROR, f"Ledger: {exc.message}")
            return
        if request != self._request:
            return  # a newer request owns the view
        # A big page's cells are made on the records worker; a newer request drops this one.
        if not await self.model.show_snapshot(snapshot, lambda: request == self._request):
            return
        self.busy = False
        self._shown(snapshot)

    def _apply(self, snapshot: LedgerSnapshot) -> None:
        self.model.set_snapshot(snapshot)
        self._shown(snapshot)

    def _shown(self, snapshot: LedgerSnapshot) -> None:
        """The model shows ``snapshot``: the note, Load more and the count follow."""
        self.snapshot = snapshot
        self.balance_note.setText(snapshot.balance_note)
        self.load_more_button.setEnabled(snapshot.more)
        self.load_more_button.setToolTip(
            "Read the transactions before the oldest one shown"
            if snapshot.older
            else "Read the transactions after the newest one shown (the service pages oldest first)"
        )
        self._show_count()

    def _show_count(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        rows = snapshot.rows  # groups are numbered 0, 1, … from the top: no pass over 100k rows
        transactions = rows[-1].group + 1 if rows else 0
        shown, loaded = self.proxy.rowCount(), self.model.rowCount()
        entries = self.count_text(loaded)
        if shown != loaded:
            entries = f"{shown:,} of {entries}"
        text = f"{entries} in {counted(transactions, 'transaction')}"
        if snapshot.more:
            text += f" · {'older' if snapshot.older else 'newer'} ones: Load more"
        if snapshot.paging_note:
            text += f" · {snapshot.paging_note}"
        self._say(text)

    def _task_failed(self, what: str, exc: BaseException) -> None:
        self.busy = False
        self._context.notify(LogLevel.ERROR, f"Ledger: {what} failed: {exc}")

    # -- details --------------------------------------------------------------------------------

    def details_of(self, row: int) -> RecordDetailsDialog:
        return ledger_details(self.model.ledger_row(row), self)
