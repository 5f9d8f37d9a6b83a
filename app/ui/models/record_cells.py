"""What the record tables (orders, ledger, transfers) share: cells computed once per record
(display text, sort key, exact export text), a table model that applies a new list of records
with the smallest change (rows removed, inserted, or changed cells — a reset only when the
order of known records changed), and a sort proxy with a free-text filter.

Display shows numbers at least at the asset's precision but never rounds a digit away; the
export text is exact (``app.ui.csv_export.export_value``); times show in local time and export
as ISO 8601 UTC; times and numbers sort as numbers.

Colours come from the palette in force (``app.ui.palette``): a record model follows the theme and,
on a switch, repaints its ``colour_roles`` over the whole table in one ``dataChanged``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QFontDatabase

from app.domain import Price
from app.ui.csv_export import EXPORT_ROLE, export_value
from app.ui.formatting import DASH, format_number
from app.ui.models.sorting import SORT_ROLE, DecimalSortProxy
from app.ui.palette import TradePalette, current_palette, follow_palette

Index = QModelIndex | QPersistentModelIndex
SortKey = Decimal | str | None
#: The record behind a row (an OrderRow, a LedgerRow, ...), under any column.
RECORD_ROLE = int(Qt.ItemDataRole.UserRole) + 21
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Cell(NamedTuple):
    display: str
    sort: SortKey
    export: str


def decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def exact_number(value: Decimal, places: int) -> str:
    """Grouped, with at least ``places`` decimals and every decimal the value has."""
    return format_number(value, max(places, decimals(value)))


def local_time_text(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def time_key(moment: datetime) -> Decimal:
    """Microseconds since 1970 as a Decimal: times sort as numbers."""
    delta = moment - _EPOCH
    return Decimal((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def time_cell(moment: datetime | None) -> Cell:
    if moment is None:
        return Cell(DASH, None, "")
    return _time_cell(moment)


@lru_cache(maxsize=4096)
def _time_cell(moment: datetime) -> Cell:
    """Cached: the legs of a trade, and every poll of the same orders, share their times."""
    return Cell(local_time_text(moment), time_key(moment), export_value(moment))


def number_cell(value: Decimal | None, places: int, *, signed: bool = False) -> Cell:
    if value is None:
        return Cell(DASH, None, "")
    text = format_number(value, max(places, decimals(value)), signed=signed)
    return Cell(text, value, export_value(value))


def price_cell(price: Price | None, places: int) -> Cell:
    """``90,000.50 BTC/USD`` on screen; the exact number alone in the export."""
    if price is None:
        return Cell(DASH, None, "")
    text = f"{exact_number(price.value, places)} {price.base}/{price.quote}"
    return Cell(text, price.value, export_value(price.value))


def text_cell(text: str) -> Cell:
    return Cell(text, text or None, text)


def signal_changed_cells(model: QAbstractItemModel, row: int, columns: Sequence[int]) -> None:
    """One ``dataChanged`` per run of adjacent ``columns`` (ascending) of ``row``: the cells
    that did not change are not repainted, and Qt merges the repaints of the runs."""
    start = 0
    while start < len(columns):
        end = start
        while end + 1 < len(columns) and columns[end + 1] == columns[end] + 1:
            end += 1
        model.dataChanged.emit(model.index(row, columns[start]), model.index(row, columns[end]))
        start = end + 1


def signal_whole_table(model: QAbstractItemModel, roles: Sequence[int]) -> None:
    """One ``dataChanged`` over every cell for ``roles`` only: a theme switch changes the
    colours of the whole table and nothing else (an empty table needs no signal)."""
    rows, columns = model.rowCount(), model.columnCount()
    if rows and columns and roles:
        model.dataChanged.emit(model.index(0, 0), model.index(rows - 1, columns - 1), list(roles))


class RecordTableModel(QAbstractTableModel):
    """Rows of precomputed cells keyed by a record id. Subclasses give the headers and may
    answer more roles in ``extra_data``, taking their colours from ``palette``."""

    #: The roles whose values come from the palette: repainted, and only they, on a switch.
    colour_roles: tuple[int, ...] = ()

    def __init__(
        self,
        headers: Sequence[str],
        tooltips: dict[int, str],
        numeric: frozenset[int],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._headers = tuple(headers)
        self._tooltips = dict(tooltips)
        self._numeric = numeric
        self._keys: list[Hashable] = []
        self._records: list[Any] = []
        self._cells: list[tuple[Cell, ...]] = []
        self.number_font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._palette = current_palette()
        follow_palette(self.set_palette)

    # -- colours --------------------------------------------------------------------------------

    @property
    def palette(self) -> TradePalette:
        return self._palette

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the new colours, one repaint of ``colour_roles`` over the table.
        Subclasses that derive colours from the palette refresh them before calling this."""
        if palette == self._palette:
            return
        self._palette = palette
        signal_whole_table(self, self.colour_roles)

    # -- feeding --------------------------------------------------------------------------------

    def apply(self, rows: Sequence[tuple[Hashable, Any, tuple[Cell, ...]]], *, reset: bool) -> None:
        """Show ``rows`` (key, record, cells) in this order with the smallest change."""
        keys = [key for key, _, _ in rows]
        wanted = set(keys)
        if reset or len(wanted) != len(keys):
            self._reset(rows)
            return
        # Remove what went, bottom up, one signal per run of adjacent rows.
        row = len(self._keys) - 1
        while row >= 0:
            if self._keys[row] in wanted:
                row -= 1
                continue
            end = row
            while row - 1 >= 0 and self._keys[row - 1] not in wanted:
                row -= 1
            self.beginRemoveRows(QModelIndex(), row, end)
            del self._keys[row : end + 1], self._records[row : end + 1], self._cells[row : end + 1]
            self.endRemoveRows()
            row -= 1
        kept = set(self._keys)
        if self._keys != [key for key in keys if key in kept]:
            self._reset(rows)  # known records changed places: not worth a move plan
            return
        position = 0
        while position < len(rows):
            key, record, cells = rows[position]
            if position < len(self._keys) and self._keys[position] == key:
                old = self._cells[position]
                self._records[position], self._cells[position] = record, cells
                self._signal_changed(position, old, cells)
                position += 1
                continue
            # A run of new records (known ones keep their relative order): one insert.
            end = position
            while end < len(rows) and rows[end][0] not in kept:
                end += 1
            run = rows[position:end]
            self.beginInsertRows(QModelIndex(), position, end - 1)
            self._keys[position:position] = [key for key, _, _ in run]
            self._records[position:position] = [record for _, record, _ in run]
            self._cells[position:position] = [cells for _, _, cells in run]
            self.endInsertRows()
            position = end

    def _reset(self, rows: Sequence[tuple[Hashable, Any, tuple[Cell, ...]]]) -> None:
        self.beginResetModel()
        self._keys = [key for key, _, _ in rows]
        self._records = [record for _, record, _ in rows]
        self._cells = [cells for _, _, cells in rows]
        self.endResetModel()

    def _signal_changed(self, row: int, old: tuple[Cell, ...], new: tuple[Cell, ...]) -> None:
        changed = [column for column, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        signal_changed_cells(self, row, changed)

    def signal_rows(self, rows: Sequence[int], roles: Sequence[int]) -> None:
        """Repaint whole rows for ``roles`` (e.g. a highlight that ended)."""
        last = len(self._headers) - 1
        for row in rows:
            self.dataChanged.emit(self.index(row, 0), self.index(row, last), list(roles))

    # -- reading --------------------------------------------------------------------------------

    def keys(self) -> list[Hashable]:
        return list(self._keys)

    def record(self, row: int) -> Any:
        return self._records[row]

    def row_of(self, key: Hashable) -> int:
        return self._keys.index(key)

    def cell(self, row: int, column: int) -> Cell:
        return self._cells[row][column]

    # -- Qt model interface ---------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._headers):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltips.get(section)
        if role == Qt.ItemDataRole.TextAlignmentRole and section in self._numeric:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row, column = index.row(), index.column()
        if not index.isValid() or not 0 <= row < len(self._keys):
            return None
        if not 0 <= column < len(self._headers):
            return None
        cell = self._cells[row][column]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.display
        if role == SORT_ROLE:
            return cell.sort
        if role == EXPORT_ROLE:
            return cell.export
        if role == RECORD_ROLE:
            return self._records[row]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            horizontal = (
                Qt.AlignmentFlag.AlignRight
                if column in self._numeric
                else Qt.AlignmentFlag.AlignLeft
            )
            return horizontal | Qt.AlignmentFlag.AlignVCenter
        if role == Qt.ItemDataRole.FontRole and column in self._numeric:
            return self.number_font
        return self.extra_data(row, column, role)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        """More roles for subclasses (colours, tooltips)."""
        return None


class RecordSortProxy(DecimalSortProxy):
    """Numbers and times sort as numbers; ``set_text`` keeps the rows whose display or exact
    text contains the words typed (all of them, any case)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._words: list[str] = []

    def set_text(self, text: str) -> None:
        words = text.casefold().split()
        if words == self._words:
            return
        if hasattr(self, "endFilterChange"):  # Qt 6.10+: invalidateRowsFilter is deprecated
            self.beginFilterChange()
            self._words = words
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._words = words
            self.invalidateRowsFilter()

    @property
    def text(self) -> str:
        return " ".join(self._words)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self._words:
            return True
        model = self.sourceModel()
        texts = []
        for column in range(model.columnCount()):
            index = model.index(source_row, column, source_parent)
            texts.append(str(model.data(index, Qt.ItemDataRole.DisplayRole) or ""))
            texts.append(str(model.data(index, EXPORT_ROLE) or ""))
        haystack = "\n".join(texts).casefold()
        return all(word in haystack for word in self._words)
