"""The cells of table rows (display text, sort key, exact export text), computed once per
record. (The record tables' sort and free-text filter: ``app.ui.models.record_view``.)

Every number goes through ``app.domain.display`` (one formatting module for every view, the
CSV texts and the command line): an amount shows at least its asset's decimals and never rounds
a digit away (``Precision.exact``); its export text is the same digits without the grouping
(``plain_number``): exact, and padded as on screen, so a CSV column of one asset's amounts has
one number of decimals (a running balance of 12.4877 BTC exports as ``12.48770000``, as shown);
a price in pair terms shows at the pair's price increment and sorts and exports as shown (the
wire's exact prices have their own columns). Times show in local time and export as ISO 8601
UTC; times and numbers sort as numbers.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from app.domain.display import DASH, Precision, digits_of, format_number
from app.ui.csv_export import export_value

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


def plain_number(value: Decimal, places: int) -> str:
    """``value`` with ``places`` decimals, no grouping and no sign on a credit: the export
    text of a number shown with ``places`` decimals (``places`` never under the digits
    ``value`` has: nothing is rounded away)."""
    return format_number(value, max(places, digits_of(value)), grouping=False)


def number_cell(value: Decimal | None, places: int, *, signed: bool = False) -> Cell:
    """A number with at least ``places`` decimals and every decimal it has (for a table whose
    numbers belong to no asset; amounts use ``amount_cell``)."""
    if value is None:
        return Cell(DASH, None, "")
    places = max(places, digits_of(value))
    text = format_number(value, places, signed=signed)
    return Cell(text, value, plain_number(value, places))


def amount_cell(
    value: Decimal | None, asset: str, precision: Precision, *, signed: bool = False
) -> Cell:
    """An amount of ``asset``, exact (``Precision.exact``); ``signed`` puts + on a credit.
    Exported with the decimals shown (``plain_number``)."""
    if value is None:
        return Cell(DASH, None, "")
    text = precision.exact(value, asset)
    if signed and value > 0:
        text = f"+{text}"
    return Cell(text, value, plain_number(value, precision.asset(asset)))


def pair_price_cell(value: Decimal | None, pair: str, precision: Precision) -> Cell:
    """A price in QUOTE per BASE of ``pair`` at the pair's price increment: ``90,893.91``.
    It sorts and exports as shown (a price turned round has no exact digits to keep)."""
    if value is None:
        return Cell(DASH, None, "")
    shown = Decimal(format_number(value, precision.price(pair), grouping=False))
    return Cell(precision.price_text(value, pair), shown, export_value(shown))


def text_cell(text: str) -> Cell:
    return Cell(text, text or None, text)
