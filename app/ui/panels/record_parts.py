"""Pieces the record docks (orders, ledger, deposits) share: an optional date-time bound, the
table view with Enter for details and Ctrl+C for exact rows, the choice lists of pairs and assets,
``RecordPanel`` (the status line and Details…, Copy row and Export CSV… with what they do), and
``stop_with``: a panel's feed stops when the panel goes. An error on the status line is in the
theme's error colour, restyled when the theme switches.

The filter row and the action row are ``FlowLayout``s: at any dock width every filter and
button stays inside the panel, wrapping onto a further row when the dock is narrow instead of
being cut off at its edge (the docks were clipped at 1400 and 1920 px)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import (
    QAbstractItemModel,
    QDateTime,
    QMargins,
    QModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QFocusEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.services.log_events import LogLevel
from app.ui.column_sizer import ColumnSizer
from app.ui.csv_export import ask_and_export, rows_as_tsv
from app.ui.level_text import restyle_level, show_level
from app.ui.models.record_cells import Index
from app.ui.models.record_view import RecordView
from app.ui.palette import TradePalette, follow_palette
from app.ui.panels.base import PanelContext
from app.ui.record_details import RecordDetailsDialog
from app.ui.tasks import TaskOwner
from app.ui.widgets.copy_field import copy_text
from app.ui.widgets.read_only_table import (
    focus_keeps_look,
    read_only_rows,
    repaint_focus,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: The free-text search box of a record dock is never narrower than this (px).
SEARCH_MIN_WIDTH = 160


def to_utc(value: QDateTime) -> datetime:
    """The moment a date-time edit shows, as an aware UTC datetime (whole milliseconds)."""
    return _EPOCH + timedelta(milliseconds=value.toMSecsSinceEpoch())


def from_utc(moment: datetime) -> QDateTime:
    milliseconds = (moment - _EPOCH) // timedelta(milliseconds=1)
    return QDateTime.fromMSecsSinceEpoch(milliseconds)


class OptionalDateTime(QWidget):
    """A check box and a date-time edit (local time): unchecked means no bound."""

    changed = Signal()

    def __init__(self, label: str, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.check = QCheckBox(label, self)
        self.check.setObjectName(f"{name}Enabled")
        self.edit = QDateTimeEdit(self)
        self.edit.setObjectName(name)
        self.edit.setCalendarPopup(True)
        self.edit.setDisplayFormat("yyyy-MM-dd HH:mm:ss")
        self.edit.setDateTime(QDateTime.currentDateTime())
        self.edit.setEnabled(False)
        self.edit.setAccessibleName(label)
        self.check.toggled.connect(self.edit.setEnabled)
        self.check.toggled.connect(self.changed)
        self.edit.dateTimeChanged.connect(lambda _: self.changed.emit())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.check)
        layout.addWidget(self.edit)
        self.setFocusProxy(self.check)

    def value(self) -> datetime | None:
        return to_utc(self.edit.dateTime()) if self.check.isChecked() else None

    def set_value(self, moment: datetime | None) -> None:
        if moment is not None:
            self.edit.setDateTime(from_utc(moment))
        self.check.setChecked(moment is not None)


class FlowLayout(QLayout):
    """Widgets left to right at their preferred width, wrapping onto a new row when the next one
    does not fit; on each row, widgets whose horizontal size policy expands (a search box) share
    what is left. Height follows width (``heightForWidth``), so the panel grows a row rather
    than clipping or scrolling sideways."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        """One row of everything (what the layout would like)."""
        visible = self._visible()
        width = sum(item.sizeHint().width() for item in visible)
        width += self._gap * max(0, len(visible) - 1)
        height = max((item.sizeHint().height() for item in visible), default=0)
        margins = self.contentsMargins()
        return QSize(width, height) + QSize(
            margins.left() + margins.right(), margins.top() + margins.bottom()
        )

    def minimumSize(self) -> QSize:
        """As narrow as the widest single widget: everything else wraps."""
        size = QSize()
        for item in self._visible():
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _visible(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _rows(self, width: int) -> list[list[QLayoutItem]]:
        rows: list[list[QLayoutItem]] = []
        used = 0
        for item in self._visible():
            wanted = item.sizeHint().width()
            if rows and used + self._gap + wanted <= width:
                rows[-1].append(item)
                used += self._gap + wanted
            else:
                rows.append([item])
                used = wanted
        return rows

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        """Place the items in ``rect`` (when ``move``); returns the height they take."""
        inner = rect.marginsRemoved(self.contentsMargins())
        margins: QMargins = self.contentsMargins()
        y = inner.y()
        rows = self._rows(inner.width())
        for number, row in enumerate(rows):
            height = max(item.sizeHint().height() for item in row)
            if move:
                widths = [min(item.sizeHint().width(), inner.width()) for item in row]
                spare = inner.width() - sum(widths) - self._gap * (len(row) - 1)
                growing = [
                    index
                    for index, item in enumerate(row)
                    if item.expandingDirections() & Qt.Orientation.Horizontal
                ]
                for index in growing:
                    widths[index] += max(0, spare) // len(growing)
                x = inner.x()
                for item, width in zip(row, widths, strict=True):
                    item.setGeometry(QRect(QPoint(x, y), QSize(width, height)))
                    x += width + self._gap
            y += height + (self._gap if number < len(rows) - 1 else 0)
        return y - rect.y() + margins.bottom() if rows else margins.top() + margins.bottom()


def within(widget: QWidget, container: QWidget) -> bool:
    """Whether ``widget`` lies wholly inside ``container`` (tests: nothing clipped)."""
    top_left = widget.mapTo(container, QPoint(0, 0))
    return container.rect().contains(QRect(top_left, widget.size()))


class RecordTable(QTableView):
    """A read-only row-selecting table: Enter asks for details, Ctrl+C copies the selected rows
    as tab-separated exact text (``copy_rows``)."""

    detailsRequested = Signal(QModelIndex)

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        header = read_only_rows(self)
        self.sizer = ColumnSizer(self)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header.setSortIndicatorClearable(True)  # third click: back to newest first
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.setSortingEnabled(True)
        self.copy_action = QAction("Copy row", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy_rows)
        self.addAction(self.copy_action)
        self.doubleClicked.connect(self.detailsRequested)

    def setModel(self, model: QAbstractItemModel | None) -> None:
        """Columns sized by ``sizer`` (``app.ui.column_sizer``): each as wide as its title and
        the widest value in view, numbers and times whole, ids giving way first."""
        super().setModel(model)
        self.sizer.follow(model)

    def focusInEvent(self, event: QFocusEvent) -> None:
        """A click that brings the focus (on a column title, to sort) repaints only what the
        focus changes: Qt repaints every row (5–11 ms at 100,000 rows), and a big sort's own
        repaint follows soon after. Tab and other keys go Qt's way (it picks a current row)."""
        if event.reason() == Qt.FocusReason.MouseFocusReason and focus_keeps_look(self):
            self.setAttribute(Qt.WidgetAttribute.WA_InputMethodEnabled, False)  # never edited
            repaint_focus(self)
            return
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        """Leaving for the search box repaints only what the focus changes (as coming in)."""
        if focus_keeps_look(self):
            repaint_focus(self)
            return
        super().focusOutEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.detailsRequested.emit(self.currentIndex())
            event.accept()
            return
        super().keyPressEvent(event)

    def selected_rows(self) -> list[int]:
        """Selected rows of the view's model, top to bottom."""
        return sorted(index.row() for index in self.selectionModel().selectedRows())

    def copy_rows(self) -> str:
        """Put the selected rows (else the current one) on the clipboard; returns the text."""
        model = self.model()
        rows = self.selected_rows()
        if not rows and self.currentIndex().isValid():
            rows = [self.currentIndex().row()]
        if not rows:
            return ""
        text = rows_as_tsv(model, rows)
        copy_text(text)
        return text


