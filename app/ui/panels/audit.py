"""The audit trail dock: every order and quote accept this terminal sent, from the
order journal, newest first — intent and send times to the millisecond, outcome, server ids —
with filters, details (the exact JSON body sent and every field), copy and CSV export, so a
trader or a compliance officer can reconstruct a session.

It never polls the server: it reads the local journal (``app.services.audit_trail``) and makes
the new rows' cells off the GUI thread (a page read again unchanged is not applied at all), when
a desk publishes a result or an unknown outcome changes (through ``QtTopic``s of the trail's
sources), on a slow timer while shown (``REFRESH_MS``, for what the settling service writes
without publishing), and when the filters change (``APPLY_MS`` after the last edit). One read
at a time: a read asked for meanwhile runs once the current one ends. A hidden dock reads
nothing until it is shown again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QWidget

from app.services.audit_trail import (
    KIND_WORDS,
    MAX_ROWS,
    OUTCOMES,
    PAGE,
    AuditPage,
    AuditQuery,
    AuditRow,
    AuditTrail,
)
from app.services.log_events import LogLevel
from app.ui.bridge import QtTopic
from app.ui.models.audit_model import EXPORT_ONLY, AuditModel
from app.ui.models.keyed_table import Cells
from app.ui.models.record_view import RecordView
from app.ui.panels.base import PanelContext
from app.ui.panels.record_parts import (
    FlowLayout,
    OptionalDateTime,
    RecordPanel,
    counted,
    worded,
)
from app.ui.record_details import RecordDetailsDialog
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer

#: Filter edits apply this long after the last change (ms).
APPLY_MS = 300
#: A desk's results come in bursts (an answer, then its settling): read once they pause (ms).
CHANGED_MS = 150
#: While shown, the journal is read again this often (ms): only the local file, never the server.
REFRESH_MS = 5000


def audit_details(row: AuditRow, parent: QWidget | None = None) -> RecordDetailsDialog:
    """Every field, and the body exactly as journaled (for an order: the bytes that were sent)."""
    note = (
        "The exact JSON body sent"
        if row.kind != "accept"
        else "As journaled: the quote's id (sent in the request's path) and the side (the body)"
    )
    return RecordDetailsDialog(
        f"{row.what} · {row.outcome}", row.fields(), row.body, json_note=note, parent=parent
    )


class AuditPanel(RecordPanel):
    export_name = "audit-trail.csv"
    record_words = ("entry", "entries")

    def __init__(
        self,
        context: PanelContext,
        trail: AuditTrail,
        parent: QWidget | None = None,
        *,
        refresh_ms: int = REFRESH_MS,
    ) -> None:
        super().__init__(context, parent)
        self.setObjectName("auditPanel")
        self.trail = trail
        self.tasks = TaskOwner(self, self._task_failed)
        self.page: AuditPage | None = None
        self.limit = PAGE
        self.reading = False
        self.reads = 0  # reads finished (tests wait on it)
        self._again = False  # a read was asked for while one ran
        self._stale = True  # the journal may have changed since the last read

        self.model = AuditModel(context.precision, self)
        self.proxy = RecordView(self)
        self.proxy.setSourceModel(self.model)
        self.table = self._record_table("audit", "Audit trail")
        for key in EXPORT_ONLY:  # exported, copied and in the details: not on screen
            self.table.setColumnHidden(self.model.column(key), True)

        # -- filters --------------------------------------------------------------------------
        self.outcome_filter = self._choice_box(
            "auditOutcome", "Outcome filter", worded("Any outcome", OUTCOMES)
        )
        self.kind_filter = self._choice_box(
            "auditKind", "Type filter", worded("Any type", KIND_WORDS)
        )
        self.start_filter = OptionalDateTime("From", "auditFrom", self)
        self.start_filter.setToolTip("Intent time from (local time)")
        self.end_filter = OptionalDateTime("To", "auditTo", self)
        self.end_filter.setToolTip("Intent time before (local time; the end is exclusive)")
        self.search = self._search_box("auditSearch", "Search words and ids…")
        context.records.show.connect(self._show_record)
        self.search.setToolTip("Every word, in what was sent, its ids, outcome, detail or body")

        # -- actions --------------------------------------------------------------------------
        self.refresh_button = self._button("Refresh", "auditRefresh", "Read the journal again now")
        self.load_more_button = self._load_more_button("audit", f"Show {PAGE:,} older entries too")
        self.details_button, self.copy_button, self.export_button = self._record_buttons("audit")
        self.export_button.setToolTip(
            "Save the entries shown, in this order, to a CSV file (times in UTC and local, ms)"
        )
        self.status_label = self._status_line("audit", "Reading the journal…")

        query: tuple[QWidget, ...] = (  # a change to any of them reads the journal again
            self.outcome_filter,
            self.kind_filter,
            self.start_filter,
            self.end_filter,
            self.search,
        )
        filters = FlowLayout()
        for widget in query:
            filters.addWidget(widget)
        self._lay_out(filters, self.load_more_button, self.refresh_button)
        QWidget.setTabOrder(self.end_filter, self.search)
        QWidget.setTabOrder(self.search, self.table)

        self.apply_timer = make_timer(self, APPLY_MS, self.read, single_shot=True)
        self.changed_timer = make_timer(self, CHANGED_MS, self.read, single_shot=True)
        self.refresh_timer = make_timer(self, refresh_ms, self.read, name="auditRefreshTimer")
        self._on_edit(self._filters_edited, *query)
        self.search.returnPressed.connect(self.read)
        self.refresh_button.clicked.connect(self.read)
        self.load_more_button.clicked.connect(self.load_more)
        self.sources: list[QtTopic[Any]] = []
        for source in trail.sources:
            topic: QtTopic[Any] = QtTopic(source, self)
            topic.connect(self._journal_changed)
            self.sources.append(topic)

    # -- when to read ---------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh_timer.start()
        if self._stale:
            self.read()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.refresh_timer.stop()

    def _journal_changed(self, _: object) -> None:
        """A desk published a result: the journal changed (read shortly, if shown)."""
        self._stale = True
        if self.isVisible():
            self.changed_timer.start()

    def _filters_edited(self, *_: object) -> None:
        self.limit = PAGE  # a new question starts from the newest page again
        self.apply_timer.start()

    def load_more(self) -> None:
        self.limit = min(self.limit + PAGE, MAX_ROWS)
        self.read()

    def current_query(self) -> AuditQuery:
        return AuditQuery(
            status=str(self.outcome_filter.currentData() or ""),
            kind=str(self.kind_filter.currentData() or ""),
            text=self.search.text().strip(),
            since=self.start_filter.value(),
            until=self.end_filter.value(),
            limit=self.limit,
        )

    def read(self) -> None:
        """Read the journal with the filters as they are (after the current read, if one runs)."""
        self.apply_timer.stop()
        self.changed_timer.stop()
        if self.reading:
            self._again = True
            return
        query = self.current_query()
        try:
            query.validate()
        except ValueError as exc:
            self._say(f"Not searched: {exc}", error=True)
            return
        self.reading = True
        self._again = False
        self._stale = False
        self.tasks.spawn(self._read(query), "read the audit trail")

    async def _read(self, query: AuditQuery) -> None:
        """Read, and make the new rows' cells, off the GUI thread; then only place them."""
        bridge = self._context.bridge
        shown = () if self.page is None else self.page.rows  # what the model shows
        try:
            page = await self.trail.read(query, bridge.available_pairs, self._context.precision)
            prepared = await asyncio.to_thread(self.model.prepare, page, shown)
        finally:
            self.reading = False
        self._show(page, prepared)
        self.reads += 1
        if self._again:
            self.read()

    def _show(self, page: AuditPage, prepared: dict[AuditRow, Cells] | None) -> None:
        self.page = page
        if prepared is not None:  # None: the rows shown are the rows read
            self.model.set_page(page, prepared)
        more = page.more and self.limit < MAX_ROWS
        self.load_more_button.setEnabled(more)
        text = self.count_text(len(page.rows))
        if page.scanned > len(page.rows):
            text += f" (of {counted(page.scanned, 'journal entry', 'journal entries')} read)"
        if page.more:
            older = "Load more" if more else "narrow the filters"
            text = f"Newest {text} · older ones: {older}"
        self._say(text)

    def _task_failed(self, what: str, exc: BaseException) -> None:
        self._say(f"Cannot read the journal: {exc}", error=True)
        self._context.notify(LogLevel.ERROR, f"Audit trail: {what} failed: {exc}")

    # -- details --------------------------------------------------------------------------------

    def details_of(self, row: int) -> RecordDetailsDialog:
        return audit_details(self.model.audit_row(row), self)

    def _show_record(self, panel: str, words: str) -> None:
        """Another dock asked to show a record here: its words in the search box."""
        if panel == "audit":
            self.search.setText(words)
