"""The session's quote history as a table: requested, accepted (with the milliseconds that were
left), expired, refused and unknown quotes, newest first (the desk's order, not sortable).

Rows only ever arrive (one ``beginInsertRows`` at the top per event); the texts of a row are
computed once when it arrives, not on every paint. The event column's colour comes from the
palette in force (accepted in its up blue, refused and unknown in its down orange, expired
grey) and follows a theme switch.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.domain.money import format_trimmed
from app.services.rfq_desk import QuoteEvent
from app.ui.formatting import DASH
from app.ui.palette import TradePalette, current_palette, follow_palette

Index = QModelIndex | QPersistentModelIndex

#: What each event kind is called in the table.
KIND_TEXT = {
    "requested": "requested",
    "accepted": "accepted",
    "expired": "expired",
    "refused": "refused",
    "unknown": "outcome unknown",
}
#: Which palette colour each event kind is shown in (others: ordinary text).
KIND_COLOUR = {"accepted": "up", "refused": "down", "unknown": "down", "expired": "stale"}
#: Shown quote ids are cut to this many characters (the tooltip has the whole id).
SHORT_ID = 8


class Column(IntEnum):
    TIME = 0
    EVENT = 1
    SIDE = 2
    PAIR = 3
    SIZE = 4
    MS_LEFT = 5
    QUOTE = 6
    DETAILS = 7


HEADERS = {
    Column.TIME: "Time",
    Column.EVENT: "Event",
    Column.SIDE: "Side",
    Column.PAIR: "Pair",
    Column.SIZE: "Size",
    Column.MS_LEFT: "Left (ms)",
    Column.QUOTE: "Quote",
    Column.DETAILS: "Details",
}
RIGHT_ALIGNED = frozenset({Column.SIZE, Column.MS_LEFT})
#: The widest text each column usually holds: the column widths are set once, from these.
SAMPLES = {
    Column.TIME: "00:00:00.000",
    Column.EVENT: "outcome unknown",
    Column.SIDE: "sell",
    Column.PAIR: "USDT/USD",
    Column.SIZE: "0.00000000 BTC",
    Column.MS_LEFT: "00,000",
    Column.QUOTE: "00000000",
}
CELL_PADDING = 16


def kind_colour(kind: str, palette: TradePalette) -> QColor | None:
    """The event column's colour for ``kind`` in ``palette`` (None: ordinary text)."""
    name = KIND_COLOUR.get(kind)
    if name is None:
        return None
    colour: QColor = getattr(palette, name)
    return colour


def row_texts(event: QuoteEvent) -> tuple[str, ...]:
    local = event.at.astimezone()
    return (
        local.strftime("%H:%M:%S.") + f"{local.microsecond // 1000:03d}",
        KIND_TEXT.get(event.kind, event.kind),
        event.side or DASH,
        event.pair,
        f"{format_trimmed(event.size.value)} {event.size.asset}",
        DASH if event.ms_left is None else f"{event.ms_left:,}",
        event.quote_id[:SHORT_ID],
        event.message,
    )


class QuoteHistoryModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._events: list[QuoteEvent] = []  # newest first
        self._texts: list[tuple[str, ...]] = []
        self._palette = current_palette()
        follow_palette(self.set_palette)

    def set_palette(self, palette: TradePalette) -> None:
        """Recolour the event column: one signal, the foreground role only."""
        if palette == self._palette:
            return
        self._palette = palette
        if self._events:
            self.dataChanged.emit(
                self.index(0, Column.EVENT),
                self.index(len(self._events) - 1, Column.EVENT),
                [Qt.ItemDataRole.ForegroundRole],
            )

    def add(self, event: QuoteEvent) -> None:
        self.beginInsertRows(QModelIndex(), 0, 0)
        self._events.insert(0, event)
        self._texts.insert(0, row_texts(event))
        self.endInsertRows()

    def extend(self, events: Iterable[QuoteEvent]) -> None:
        for event in events:
            self.add(event)

    def event_at(self, row: int) -> QuoteEvent:
        return self._events[row]

    def events(self) -> list[QuoteEvent]:
        """Oldest first, as the desk records them."""
        return list(reversed(self._events))

    # -- QAbstractTableModel ------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._events)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._events):
            return None
        column = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._texts[index.row()][column]
        if role == Qt.ItemDataRole.ToolTipRole:
            event = self._events[index.row()]
            if column == Column.QUOTE:
                return event.quote_id
            if column == Column.DETAILS and event.message:
                return event.message
            return None
        if role == Qt.ItemDataRole.ForegroundRole and column == Column.EVENT:
            return kind_colour(self._events[index.row()].kind, self._palette)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            align = Qt.AlignmentFlag
            horizontal = align.AlignRight if column in RIGHT_ALIGNED else align.AlignLeft
            return int(horizontal | align.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(Column)
        ):
            return HEADERS[Column(section)]
        return None


class QuoteHistoryView(QTableView):
    """Read-only rows, fixed-height lines, columns sized once for their usual content."""

    def __init__(self, model: QuoteHistoryModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Quote history")
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        metrics = self.fontMetrics()
        for column, sample in SAMPLES.items():
            text = metrics.horizontalAdvance(sample) + CELL_PADDING
            self.setColumnWidth(column, max(header.sectionSizeFromContents(column).width(), text))
