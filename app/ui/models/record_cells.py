"""The cells of table rows (display text, sort key, exact export text), computed once per
record, and the record tables' sort proxy with a free-text filter.

Display shows numbers at least at the asset's precision but never rounds a digit away; the
export text is exact (``app.ui.csv_export.export_value``); times show in local time and export
as ISO 8601 UTC; times and numbers sort as numbers.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from app.domain import Price
from app.ui.csv_export import EXPORT_ROLE, export_value
from app.ui.formatting import DASH, format_number
from app.ui.models.sorting import DecimalSortProxy

Index = QModelIndex | QPersistentModelIndex
SortKey = Decimal | str | None
#: The record behind a row (an OrderRow, a LedgerRow, ...), under any column.
RECORD_ROLE = int(Qt.ItemDataRole.UserRole) + 21
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Cell(NamedTuple):
    """One cell: what the view shows, what it sorts by, and the exact text for export and
    copying (None where a table exports its display text)."""

    display: str
    sort: SortKey
    export: str | None


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
