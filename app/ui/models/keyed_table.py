"""One table model for every table: rows of records keyed by an id, columns from a list of
``Column`` specs (``app.ui.models.columns``).

Why one model: applying a new list of records with the smallest change (rows removed,
inserted, or only the changed cells signalled — a reset only when known rows changed places,
or a layout change where the table keeps its selection), telling the view which cells changed,
and following the theme are the same for the orders, the ledger, the transfers, the balances,
the watchlist and the depth ladder, so they live here once.

The model keeps the sort order itself (design.md §6: no ``QSortFilterProxyModel`` on live
tables): ``sort`` orders the rows by one column's sort keys with the tables' one sort
(``app.ui.models.sorting``), stable in the order the records were given; ``apply`` keeps new
data in that order (``set_dynamic_sort``: re-sorted on every update, or left where they are
until ``resort``); ``sort(-1)`` goes back to the order given. Rows change places by a layout
change: the view keeps its selection and current row.

Cells are computed once per record (never per paint). Colours come from the palette in
force: the model follows the theme (or keeps a palette given to it) and, on a switch,
repaints its ``colour_roles`` over the whole table in one ``dataChanged``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QFont

from app.domain.display import Precision
from app.ui.csv_export import EXPORT_ROLE
from app.ui.fonts import number_font
from app.ui.models.columns import ALIGN_NUMBER, Column, column_numbers
from app.ui.models.record_cells import RECORD_ROLE, Cell
from app.ui.models.sorting import SORT_ROLE, order_of
from app.ui.palette import TradePalette, current_palette, follow_palette

R = TypeVar("R")
Index = QModelIndex | QPersistentModelIndex
Cells = tuple[Cell, ...]

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


def runs(numbers: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous runs of ascending distinct integers: ``[1, 2, 5]`` -> ``[(1, 2), (5, 5)]``.
    (One pass, no sort: it runs for every changed row of every tick.)"""
    result: list[tuple[int, int]] = []
    if not numbers:
        return result
    first = last = numbers[0]
    for number in numbers[1:]:
        if number != last + 1:
            result.append((first, last))
            first = number
        last = number
    result.append((first, last))
    return result


def changed_columns(old: Cells, new: Cells) -> list[int]:
    """The columns whose cell differs, ascending."""
    if old == new:
        return []
    return [column for column in range(len(new)) if old[column] != new[column]]


