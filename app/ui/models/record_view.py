"""Record tables that stay smooth at 100,000 rows: a model that can take a page without
stalling the loop, and a sort/filter view that keeps its own row order.

Why not ``QSortFilterProxyModel``: it sorts by calling a Python ``lessThan`` per comparison
(1.7 million calls at 100,000 rows) and filters by calling ``filterAcceptsRow`` per row, each
asking the model for every cell again — seconds of frozen loop per click or keystroke.

``RecordView`` keeps the rows it shows as a list of the model's row keys (not row numbers, so
the model can insert and remove rows without invalidating it):

- a sort builds one key list per column from the cells (computed once per record when it
  arrived), then sorts row numbers by it — C comparisons of Decimals or case-folded text,
  stable, ties in the model's order; Python never runs per comparison;
- a filter matches the words typed against one case-folded text per row (display and exact
  texts of every cell), built once per row and kept while its cells are the same objects;
- both run at once when the table is small (``sync_rows``: far below a frame); otherwise as a
  sliced job (``sliced``): a generator that does a few hundred microseconds of work per step,
  run for ``SLICE_MS`` per turn of the event loop, which then paints and runs its timers; the
  search box is debounced (``FILTER_DEBOUNCE_MS``). Sorts are chunks of ``SORT_CHUNK`` rows
  (one C ``sorted`` each) merged by ``heapq.merge``, a block of rows per step;
- the job also plans how the shown rows change (removed runs, inserted runs, a layout change),
  and the last step only emits those few signals and swaps lists: the view keeps its selection
  and current row through sorts, filters and new rows (persistent indexes follow their keys).

Why slices on the loop and not a worker thread: ``app.services.slices``.

``RecordTableModel`` adds to ``KeyedTableModel``: ``apply_async`` makes a page's cells and the
change plan (reset, rows on top, rows at the bottom, changed cells) as a sliced job, then
applies it in one step; ``contentApplied`` tells the view when an update is complete.
"""

from __future__ import annotations

import asyncio
import csv
import os
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from app.services.slices import Steps, run_now, sliced
from app.ui.csv_export import EXPORT_ROLE, header_texts
from app.ui.models.keyed_table import Cells, KeyedTableModel, changed_columns, runs
from app.ui.models.record_cells import RECORD_ROLE
from app.ui.models.sorting import BLOCK as BLOCK
from app.ui.models.sorting import SORT_CHUNK as SORT_CHUNK
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import blocks as blocks
from app.ui.models.sorting import column_keys
from app.ui.models.sorting import sorted_rows as sorted_rows
from app.ui.models.sorting import stable_order as stable_order
from app.ui.timers import make_timer
from app.ui.widgets.cell_painter import RowLook

R = TypeVar("R")
T = TypeVar("T")
Index = QModelIndex | QPersistentModelIndex
Key = Hashable
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
#: For the models' ``extra_data``, which the view asks per cell and role on every paint: an int
#: compares at once, a Qt enum member read there cost a descriptor call each time.
FONT_ROLE = _FONT
BACKGROUND_ROLE = int(Qt.ItemDataRole.BackgroundRole)
#: ``RecordTableModel.row_background``: the background is the cells' own (``extra_data``).
PER_CELL = object()
#: Roles ``KeyedTableModel.data`` answers from the cells, the record or a tooltip.
_CELL_ROLES = frozenset((SORT_ROLE, EXPORT_ROLE, RECORD_ROLE, int(Qt.ItemDataRole.ToolTipRole)))

#: Tables up to this many rows sort, filter and take pages at once (well under a frame); bigger
#: ones do that work as sliced jobs.
SYNC_ROWS = 2000
#: How long a replaced view order waits to be freed (after the paint that shows the new one).
DROP_AFTER_MS = 100

#: Rows per step of costly per-row work (formatting a row's cells, tens of µs each).
CELL_BLOCK = 40
#: Rows formatted and written per step of a CSV export.
EXPORT_BLOCK = 400
#: A big table filters this long after the last keystroke.
FILTER_DEBOUNCE_MS = 150
#: More runs of removed or inserted rows than this are moved with one layout change instead.
MAX_RUNS = 64


# -- pure jobs (generators: a step is a block of rows) ---------------------------------------