def fill_choices(box: QComboBox, anything: str, values: list[str]) -> None:
    """``anything`` (data "") then each value; keeps the current choice when it is still there."""
    current = box.currentData()
    box.blockSignals(True)
    box.clear()
    box.addItem(anything, "")
    for value in values:
        box.addItem(value, value)
    found = box.findData(current)
    box.setCurrentIndex(max(0, found))
    box.blockSignals(False)


def worded(anything: str, words: Mapping[str, str]) -> list[tuple[str, str]]:
    """``anything`` (data "") then each value's words (data: the value): a filter's choices."""
    return [(anything, ""), *((text, value) for value, text in words.items())]


def counted(count: int, one: str, many: str | None = None) -> str:
    """``1 order``, ``2 orders``, ``1,234 entries``: the number grouped like every number the
    trader reads, the noun agreeing with it."""
    noun = one if count == 1 else (many or f"{one}s")
    return f"{count:,} {noun}"


def known_assets(pairs: Sequence[str]) -> list[str]:
    """Every asset of ``pairs`` (e.g. the session's available pairs), sorted."""
    assets = set()
    for pair in pairs:
        assets.update(pair.split("/"))
    return sorted(assets)


class Feed(Protocol):
    async def stop(self) -> None: ...


def stop_with(widget: QWidget, feed: Feed) -> None:
    """When ``widget`` is destroyed, stop ``feed`` (in a task: the ``destroyed`` signal cannot
    await). The feed's topics reach the widget through ``QtTopic``s it owns."""
    name = f"{widget.objectName()} feed stop"
    # The widget's own owner, connected to ``destroyed`` first: its cancel runs before the
    # stop is spawned, so the stop (the widget's last task) runs to its end, referenced by
    # the owner and reported if it fails.
    owner = TaskOwner(widget)

    def detach(*_: object) -> None:  # a plain function, not a slot of the dying widget
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop any more: nothing is polling
        owner.spawn(feed.stop(), name)

    widget.destroyed.connect(detach)