class KeyedTableModel(QAbstractTableModel, Generic[R]):
    """Records of type ``R`` keyed by a hashable id, one row each, shown through ``columns``.

    Subclasses feed it with ``apply`` (a whole new list) or ``replace`` (one row), and may
    answer more roles in ``extra_data``.
    """

    #: The roles whose values come from the palette: repainted, and only they, on a switch.
    colour_roles: tuple[int, ...] = (Qt.ItemDataRole.ForegroundRole,)
    #: Known rows that change places: moved with a layout change (the view keeps selection and
    #: current row) when True, else the model resets.
    move_rows: bool = False

    def __init__(
        self,
        columns: Sequence[Column[R]],
        precision: Precision,
        parent: QObject | None = None,
        *,
        palette: TradePalette | None = None,
    ) -> None:
        """``palette``: None (the default) follows the theme; a palette given here stays."""
        super().__init__(parent)
        self._columns = tuple(columns)
        self._numbers = column_numbers(self._columns)
        self._width = len(self._columns)
        self._precision = precision
        self._cell_functions = tuple(column.cell for column in self._columns)
        self._keys: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._records: list[R] = []
        self._cells: list[Cells] = []
        self.number_font: QFont = number_font()
        self._palette = current_palette() if palette is None else palette
        self._stale = False
        #: The sort: column (-1: the order given), order, where "—" goes, whether an update
        #: re-sorts; the keys in the order ``apply`` gave them.
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder
        self._missing_first = False
        self._dynamic_sort = True
        self._given: list[Hashable] = []
        if palette is None:
            follow_palette(self.set_palette)

    # -- columns --------------------------------------------------------------------------------

    @property
    def columns(self) -> tuple[Column[R], ...]:
        return self._columns

    def column(self, key: str) -> int:
        """The number of the column ``key`` (KeyError for a key the table does not have)."""
        return self._numbers[key]

    def header(self, column: int) -> str:
        """The title of ``column``; subclasses add units that change at run time."""
        return self._columns[column].header

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
        self._repaint_colours()

    @property
    def stale(self) -> bool:
        return self._stale

    def set_stale(self, stale: bool) -> None:
        """Grey the table (its feed is stale) or give the cells their own colours back: one
        repaint of ``colour_roles``. Subclasses answer the grey in their colour roles."""
        if stale == self._stale:
            return
        self._stale = stale
        self._repaint_colours()

    def _repaint_colours(self) -> None:
        rows = len(self._keys)
        if rows and self.colour_roles:
            self.dataChanged.emit(
                self.createIndex(0, 0),
                self.createIndex(rows - 1, self._width - 1),
                list(self.colour_roles),
            )

    # -- feeding --------------------------------------------------------------------------------

    def cells_of(self, record: R) -> Cells:
        """Every column's cell of ``record``."""
        precision = self._precision
        return tuple([cell(record, precision) for cell in self._cell_functions])

    def apply(self, rows: Sequence[tuple[Hashable, R]], *, reset: bool = False) -> None:
        """Show ``rows`` (key, record) in this order with the smallest change: rows that went
        are removed, new ones inserted, kept ones signal only their changed cells."""
        built = [(key, record, self._cells_for(key, record)) for key, record in rows]
        self._given = [key for key, _, _ in built]
        if self._sort_column >= 0:
            built = self.in_sort_order(built)
        keys = [key for key, _, _ in built]
        wanted = set(keys)
        if reset or len(wanted) != len(keys):
            self._reset(built)
            return
        row = len(self._keys) - 1
        while row >= 0:  # removals, bottom up, one signal per run of adjacent rows
            if self._keys[row] in wanted:
                row -= 1
                continue
            end = row
            while row - 1 >= 0 and self._keys[row - 1] not in wanted:
                row -= 1
            self.beginRemoveRows(QModelIndex(), row, end)
            del self._keys[row : end + 1], self._records[row : end + 1], self._cells[row : end + 1]
            self._reindex()
            self.endRemoveRows()
            row -= 1
        kept = set(self._keys)
        order = [key for key in keys if key in kept]
        if self._keys != order:
            if not self.move_rows and self._sort_column < 0:
                self._reset(built)  # known records changed places: not worth a move plan
                return
            self._move(order)
        position = 0
        while position < len(built):
            key, record, cells = built[position]
            if key in kept:
                old = self._cells[position]
                self._records[position], self._cells[position] = record, cells
                self.signal_cells(position, changed_columns(old, cells))
                position += 1
                continue
            end = position  # a run of new records (known ones keep their order): one insert
            while end < len(built) and built[end][0] not in kept:
                end += 1
            run = built[position:end]
            self.beginInsertRows(QModelIndex(), position, end - 1)
            self._keys[position:position] = [key for key, _, _ in run]
            self._records[position:position] = [record for _, record, _ in run]
            self._cells[position:position] = [cells for _, _, cells in run]
            self._reindex()
            self.endInsertRows()
            position = end

    # -- sorting --------------------------------------------------------------------------------

    @property
    def sort_column(self) -> int:
        """The sort column, -1 for the order the records were given."""
        return self._sort_column

    @property
    def sort_order(self) -> Qt.SortOrder:
        return self._sort_order

    def set_sort_rule(self, *, missing_first: bool) -> None:
        """Where rows without a value ("—") go: before every value ascending, or after."""
        self._missing_first = missing_first

    def set_dynamic_sort(self, dynamic: bool) -> None:
        """Whether an update re-sorts (else new rows go last until ``resort``)."""
        self._dynamic_sort = dynamic

    def pinned_last(self, record: R) -> bool:
        """A row that stays last under any sort (a totals row)."""
        return False

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` now (-1: the order the records were given); the view calls this
        on header clicks."""
        self._sort_column = column if 0 <= column < self._width else -1
        self._sort_order = order
        self.resort()

    def resort(self) -> None:
        """Sort again by the current column and order (the given order when unsorted): one
        sort of the keys and, only when the order changed, one layout change."""
        at = self._index
        given = [key for key in self._given if key in at]
        if len(given) != len(self._keys):
            given = list(self._keys)  # rows not given by ``apply`` (a subclass's own)
        if self._sort_column >= 0:
            rows = [at[key] for key in given]
            built = self.in_sort_order(
                [(self._keys[row], self._records[row], self._cells[row]) for row in rows],
                dynamic=True,
            )
            given = [key for key, _, _ in built]
        if given != self._keys:
            self._move(given)

    def in_sort_order(
        self, built: list[tuple[Hashable, R, Cells]], *, dynamic: bool | None = None
    ) -> list[tuple[Hashable, R, Cells]]:
        """``built`` (key, record, cells) in the sort's order: sorted by the sort column's keys
        (ties as given), or, when updates do not re-sort, the rows shown where they are and
        new ones after them; pinned rows last."""
        if not (self._dynamic_sort if dynamic is None else dynamic) and self._keys:
            at = self._index
            known = sorted((item for item in built if item[0] in at), key=lambda i: at[i[0]])
            ordered = known + [item for item in built if item[0] not in at]
        else:
            column = self._sort_column
            descending = self._sort_order == Qt.SortOrder.DescendingOrder
            keys = [cells[column].sort for _, _, cells in built]
            order = order_of(keys, descending=descending, missing_first=self._missing_first)
            ordered = [built[position] for position in order]
        if any(self.pinned_last(record) for _, record, _ in ordered):
            ordered = [i for i in ordered if not self.pinned_last(i[1])] + [
                i for i in ordered if self.pinned_last(i[1])
            ]
        return ordered

    def replace(self, row: int, record: R, cells: Cells | None = None) -> list[int]:
        """Put ``record`` in ``row``; the columns whose cell changed (not yet signalled)."""
        new = self.cells_of(record) if cells is None else cells
        old = self._cells[row]
        self._records[row], self._cells[row] = record, new
        return changed_columns(old, new)

    def set_cell(self, row: int, column: int, cell: Cell) -> None:
        """One cell that changes without its record (e.g. an age that grows); not signalled."""
        cells = self._cells[row]
        self._cells[row] = (*cells[:column], cell, *cells[column + 1 :])

    def signal_cells(self, row: int, columns: Sequence[int]) -> None:
        """One ``dataChanged`` per run of adjacent ``columns`` (ascending) of ``row``: the cells
        that did not change are not repainted, and Qt merges the repaints of the runs (one
        wide range would repaint more)."""
        for first, last in runs(columns):
            self.dataChanged.emit(self.createIndex(row, first), self.createIndex(row, last))

    def signal_rows(self, rows: Sequence[int], roles: Sequence[int]) -> None:
        """Repaint whole rows for ``roles`` (e.g. a highlight that ended)."""
        last = self._width - 1
        for row in rows:
            self.dataChanged.emit(
                self.createIndex(row, 0), self.createIndex(row, last), list(roles)
            )

    def reuse_cells(self, old: R, new: R) -> bool:
        """Whether a kept row's cells stand for ``new`` as they are (default: same object)."""
        return old is new

    def _cells_for(self, key: Hashable, record: R) -> Cells:
        row = self._index.get(key)
        if row is not None and self.reuse_cells(self._records[row], record):
            return self._cells[row]
        return self.cells_of(record)

    def _reset(self, built: Sequence[tuple[Hashable, R, Cells]]) -> None:
        self.beginResetModel()
        self._keys = [key for key, _, _ in built]
        self._records = [record for _, record, _ in built]
        self._cells = [cells for _, _, cells in built]
        self._reindex()
        self.endResetModel()

    def _move(self, order: list[Hashable]) -> None:
        """Known rows into ``order`` with a layout change: persistent indexes follow them."""
        self.layoutAboutToBeChanged.emit()
        old_keys = self._keys
        at = self._index
        self._records = [self._records[at[key]] for key in order]
        self._cells = [self._cells[at[key]] for key in order]
        self._keys = list(order)
        self._reindex()
        before = self.persistentIndexList()
        after = [self.index(self._index[old_keys[i.row()]], i.column()) for i in before]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def _reindex(self) -> None:
        self._index = {key: row for row, key in enumerate(self._keys)}

    # -- reading --------------------------------------------------------------------------------

    def keys(self) -> list[Hashable]:
        return list(self._keys)

    def record(self, row: int) -> R:
        return self._records[row]

    def position(self, key: Hashable) -> int | None:
        """The row of ``key``, None when it is not shown."""
        return self._index.get(key)

    def cell(self, row: int, column: int) -> Cell:
        return self._cells[row][column]

    def column_texts(self, column: int) -> list[str]:
        """The display text of ``column`` in every row (for fitting column widths)."""
        return [cells[column].display for cells in self._cells]

    # -- Qt model interface ---------------------------------------------------------------------

    # Every Python override is a virtual call from C++ (several µs each through PySide), made
    # for each visible cell and role on every paint: these stay small, and ``index`` is
    # overridden so that mapping a proxy index costs one call, not rowCount + columnCount.

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if 0 <= row < len(self._keys) and 0 <= column < self._width and not parent.isValid():
            return self.createIndex(row, column)
        return QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._width

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < self._width:
            return None
        spec = self._columns[section]
        if role == _DISPLAY:
            return self.header(section)
        if role == _TOOLTIP:
            return spec.tooltip
        if role == _ALIGNMENT:
            return ALIGN_NUMBER if spec.numeric else spec.alignment
        return None

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        row, column = index.row(), index.column()
        if not 0 <= row < len(self._keys) or not 0 <= column < self._width:
            return None
        if role == _DISPLAY:
            return self._cells[row][column].display
        if role == SORT_ROLE:
            return self._cells[row][column].sort
        if role == EXPORT_ROLE:
            return self._cells[row][column].export
        if role == RECORD_ROLE:
            return self._records[row]
        spec = self._columns[column]
        if role == _ALIGNMENT:
            return spec.cell_alignment
        if role == _FONT and spec.monospace:
            return self.number_font
        if role == _FOREGROUND and spec.colour is not None:
            colour = spec.colour(self._records[row], self._palette)
            if colour is not None:
                return colour
        if role == _TOOLTIP and spec.tip is not None:
            tip = spec.tip(self._records[row], self._precision)
            if tip is not None:
                return tip
        return self.extra_data(row, column, role)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        """More roles for subclasses (backgrounds, italic fonts, row tooltips)."""
        return None