def row_text(cells: Cells) -> str:
    """What the search box matches: every cell's display and exact text, case-folded."""
    parts: list[str] = []
    for cell in cells:
        parts.append(cell.display)
        parts.append(cell.export or "")
    return "\n".join(parts).casefold()


@dataclass
class Plan:
    """How the shown rows go from ``old`` to ``final`` keys with few signals."""

    gone: list[int]  # positions in the old list, ascending
    added: list[Key]  # keys not shown before, in their final order
    inserts: list[tuple[int, list[Key]]] | None  # final positions, when the kept keep order
    final: list[Key]
    where: dict[Key, int] = field(default_factory=dict)
    #: With many removed runs: the old rows with the removed ones moved to the end (one layout
    #: change, then one removal), and where each key is in it.
    staged: list[Key] | None = None
    staged_where: dict[Key, int] | None = None


def key_set(keys: Sequence[Key]) -> Steps[set[Key]]:
    found: set[Key] = set()
    for block in blocks(keys):
        found.update(block)
        yield
    return found


def positions(keys: Sequence[Key], reuse: dict[Key, int] | None = None) -> Steps[dict[Key, int]]:
    """Key -> its position in ``keys``. ``reuse``: a dict that may hold the same keys (the
    index of an order the view replaced: a sort shows the same rows), refilled in place when
    it does. A fresh dict of 100,000 keys is about 5 MB the system hands over page by page
    as it grows: 1,280 page faults, 2.4 ms in one step here on a quiet machine, 7–15 ms when
    the machine was busy."""
    where: dict[Key, int] = {} if reuse is None or len(reuse) != len(keys) else reuse
    for start in range(0, len(keys), BLOCK):
        block = keys[start : start + BLOCK]
        where.update(zip(block, range(start, start + len(block)), strict=True))
        yield
    if where is reuse and len(where) != len(keys):  # other keys were in it: not the same rows
        return (yield from positions(keys))
    return where


def numbers_where(keys: Sequence[Key], inside: set[Key], wanted: bool) -> Steps[list[int]]:
    """Positions of the keys that are (``wanted``) or are not in ``inside``."""
    found: list[int] = []
    for start in range(0, len(keys), BLOCK):
        block = keys[start : start + BLOCK]
        found.extend([start + n for n, key in enumerate(block) if (key in inside) == wanted])
        yield
    return found


def make_plan(
    old: Sequence[Key], new: list[Key], spare: dict[Key, int] | None = None
) -> Steps[Plan]:
    """Removed positions, added keys and, when the kept rows stay in their order, the runs to
    insert at their final positions (else ``inserts`` is None: a layout change places them).
    ``spare``: a dict ``positions`` may refill for ``where`` (see there)."""
    new_set = yield from key_set(new)
    old_set = yield from key_set(old)
    gone = yield from numbers_where(old, new_set, False)
    kept = list(old)
    if gone:
        kept = [old[n] for n in (yield from numbers_where(old, new_set, True))]
    inserts: list[tuple[int, list[Key]]] | None = []
    fresh = yield from numbers_where(new, old_set, False)
    added = [new[n] for n in fresh]
    kept_order = new
    if added:
        kept_order = [new[n] for n in (yield from numbers_where(new, old_set, True))]
    yield
    if kept_order != kept:
        inserts = None
    elif added:
        found = runs(fresh)
        if len(found) > MAX_RUNS:
            inserts = None
        else:
            inserts = [(first, new[first : last + 1]) for first, last in found]
    plan = Plan(gone, added, inserts, new, (yield from positions(new, spare)))
    if len(runs(gone)) > MAX_RUNS:
        plan.staged = kept + [old[number] for number in gone]
        plan.staged_where = yield from positions(plan.staged)
    return plan


# -- the model ----------------------------------------------------------------------------------


@dataclass
class _ApplyPlan:
    kind: str  # "reset", "top", "bottom" or "same"
    keys: list[Key]
    records: list[Any]
    cells: list[Cells]
    index: dict[Key, int]
    added: int = 0
    changed: list[tuple[int, list[int]]] = field(default_factory=list)