class RecordPanel(QWidget):
    """Base of the record docks (orders, ledger). A dock sets ``proxy``, ``table`` (from
    ``_record_table``), the buttons of ``_record_buttons`` and ``status_label`` where its tab
    order wants them, places them with ``_lay_out``, and says in ``details_of`` how one of its
    rows opens."""

    #: The file name the export dialog offers, and what one row and many rows are called in
    #: its notice and on the status line.
    export_name = "records.csv"
    record_words = ("record", "records")

    proxy: RecordView
    table: RecordTable
    details_button: QPushButton
    copy_button: QPushButton
    export_button: QPushButton
    status_label: QLabel

    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self.details_dialog: RecordDetailsDialog | None = None
        self.export_dialog: QFileDialog | None = None
        follow_palette(self.set_palette)

    def _record_table(self, prefix: str, title: str) -> RecordTable:
        """The table over ``proxy``; Enter and double-click open the details. The widths the
        trader drags are kept under ``prefix`` (``columnWidths/<prefix>``)."""
        table = RecordTable(f"{prefix}Table", self)
        table.setAccessibleName(title)
        table.setModel(self.proxy)
        table.sizer.remember(self._context.settings, prefix)
        table.detailsRequested.connect(self.show_details)
        return table

    def _choice_box(
        self, name: str, title: str, choices: Sequence[tuple[str, str]] = ()
    ) -> QComboBox:
        """A filter combo box: its object name, what a screen reader says, (label, data) items."""
        box = QComboBox(self)
        box.setObjectName(name)
        box.setAccessibleName(title)
        for label, data in choices:
            box.addItem(label, data)
        return box

    def _search_box(self, name: str, placeholder: str, title: str = "Search") -> QLineEdit:
        """The free-text box every record dock has: clearable, never narrower than it reads."""
        box = QLineEdit(self)
        box.setObjectName(name)
        box.setPlaceholderText(placeholder)
        box.setAccessibleName(title)
        box.setClearButtonEnabled(True)
        box.setMinimumWidth(SEARCH_MIN_WIDTH)
        return box

    def _button(self, text: str, name: str, tooltip: str) -> QPushButton:
        """A push button of the dock with its object name and tooltip (Refresh, Search)."""
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setToolTip(tooltip)
        return button

    def _status_line(self, prefix: str, text: str = "") -> QLabel:
        """The status line's label (``<prefix>StatusLabel``), ``text`` until the first read."""
        label = QLabel(text, self)
        label.setObjectName(f"{prefix}StatusLabel")
        return label

    def _on_edit(self, slot: Callable[..., object], *filters: QWidget) -> None:
        """Call ``slot`` whenever one of ``filters`` (a combo box, text box, date-time bound or
        spin box) changes: every query dock re-reads on any of them."""
        for widget in filters:
            if isinstance(widget, QComboBox):
                widget.currentIndexChanged.connect(slot)
            elif isinstance(widget, QLineEdit):
                widget.textChanged.connect(slot)
            elif isinstance(widget, OptionalDateTime):
                widget.changed.connect(slot)
            elif isinstance(widget, QSpinBox):
                widget.valueChanged.connect(slot)
            else:
                raise TypeError(f"not a filter: {widget!r}")

    def _load_more_button(self, prefix: str, tooltip: str) -> QPushButton:
        """Load more (disabled until a page says there is more), as every paged dock has it."""
        button = QPushButton("Load more", self)
        button.setObjectName(f"{prefix}LoadMore")
        button.setToolTip(tooltip)
        button.setEnabled(False)
        return button

    def _record_buttons(self, prefix: str) -> tuple[QPushButton, QPushButton, QPushButton]:
        """Details…, Copy row and Export CSV…, wired to the table (made already)."""
        details = QPushButton("Details…", self)
        details.setObjectName(f"{prefix}Details")
        copy = QPushButton("Copy row", self)
        copy.setObjectName(f"{prefix}Copy")
        copy.setToolTip("Copy the selected rows as exact text (Ctrl+C)")
        export = QPushButton("Export CSV…", self)
        export.setObjectName(f"{prefix}Export")
        details.clicked.connect(lambda: self.show_details(self.table.currentIndex()))
        copy.clicked.connect(self.table.copy_rows)
        export.clicked.connect(self.ask_export)
        return details, copy, export

    def _lay_out(self, query_row: QLayout, *before_buttons: QWidget) -> QVBoxLayout:
        """The query row on top, the table, then the status line, ``before_buttons`` and
        Details…, Copy row, Export CSV… (each row a ``FlowLayout``: it wraps when narrow)."""
        actions = FlowLayout()
        self.status_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        actions.addWidget(self.status_label)
        for widget in (*before_buttons, self.details_button, self.copy_button, self.export_button):
            actions.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(query_row)
        layout.addWidget(self.table, 1)
        layout.addLayout(actions)
        return layout

    def _say(self, text: str, *, error: bool = False) -> None:
        """``text`` on the status line; an error in the error colour. The level stays on the
        label (property "level") so a theme switch can restyle it."""
        show_level(self.status_label, text, "error" if error else "")

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the status line in the new colour of its level."""
        restyle_level(self.status_label, palette)

    # -- details, copy, export ------------------------------------------------------------------

    def details_of(self, row: int) -> RecordDetailsDialog:
        """The details dialog of the source model's ``row``."""
        raise NotImplementedError

    def show_details(self, index: Index) -> RecordDetailsDialog | None:
        if not index.isValid():
            return None
        dialog = self.details_of(self.proxy.mapToSource(index).row())
        dialog.open()
        self.details_dialog = dialog
        return dialog

    def export_to(self, path: Path) -> int:
        """The current view (filter and sort) to ``path``; returns the rows written. (The
        same writer as Export CSV…, which runs it in slices.)"""
        return self.proxy.export_now(path)

    def ask_export(self) -> QFileDialog:
        self.export_dialog = ask_and_export(
            self,
            self.proxy,
            self.export_name,
            lambda path, rows: self._context.notify(
                LogLevel.INFO, f"Exported {self.count_text(rows)} to {path}"
            ),
            lambda path, exc: self._context.notify(
                LogLevel.ERROR, f"Cannot write {path}: {exc.strerror or exc}"
            ),
            self._context.settings,
            self.proxy.export,
        )
        return self.export_dialog

    def count_text(self, count: int) -> str:
        """``1 order``, ``1,234 orders``."""
        return counted(count, *self.record_words)

    def sort_by(self, column: int, order: Qt.SortOrder) -> None:
        self.table.sortByColumn(int(column), order)
