"""Numbers sort as numbers: one proxy for every table, comparing the raw values a model gives
under ``SORT_ROLE`` (Decimal for numbers, str for names, None for "—") instead of display text.
"""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

#: The raw value of a cell for sorting.
SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 1

Index = QModelIndex | QPersistentModelIndex


def sort_less(left: object, right: object, *, missing_first: bool = False) -> bool:
    """Order of two sort keys: Decimals numerically, text case-insensitively, None at one end."""
    if left is None or right is None:
        if missing_first:
            return left is None and right is not None
        return left is not None and right is None
    if isinstance(left, Decimal) and isinstance(right, Decimal):
        return left < right
    return str(left).casefold() < str(right).casefold()


class DecimalSortProxy(QSortFilterProxyModel):
    """Sorts by ``SORT_ROLE``. With ``dynamic=False`` it never re-sorts on its own (for tables
    that tick many times a second): the owner calls ``resort()`` when it chooses."""

    def __init__(
        self, parent: QObject | None = None, *, missing_first: bool = False, dynamic: bool = True
    ) -> None:
        super().__init__(parent)
        self._missing_first = missing_first
        self._source: QAbstractItemModel | None = None
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(dynamic)

    def setSourceModel(self, model: QAbstractItemModel) -> None:
        self._source = model  # kept: sourceModel() costs a wrapper lookup per comparison
        super().setSourceModel(model)

    def lessThan(self, source_left: Index, source_right: Index) -> bool:
        model = self._source
        assert model is not None
        return sort_less(
            model.data(source_left, SORT_ROLE),
            model.data(source_right, SORT_ROLE),
            missing_first=self._missing_first,
        )

    def resort(self) -> None:
        """Sort again by the current column and order (nothing when unsorted)."""
        if self.sortColumn() >= 0:
            self.sort(self.sortColumn(), self.sortOrder())