class RecordTableModel(KeyedTableModel[R]):
    """A ``KeyedTableModel`` for record tables: ``apply_async`` for big pages, a search text
    per row kept while its cells are unchanged, ``contentApplied`` after every update."""

    #: An update (``apply``, ``apply_async``) is complete: views re-sort and re-filter now.
    contentApplied = Signal()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Bumped by every update: a plan made from an older state is made again.
        self.generation = 0
        self.sync_rows = SYNC_ROWS
        self._texts: dict[Key, tuple[Cells, str]] = {}
        self._alignments = tuple(int(spec.cell_alignment.value) for spec in self._columns)

    def apply(self, rows: Sequence[tuple[Hashable, R]], *, reset: bool = False) -> None:
        self.generation += 1
        if reset:
            self._texts = {}
        super().apply(rows, reset=reset)
        self.generation += 1
        self.contentApplied.emit()

    # -- reading for views and jobs -------------------------------------------------------------

    def data_at(self, row: int, column: int, role: int) -> Any:
        """``data`` of a cell by numbers: the view calls it ~3,000 times a paint, so it is one
        Python call, not ``data`` plus an index made and read again."""
        if not 0 <= row < len(self._keys) or not 0 <= column < self._width:
            return None
        if role == _DISPLAY:
            return self._cells[row][column].display
        spec = self._columns[column]
        if role == _ALIGNMENT:
            return spec.cell_alignment
        if role == _FONT:
            return self.number_font if spec.monospace else self.extra_data(row, column, role)
        if role == _FOREGROUND and spec.colour is not None:
            colour = spec.colour(self._records[row], self._palette)
            if colour is not None:
                return colour
        if role in _CELL_ROLES:
            return self.data(self.createIndex(row, column), role)
        return self.extra_data(row, column, role)

    def row_look(self, row: int) -> RowLook | None:
        """Every cell of ``row`` as ``data_at`` answers it for the roles a paint asks (text,
        alignment, font, colour, background) in one call: ``CellPainter`` paints a row from
        it instead of seven ``data`` calls per cell."""
        if not 0 <= row < len(self._keys):
            return None
        record, palette, extra = self._records[row], self._palette, self.extra_data
        fonts: list[Any] = []
        colours: list[Any] = []
        backgrounds: list[Any] = []
        background = self.row_background(row)
        for column, spec in enumerate(self._columns):
            fonts.append(self.number_font if spec.monospace else extra(row, column, _FONT))
            colour = None if spec.colour is None else spec.colour(record, palette)
            colours.append(extra(row, column, _FOREGROUND) if colour is None else colour)
            if background is PER_CELL:
                backgrounds.append(extra(row, column, BACKGROUND_ROLE))
        if background is not PER_CELL:
            backgrounds = [background] * self._width
        texts = [cell.display for cell in self._cells[row]]
        return RowLook(texts, self._alignments, fonts, colours, backgrounds)

    def row_background(self, row: int) -> Any:
        """The background of every cell of ``row``, for a table whose tint is the row's (the
        ledger's trades, the orders' highlights): asked once per row, not per cell. The
        default, ``PER_CELL``, asks ``extra_data`` for each cell."""
        return PER_CELL

    def key_at(self, row: int) -> Key:
        return self._keys[row]

    def snapshot_lists(self) -> tuple[list[Key], list[R], list[Cells], dict[Key, int]]:
        """Copies of the keys, records and cells (and the index, which is replaced, never
        changed in place): what a worker may read while the GUI thread goes on."""
        return list(self._keys), list(self._records), list(self._cells), self._index

    def search_texts(self, keys: Sequence[Key], cells: Sequence[Cells]) -> Steps[list[str]]:
        """Each row's ``row_text``, built once per row and kept while its cells are the same."""
        cache = self._texts
        texts: list[str] = []
        built = 0
        for number, (key, row) in enumerate(zip(keys, cells, strict=True)):
            if number % BLOCK == 0:
                yield
            hit = cache.get(key)
            if hit is not None and hit[0] is row:
                texts.append(hit[1])
                continue
            text = row_text(row)
            cache[key] = (row, text)
            texts.append(text)
            built += 1
            if built % (CELL_BLOCK * 10) == 0:
                yield
        return texts

    # -- big updates ----------------------------------------------------------------------------

    async def apply_async(
        self,
        records: Sequence[R],
        key: Callable[[R], Key],
        *,
        reset: bool = False,
        wanted: Callable[[], bool] = lambda: True,
    ) -> bool:
        """Show ``records`` (in this order, keyed by ``key``) like ``apply``; a big update has
        its cells and plan made by a sliced job, then applied at once. False (nothing shown)
        when ``wanted()`` says no by then (a newer request owns the table)."""
        if len(records) + self.rowCount() <= self.sync_rows:
            if not wanted():
                return False
            self.apply([(key(record), record) for record in records], reset=reset)
            return True
        for _ in range(3):
            generation = self.generation
            lists = self.snapshot_lists()
            plan = await sliced(self._plan_apply(list(records), key, reset, lists))
            await asyncio.sleep(0)  # the signals and the repaint they cause get a turn alone
            if not wanted():
                return False
            if generation == self.generation:
                self._commit(plan)
                return True
        self.apply([(key(record), record) for record in records], reset=reset)
        return True

    def _plan_apply(
        self,
        records: list[R],
        key: Callable[[R], Key],
        reset: bool,
        lists: tuple[list[Key], list[R], list[Cells], dict[Key, int]],
    ) -> Steps[_ApplyPlan]:
        """Every row's cells (kept ones reused), the search texts, and which of reset / new
        rows on top / new rows at the bottom / same rows applies."""
        old_keys, _, old_cells, _ = lists
        keys: list[Key] = []
        for block in blocks(records):
            keys.extend([key(record) for record in block])
            yield
        cells = yield from self._cells_steps(keys, records, None if reset else lists)
        index = yield from positions(keys)
        if reset:
            self._texts = {}
        yield from self.search_texts(keys, cells)  # built now, not on the first keystroke
        added = len(keys) - len(old_keys)
        kind = "reset"
        if not reset and len(index) == len(keys) and added >= 0:
            kind = _kind(keys, old_keys, added)
        yield
        plan = _ApplyPlan(kind, keys, list(records), cells, index, added)
        if kind != "reset":
            shift = added if kind == "top" else 0
            for old_row, old in enumerate(old_cells):
                new = cells[old_row + shift]
                if new is not old:
                    plan.changed.append((old_row + shift, changed_columns(old, new)))
                if old_row % BLOCK == 0:
                    yield
        return plan

    def _cells_steps(
        self,
        keys: list[Key],
        records: list[R],
        old: tuple[list[Key], list[R], list[Cells], dict[Key, int]] | None,
    ) -> Steps[list[Cells]]:
        """Each record's cells: a kept row's own when ``reuse_cells`` says they still stand."""
        cells: list[Cells] = []
        _, old_records, old_cells, old_index = old if old is not None else ([], [], [], {})
        for number, (row_key, record) in enumerate(zip(keys, records, strict=True)):
            row = old_index.get(row_key)
            if row is not None and self.reuse_cells(old_records[row], record):
                cells.append(old_cells[row])
                if number % BLOCK == 0:
                    yield
            else:
                cells.append(self.cells_of(record))
                if number % CELL_BLOCK == 0:
                    yield
        return cells

    def _commit(self, plan: _ApplyPlan) -> None:
        """On the GUI thread: swap in the planned lists with one signal (plus changed cells)."""
        self.generation += 1
        if plan.kind == "reset":
            self.beginResetModel()
        elif plan.kind == "top":
            self.beginInsertRows(QModelIndex(), 0, plan.added - 1)
        elif plan.kind == "bottom":
            first = len(self._keys)
            self.beginInsertRows(QModelIndex(), first, first + plan.added - 1)
        self._keys, self._records, self._cells = plan.keys, plan.records, plan.cells
        self._index = plan.index
        if plan.kind == "reset":
            self.endResetModel()
        elif plan.kind in ("top", "bottom"):
            self.endInsertRows()
        for row, columns in plan.changed:
            self.signal_cells(row, columns)
        self.generation += 1
        self.contentApplied.emit()


