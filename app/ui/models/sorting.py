"""The tables' one sort: numbers sort as numbers, text case-insensitively, "—" at one end.

Every table orders its rows here, by the raw value each cell keeps for sorting (``Cell.sort``,
also answered under ``SORT_ROLE``: Decimal for numbers, str for names, None for "—"):

- ``sorted_rows`` is the sort itself: stable (ties keep the order given, both ways), None
  after every value ascending (before, with ``missing_first``) and the other way round
  descending, with C comparisons only (no Python per comparison). It is a job
  (``app.services.slices``): the record views run it in slices at 100,000 rows, the small
  live tables at once (``order_of``).
- The record tables' ``RecordView`` (``app.ui.models.record_view``) sorts and filters with it;
  the live tables (watchlist, balances, positions) keep their order in their keyed model
  (``KeyedTableModel.sort``), which sorts with it too. ``KeyedSortView`` is what their panels
  set on the view: it adds no order of its own (no ``QSortFilterProxyModel``, design.md §6).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from decimal import Decimal
from itertools import islice
from typing import Any, Protocol

from PySide6.QtCore import QIdentityProxyModel, QObject, Qt

from app.services.slices import Steps, run_now

#: The raw value of a cell for sorting.
SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 1

#: Rows per C-level ``sorted`` call (well under a millisecond).
SORT_CHUNK = 2048
#: Rows per step of cheap per-row work (a set lookup, a substring test).
BLOCK = 2000


def blocks(items: Sequence[Any], size: int = BLOCK) -> Iterable[Sequence[Any]]:
    return (items[start : start + size] for start in range(0, len(items), size))


def sort_less(left: object, right: object, *, missing_first: bool = False) -> bool:
    """Order of two sort keys: Decimals numerically, text case-insensitively, None at one end
    (the comparison ``sorted_rows`` sorts by, spelled out for one pair)."""
    if left is None or right is None:
        if missing_first:
            return left is None and right is not None
        return left is not None and right is None
    if isinstance(left, Decimal) and isinstance(right, Decimal):
        return left < right
    return str(left).casefold() < str(right).casefold()


def comparable(raw: Sequence[Any]) -> list[Any]:
    """Sort keys as ``sorted_rows`` compares them: numbers as they are, anything else as
    case-folded text; None stays None."""
    if all(key is None or isinstance(key, Decimal | int | float) for key in raw):
        return list(raw)
    return [None if key is None else str(key).casefold() for key in raw]


def column_keys(cells: Sequence[Sequence[Any]], column: int) -> Steps[list[Any]]:
    """Comparable sort keys of ``column`` of rows of cells (``Cell.sort``): Decimals as they
    are (numbers sort as numbers), otherwise case-folded text; None stays None ("—", placed
    by ``sorted_rows``)."""
    raw: list[Any] = []
    numbers = True  # every key a Decimal (or None): they sort as they are
    for block in blocks(cells):
        found = [row[column].sort for row in block]
        raw.extend(found)
        numbers = numbers and all(key is None or isinstance(key, Decimal) for key in found)
        yield
    if numbers:
        return raw
    keys: list[Any] = []
    for block in blocks(raw):
        keys.extend([None if key is None else str(key).casefold() for key in block])
        yield
    return keys


def stable_order(rows: list[int], keys: Sequence[Any] | dict[int, Any]) -> Steps[list[int]]:
    """``rows`` by ``keys[row]`` ascending, ties in the order given: chunks of ``SORT_CHUNK``
    sorted in C, merged by ``heapq.merge`` a block at a time."""
    key = keys.__getitem__
    if len(rows) <= SORT_CHUNK:
        return sorted(rows, key=key)
    chunks = []
    for start in range(0, len(rows), SORT_CHUNK):
        chunks.append(sorted(rows[start : start + SORT_CHUNK], key=key))
        yield
    merged = heapq.merge(*chunks, key=key)
    ordered: list[int] = []
    while True:
        block = list(islice(merged, BLOCK))
        ordered.extend(block)
        if len(block) < BLOCK:
            return ordered
        yield


def sorted_rows(
    rows: Sequence[int], keys: Sequence[Any], *, descending: bool, missing_first: bool
) -> Steps[list[int]]:
    """``rows`` sorted by ``keys[row]``: stable (ties in the given order, both ways), None
    after every value (before, with ``missing_first``) ascending and the other way round
    descending."""
    present: list[int] = []
    missing: list[int] = []
    for block in blocks(rows):
        present.extend([row for row in block if keys[row] is not None])
        missing.extend([row for row in block if keys[row] is None])
        yield
    if descending:
        ordered = (yield from stable_order(present[::-1], keys))[::-1]
    else:
        ordered = yield from stable_order(present, keys)
    return missing + ordered if missing_first != descending else ordered + missing


def order_of(keys: Sequence[Any], *, descending: bool, missing_first: bool = False) -> list[int]:
    """The positions of ``keys`` in sorted order, at once (a small table's sort)."""
    return run_now(
        sorted_rows(
            range(len(keys)), comparable(keys), descending=descending, missing_first=missing_first
        )
    )


class Sortable(Protocol):
    """A model that keeps its own sort order (``KeyedTableModel``)."""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None: ...

    def resort(self) -> None: ...

    @property
    def sort_column(self) -> int: ...

    @property
    def sort_order(self) -> Qt.SortOrder: ...

    def set_dynamic_sort(self, dynamic: bool) -> None: ...


class KeyedSortView(QIdentityProxyModel):
    """What a live table's view is set on: its model's rows as they are, in the order the model
    keeps (a header click reaches the model's ``sort``: ``QAbstractProxyModel`` forwards it).
    The proxy API the panels use stays (``sortColumn``, ``sortOrder``, ``resort``,
    ``setDynamicSortFilter``, ``mapToSource``)."""

    def __init__(
        self, parent: QObject | None = None, *, missing_first: bool = False, dynamic: bool = True
    ) -> None:
        super().__init__(parent)
        self._missing_first = missing_first
        self._dynamic = dynamic
        self._sortable: Sortable | None = None

    def setSourceModel(self, model: Any) -> None:  # a KeyedTableModel
        self._sortable = model
        model.set_sort_rule(missing_first=self._missing_first)
        model.set_dynamic_sort(self._dynamic)
        super().setSourceModel(model)

    def setDynamicSortFilter(self, enable: bool) -> None:
        self._dynamic = enable
        if self._sortable is not None:
            self._sortable.set_dynamic_sort(enable)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if self._sortable is not None:
            self._sortable.sort(column, order)

    def sortColumn(self) -> int:
        return -1 if self._sortable is None else self._sortable.sort_column

    def sortOrder(self) -> Qt.SortOrder:
        if self._sortable is None:
            return Qt.SortOrder.AscendingOrder
        return self._sortable.sort_order

    def resort(self) -> None:
        """Sort again by the current column and order (nothing when unsorted)."""
        if self._sortable is not None:
            self._sortable.resort()