def _kind(keys: list[Key], old_keys: list[Key], added: int) -> str:
    """ "same", "top" (new rows above the old ones), "bottom", else "reset"."""
    if added == 0 and keys == old_keys:
        return "same"
    if keys[added:] == old_keys:
        return "top"
    if keys[: len(old_keys)] == old_keys:
        return "bottom"
    return "reset"


# -- the view -------------------------------------------------------------------------------------


@dataclass
class _Inputs:
    keys: list[Key]
    records: list[Any]
    cells: list[Cells]
    column: int
    descending: bool
    words: list[str]


class RecordView(QAbstractTableModel):
    """Sorted and filtered rows of a ``RecordTableModel``, as the record docks show them.

    The proxy API the docks and tests use stays: ``sort`` (-1: the model's own order),
    ``set_text``, ``mapToSource``, ``sortColumn``; ``pending()`` says whether a deferred sort
    or filter is still to come, ``viewChanged`` when the rows shown changed."""

    viewChanged = Signal()

    def __init__(self, parent: QObject | None = None, *, missing_first: bool = False) -> None:
        super().__init__(parent)
        self._missing_first = missing_first
        self._source: RecordTableModel[Any] | None = None
        self._width = 0  # the model's columns (they never change)
        self._view: list[Key] | None = None  # None: every row in the model's order
        self._where: dict[Key, int] = {}
        #: A replaced ``_where`` of a big table, refilled by the next sort instead of a new dict
        #: (its memory is the view's, about 5 MB at 100,000 rows; ``positions``).
        self._spare: dict[Key, int] | None = None
        self._words: list[str] = []
        self._column = -1
        self._order = Qt.SortOrder.AscendingOrder
        self._dirty = False
        self._rerun = False
        self._job: list[asyncio.Task[None]] = []
        self._removing: list[Key] = []
        self._forwarding: list[str] = []
        self._saved: list[tuple[QModelIndex, Key]] = []
        self.sync_rows = SYNC_ROWS
        self._debounce = make_timer(self, FILTER_DEBOUNCE_MS, self.refresh, single_shot=True)
        self._later = make_timer(self, 0, self.refresh, single_shot=True)
        #: The view's previous order and index, freed after the paint that shows the new one:
        #: dropping 100,000 keys and their dict took 1–2 ms of the frame that paints the sort.
        self._dropped: list[object] = []
        self._bury = make_timer(self, DROP_AFTER_MS, self._dropped.clear, single_shot=True)
        jobs = self._job
        self.destroyed.connect(lambda *_: [task.cancel() for task in jobs])

    # -- the source -----------------------------------------------------------------------------

    def setSourceModel(self, model: RecordTableModel[Any]) -> None:
        self.beginResetModel()
        self._source = model
        self._width = model.columnCount()
        self._view = None
        model.rowsAboutToBeInserted.connect(self._about_to_insert)
        model.rowsInserted.connect(self._inserted)
        model.rowsAboutToBeRemoved.connect(self._about_to_remove)
        model.rowsRemoved.connect(self._removed)
        model.modelAboutToBeReset.connect(self._about_to_reset)
        model.modelReset.connect(self._reset)
        model.layoutAboutToBeChanged.connect(self._about_to_relayout)
        model.layoutChanged.connect(self._relaid_out)
        model.dataChanged.connect(self._data_changed)
        model.headerDataChanged.connect(self.headerDataChanged)
        model.contentApplied.connect(self._applied)
        self.endResetModel()

    def sourceModel(self) -> RecordTableModel[Any]:
        assert self._source is not None, "a RecordView needs its model"
        return self._source

    def _about_to_insert(self, _: QModelIndex, first: int, last: int) -> None:
        if self._view is None:
            self._forwarding.append("insert")
            self.beginInsertRows(QModelIndex(), first, last)

    def _inserted(self, *_: object) -> None:
        if self._forwarding and self._forwarding[-1] == "insert":
            self._forwarding.pop()
            self.endInsertRows()
        else:
            self._dirty = True  # shown once sorted and filtered in (``_applied``)

    def _about_to_remove(self, _: QModelIndex, first: int, last: int) -> None:
        if self._view is None:
            self._forwarding.append("remove")
            self.beginRemoveRows(QModelIndex(), first, last)
        else:
            source = self.sourceModel()
            self._removing = [source.key_at(row) for row in range(first, last + 1)]

    def _removed(self, *_: object) -> None:
        if self._forwarding and self._forwarding[-1] == "remove":
            self._forwarding.pop()
            self.endRemoveRows()
            return
        where = self._where
        gone = sorted(where[key] for key in self._removing if key in where)
        self._removing = []
        if not gone or self._view is None:
            return
        view = list(self._view)
        self._view = view
        for first, last in reversed(runs(gone)):
            self.beginRemoveRows(QModelIndex(), first, last)
            del view[first : last + 1]
            self.endRemoveRows()
        self._where = {key: number for number, key in enumerate(view)}
        self.viewChanged.emit()

    def _about_to_reset(self) -> None:
        self.beginResetModel()

    def _reset(self) -> None:
        if self._view is not None:
            self._view, self._where, self._dirty = [], {}, True
        self.endResetModel()

    def _about_to_relayout(self, *_: object) -> None:
        if self._view is None:
            self.layoutAboutToBeChanged.emit()
            source = self.sourceModel()
            self._saved = [
                (index, source.key_at(index.row())) for index in self.persistentIndexList()
            ]

    def _relaid_out(self, *_: object) -> None:
        if self._view is None:  # the model moved rows: persistent indexes follow their keys
            source = self.sourceModel()
            before = [index for index, _ in self._saved]
            after: list[QModelIndex] = []
            for index, key in self._saved:
                row = source.position(key)
                after.append(QModelIndex() if row is None else self.index(row, index.column()))
            self._saved = []
            self.changePersistentIndexList(before, after)
            self.layoutChanged.emit()

    def _data_changed(self, top: QModelIndex, bottom: QModelIndex, roles: list[int]) -> None:
        first, last = top.row(), bottom.row()
        left, right = top.column(), bottom.column()
        if self._view is None:
            self.dataChanged.emit(self.index(first, left), self.index(last, right), roles)
            return
        sorted_by = left <= self._column <= right
        if not roles and (self._words or sorted_by):
            self._dirty = True  # content: sort and filter again once the update is complete
            self._later.start()
        if last - first > MAX_RUNS:  # a repaint of the table (theme switch): all shown rows
            if self._view:
                bottom_row = len(self._view) - 1
                self.dataChanged.emit(self.index(0, left), self.index(bottom_row, right), roles)
            return
        source = self.sourceModel()
        for row in range(first, last + 1):
            shown = self._where.get(source.key_at(row))
            if shown is not None:
                self.dataChanged.emit(self.index(shown, left), self.index(shown, right), roles)

    def _applied(self) -> None:
        if self._dirty:
            self.refresh()

    # -- what the docks ask ---------------------------------------------------------------------

    def sortColumn(self) -> int:
        return self._column

    def sortOrder(self) -> Qt.SortOrder:
        return self._order

    @property
    def text(self) -> str:
        return " ".join(self._words)

    def set_text(self, text: str) -> None:
        """Show the rows whose texts contain every word typed (any case): at once for a small
        table, ``FILTER_DEBOUNCE_MS`` after the last keystroke for a big one."""
        words = text.casefold().split()
        if words == self._words:
            return
        self._words = words
        if self._small():
            self.refresh()
        else:
            self._debounce.start()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` (-1: the model's own order, newest first)."""
        self._column, self._order = column, order
        self.refresh()

    def pending(self) -> bool:
        """Whether a sort or filter asked for is not shown yet."""
        return bool(self._job) or self._debounce.isActive() or self._later.isActive()

    def source_row(self, row: int) -> int | None:
        """The model's row shown in ``row`` (None while a removed row is being dropped, and
        for a row past the end; the model's own ``data_at`` refuses those when unsorted)."""
        view = self._view
        if view is None:
            return row
        if not 0 <= row < len(view):
            return None
        source = self._source
        return None if source is None else source.position(view[row])

    def mapToSource(self, index: Index) -> QModelIndex:
        if not index.isValid() or self._source is None:
            return QModelIndex()
        row = self.source_row(index.row())
        return QModelIndex() if row is None else self._source.index(row, index.column())

    def mapFromSource(self, index: Index) -> QModelIndex:
        if not index.isValid() or self._source is None:
            return QModelIndex()
        if self._view is None:
            return self.index(index.row(), index.column())
        row = self._where.get(self._source.key_at(index.row()))
        return QModelIndex() if row is None else self.index(row, index.column())

    # -- sorting and filtering ------------------------------------------------------------------

    def _small(self) -> bool:
        return self._source is None or self._source.rowCount() <= self.sync_rows

    def refresh(self) -> None:
        """Sort and filter again: at once for a small table, on the worker for a big one."""
        self._later.stop()
        self._debounce.stop()
        if self._source is None:
            return
        if self._column < 0 and not self._words and self._view is None:
            self._dirty = False
            return
        if self._job:
            self._rerun = True
            return
        self._dirty = False
        if self._small():
            inputs = self._inputs()
            old = self._view if self._view is not None else inputs.keys
            self._carry_out(run_now(make_plan(old, run_now(self._compute(inputs)))), inputs)
            return
        task = asyncio.get_event_loop().create_task(self._refresh_sliced(), name="sort")
        self._job.append(task)
        task.add_done_callback(lambda done: self._job.remove(done) if done in self._job else None)

    async def _refresh_sliced(self) -> None:
        source = self.sourceModel()
        for _ in range(10):
            self._rerun = False
            view, generation = self._view, source.generation
            inputs = self._inputs()
            old = view if view is not None else inputs.keys

            new = await sliced(self._compute(inputs))
            plan = await sliced(make_plan(old, new, self._spare))
            await asyncio.sleep(0)  # the signals and the repaint they cause get a turn alone
            if self._rerun or self._view is not view or source.generation != generation:
                continue
            self._carry_out(plan, inputs)
            return
        self._dirty = True
        self._later.start()

    def _inputs(self) -> _Inputs:
        keys, records, cells, _ = self.sourceModel().snapshot_lists()
        descending = self._order == Qt.SortOrder.DescendingOrder
        return _Inputs(keys, records, cells, self._column, descending, list(self._words))

    def _compute(self, inputs: _Inputs) -> Steps[list[Key]]:
        """The keys to show, in order (a job: sliced for big tables)."""
        rows: Sequence[int] = range(len(inputs.keys))
        if inputs.words:
            texts = yield from self.sourceModel().search_texts(inputs.keys, inputs.cells)
            words = inputs.words
            accepted: list[int] = []
            for block in blocks(rows):
                accepted.extend([row for row in block if all(w in texts[row] for w in words)])
                yield
            rows = accepted
        if 0 <= inputs.column < self.columnCount():
            sort_keys = yield from column_keys(inputs.cells, inputs.column)
            rows = yield from self.order_rows(
                list(rows), sort_keys, inputs.records, inputs.descending
            )
        keys = inputs.keys
        shown: list[Key] = []
        for block in blocks(rows):
            shown.extend([keys[row] for row in block])
            yield
        return shown

    def order_rows(
        self, rows: list[int], keys: list[Any], records: Sequence[Any], descending: bool
    ) -> Steps[list[int]]:
        """``rows`` (model rows) in the order of the sort column's ``keys`` (one a model row);
        subclasses keep groups together."""
        return (
            yield from sorted_rows(
                rows, keys, descending=descending, missing_first=self._missing_first
            )
        )

    def _carry_out(self, plan: Plan, inputs: _Inputs) -> None:
        """Go to ``plan.final`` with few signals: removed runs (or one layout change and one
        removal), inserted runs at their places (or appended, then one layout change)."""
        identity = inputs.column < 0 and not inputs.words
        if not plan.gone and not plan.added and plan.staged is None and plan.inserts is None:
            # the same rows in a new order (a sort): nothing changes in place, so the 100,000
            # keys are not copied first (this last step shares a frame with a paint)
            if self._view is None:
                self._view = inputs.keys  # the job's own copy, replaced at once
            self._relayout(plan.final, plan.where)
        else:
            self._change_rows(plan, inputs)
        replaced = self._where
        self._where = plan.where
        if plan.where is self._spare:
            self._spare = None
        if identity:  # the model's own order needs no index: the plan's may serve a sort
            self._view, self._where = None, {}
            self._drop(replaced)
            replaced = plan.where
        self._keep_spare(replaced)
        self.viewChanged.emit()

    def _keep_spare(self, where: dict[Key, int]) -> None:
        """Keep a replaced index of a big table for the next sort to refill (``positions``);
        the spare it replaces goes after the next paint."""
        if len(where) <= self.sync_rows:
            self._drop(where)
            return
        if self._spare is not None:
            self._drop(self._spare)
        self._spare = where

    def _drop(self, garbage: object) -> None:
        """Keep ``garbage`` until after the next paint (see ``_dropped``)."""
        self._dropped.append(garbage)
        if not self._bury.isActive():  # a burst of changes is freed together, not put off
            self._bury.start()

    def _change_rows(self, plan: Plan, inputs: _Inputs) -> None:
        view = list(self._view) if self._view is not None else list(inputs.keys)
        self._view = view
        gone = runs(plan.gone)
        if plan.staged is not None:
            self._relayout(plan.staged, plan.staged_where)
            view = self._view
            gone = [(len(view) - len(plan.gone), len(view) - 1)]
        for first, last in reversed(gone):
            self.beginRemoveRows(QModelIndex(), first, last)
            del view[first : last + 1]
            self.endRemoveRows()
        if plan.inserts is not None:
            for first, keys in plan.inserts:
                self.beginInsertRows(QModelIndex(), first, first + len(keys) - 1)
                view[first:first] = keys
                self.endInsertRows()
        else:
            if plan.added:
                first = len(view)
                self.beginInsertRows(QModelIndex(), first, first + len(plan.added) - 1)
                view.extend(plan.added)
                self.endInsertRows()
            self._relayout(plan.final, plan.where)

    def _relayout(self, order: list[Key], where: dict[Key, int] | None = None) -> None:
        """Show the same rows in ``order``: one layout change; persistent indexes (selection,
        current row) follow their keys. ``order`` is a plan's own list: the view keeps it
        (changes after it copy first, as everywhere here)."""
        assert self._view is not None
        if where is None:
            where = {key: number for number, key in enumerate(order)}
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        old = self._view
        after: list[QModelIndex] = []
        for index in before:
            row = where.get(old[index.row()]) if 0 <= index.row() < len(old) else None
            after.append(QModelIndex() if row is None else self.index(row, index.column()))
        self._drop(old)
        self._view = order
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    # -- export ---------------------------------------------------------------------------------

    def export_steps(self, path: Path) -> Steps[int]:
        """Write the rows in view, in view order, to a CSV file at ``path``: the header, then
        each cell's exact text, else its display text. The view is frozen when this is called
        (copies of its lists), so the job may run sliced while the table goes on changing.
        The number of rows written."""
        header = header_texts(self)
        _, _, cells, index = self.sourceModel().snapshot_lists()
        view = None if self._view is None else list(self._view)
        return self._write(path, header, cells, index, view)

    @staticmethod
    def _write(
        path: Path,
        header: list[str],
        cells: list[Cells],
        index: dict[Key, int],
        view: list[Key] | None,
    ) -> Steps[int]:
        # Written beside the target and renamed when complete: the chosen name never holds a
        # half-written file (the job runs over many loop turns, and may fail midway).
        target = Path(path)
        partial = target.with_name(f".{target.name}.partial")
        written = 0
        try:
            with partial.open("w", encoding="utf-8", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(header)
                shown: Sequence[Any] = cells if view is None else view
                for block in blocks(shown, EXPORT_BLOCK):
                    rows = block if view is None else [cells[index[k]] for k in block if k in index]
                    writer.writerows(
                        [cell.display if cell.export is None else cell.export for cell in row]
                        for row in rows
                    )
                    written += len(rows)
                    yield
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return written

    def export_now(self, path: Path) -> int:
        """``export_steps`` at once (tests, small tables)."""
        return run_now(self.export_steps(path))

    async def export(self, path: Path) -> int:
        """``export_steps`` sliced: Export CSV… of 100,000 rows never freezes the loop."""
        return await sliced(self.export_steps(path))

    # -- Qt model interface ---------------------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Asked for every cell of every paint: one Python call (no ``rowCount`` and
        ``columnCount`` calls of its own)."""
        source, view = self._source, self._view
        if source is None or parent.isValid():
            return QModelIndex()
        rows = source.rowCount() if view is None else len(view)
        if 0 <= row < rows and 0 <= column < self._width:
            return self.createIndex(row, column)
        return QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self._source is None:
            return 0
        return self._source.rowCount() if self._view is None else len(self._view)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self._source is None:
            return 0
        return self._source.columnCount()

    def flags(self, index: Index) -> Qt.ItemFlag:
        if self._source is None or not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return self._source.flags(index)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if self._source is None:
            return None
        if orientation == Qt.Orientation.Vertical:
            return section + 1 if role == Qt.ItemDataRole.DisplayRole else None
        return self._source.headerData(section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        source = self._source
        if source is None:
            return None
        row = self.source_row(index.row())  # an invalid index has row -1: refused too
        return None if row is None else source.data_at(row, index.column(), role)

    def row_look(self, row: int) -> RowLook | None:
        """The model's ``row_look`` of the row shown in ``row`` (``CellPainter``)."""
        source = self._source
        found = self.source_row(row)
        return None if source is None or found is None else source.row_look(found)
