"""The positions table: one row per asset of a ``PositionsTable`` and a totals row,
declared as columns (``app.ui.models.columns``).

Display: a quantity shows every digit it has and at least its asset's decimals
(``Precision.exact``: nothing held is hidden); a unit value (average cost, mark) in valuation
currency per unit at the pair's price decimals, with at least four significant digits for a
unit worth less than one; a value or P&L at the valuation currency's decimals, P&L signed
(+/−) and in the theme's rise / fall colours (the sign says it too: never colour alone); the
share in percent. A figure that cannot be known shows "—" (a tooltip says why). Every cell
exports its exact Decimal (``EXPORT_ROLE``), so the CSV has every digit of the book.

The totals row is last under any sort (``pinned_last``; the model keeps the order). While the
top-of-book feed is stale (``set_stale``) every cell is in the stale grey.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QIdentityProxyModel, QObject, Qt
from PySide6.QtGui import QColor

from app.domain.display import DASH, Precision, format_number
from app.domain.positions import CostMethod, PositionRow, PositionsTable
from app.ui.csv_export import export_value
from app.ui.models.columns import Column
from app.ui.models.keyed_table import Index, KeyedTableModel
from app.ui.models.record_cells import Cell
from app.ui.models.sorting import KeyedSortView
from app.ui.palette import TradePalette

TOTAL = "Total"
HUNDRED = Decimal(100)
CellFunction = Callable[["PositionLine", Precision], Cell]
ColourFunction = Callable[["PositionLine", TradePalette], QColor | None]


@dataclass(frozen=True)
class PositionLine:
    """One row as the table shows it: an asset's figures, or the totals (``total``)."""

    asset: str
    currency: str
    quantity: Decimal | None = None
    average_cost: Decimal | None = None
    mark: Decimal | None = None
    market_value: Decimal | None = None
    unrealised: Decimal | None = None
    realised_today: Decimal | None = None
    realised_since: Decimal | None = None
    share: Decimal | None = None
    cost_basis: Decimal | None = None
    realised_total: Decimal | None = None
    priced: bool = True
    total: bool = False
    left_out: tuple[str, ...] = ()

    @classmethod
    def of(cls, row: PositionRow, currency: str) -> PositionLine:
        return cls(
            row.asset,
            currency,
            row.quantity,
            row.average_cost,
            row.mark,
            row.market_value,
            row.unrealised,
            row.realised_today,
            row.realised_since,
            row.share,
            row.cost_basis,
            row.realised_total,
            row.priced,
        )


def table_lines(table: PositionsTable) -> list[PositionLine]:
    """Every asset held or traded, then the totals row."""
    lines = [PositionLine.of(row, table.currency) for row in table.rows]
    totals = table.totals
    lines.append(
        PositionLine(
            TOTAL,
            table.currency,
            market_value=totals.market_value,
            unrealised=totals.unrealised,
            realised_today=totals.realised_today,
            realised_since=totals.realised_since,
            share=Decimal(1) if totals.market_value > 0 else None,
            cost_basis=totals.cost_basis,
            realised_total=totals.realised_total,
            total=True,
            left_out=totals.left_out,
        )
    )
    return lines


# -- cells ------------------------------------------------------------------------------------


def _exact(value: Decimal | None) -> str:
    return export_value(value)


def unit_places(value: Decimal, asset: str, currency: str, precision: Precision) -> int:
    """Decimals of a unit value: the pair's price decimals, and four significant digits at
    least for a unit worth less than one (a cheap asset never shows as 0.00)."""
    places = precision.price(f"{asset}/{currency}")
    if value and abs(value) < 1:
        places = max(places, -abs(value).adjusted() + 3)
    return places


def unit_cell(key: str) -> CellFunction:
    def cell(line: PositionLine, precision: Precision) -> Cell:
        value: Decimal | None = getattr(line, key)
        if value is None:
            return Cell(DASH, None, "")
        places = unit_places(value, line.asset, line.currency, precision)
        return Cell(format_number(value, places), value, _exact(value))

    return cell


def quantity_cell(line: PositionLine, precision: Precision) -> Cell:
    if line.total:
        return Cell("", None, "")
    return Cell(precision.exact(line.quantity, line.asset), line.quantity, _exact(line.quantity))


def value_cell(key: str, *, signed: bool = False) -> CellFunction:
    def cell(line: PositionLine, precision: Precision) -> Cell:
        value: Decimal | None = getattr(line, key)
        places = precision.asset(line.currency)
        return Cell(format_number(value, places, signed=signed), value, _exact(value))

    return cell


def share_cell(line: PositionLine, _: Precision) -> Cell:
    if line.share is None:
        return Cell(DASH, None, "")
    return Cell(f"{format_number(line.share * HUNDRED, 2)} %", line.share, _exact(line.share))


def pnl_colour(key: str) -> ColourFunction:
    """Rises in the theme's rise colour, falls in its fall colour, zero and unknown plain."""

    def colour(line: PositionLine, palette: TradePalette) -> QColor | None:
        value: Decimal | None = getattr(line, key)
        if value is None or not value:
            return None
        return palette.up if value > 0 else palette.down

    return colour


def unknown_tip(line: PositionLine, _: Precision) -> str | None:
    """Why a figure is missing, on the row."""
    if line.total:
        if line.left_out:
            return f"Left out of the totals (a figure is not known): {', '.join(line.left_out)}"
        return None
    if not line.priced:
        return (
            f"An entry of {line.asset} has no value yet (no price when it was first seen): "
            "right-click › Set cost of deposits…"
        )
    if line.mark is None:
        return f"No price values {line.asset} in {line.currency} now"
    return None


def _money(key: str, header: str, tooltip: str, *, signed: bool = False) -> Column[PositionLine]:
    colour = pnl_colour(key) if signed else None
    return Column(
        key,
        header,
        value_cell(key, signed=signed),
        tooltip,
        numeric=True,
        colour=colour,
        tip=unknown_tip,
    )


COLUMNS: tuple[Column[PositionLine], ...] = (
    Column("asset", "Asset", lambda line, _: Cell(line.asset, line.asset, line.asset)),
    Column(
        "quantity",
        "Quantity",
        quantity_cell,
        "Free + locked, the ledger's sum",
        numeric=True,
        tip=unknown_tip,
    ),
    Column(
        "average_cost",
        "Avg cost",
        unit_cell("average_cost"),
        "Cost basis per unit held, by the cost method in Settings",
        numeric=True,
        tip=unknown_tip,
    ),
    Column(
        "mark",
        "Mark",
        unit_cell("mark"),
        "Top-of-book mid, valued as the balances total is",
        numeric=True,
        tip=unknown_tip,
    ),
    _money("market_value", "Value", "Quantity × mark"),
    _money("unrealised", "Unrealised", "Value − cost basis of what is held", signed=True),
    _money("realised_today", "Realised today", "Realised since local midnight", signed=True),
    _money("realised_since", "Realised since", "Realised since the day in Settings", signed=True),
    Column(
        "share",
        "Share",
        share_cell,
        "Share of the portfolio's value",
        numeric=True,
        tip=unknown_tip,
    ),
    _money("cost_basis", "Cost basis", "What is held cost, by the cost method in Settings"),
    _money("realised_total", "Realised all time", "Realised since the account began", signed=True),
)

#: Columns whose header names the valuation currency.
IN_CURRENCY = (
    "average_cost",
    "mark",
    "market_value",
    "unrealised",
    "realised_today",
    "cost_basis",
    "realised_total",
)
#: Exported (CSV) but not on screen: the dock fits a 1366×768 bottom area without them.
EXPORT_ONLY = ("cost_basis", "realised_total")


class PositionsModel(KeyedTableModel[PositionLine]):
    """The rows of the last ``PositionsTable`` shown (``set_table``); only changed cells are
    signalled, so a new mark repaints its row's market figures and the totals."""

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, precision, parent)
        self.table: PositionsTable | None = None
        self._currency = "USD"
        self._since: datetime | None = None
        self._method = CostMethod.AVERAGE

    def pinned_last(self, record: PositionLine) -> bool:
        return record.total

    def set_table(self, table: PositionsTable) -> None:
        heads = (table.currency, table.since, table.method)
        changed = heads != (self._currency, self._since, self._method)
        self.table = table
        self._currency, self._since, self._method = heads
        self.apply([(line.asset if not line.total else None, line) for line in table_lines(table)])
        if changed:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, self.columnCount() - 1)

    def header(self, column: int) -> str:
        """The title on screen: short (the currency and the method are on the status line)."""
        key = self.columns[column].key
        if key == "realised_since":
            return "Realised all time" if self._since is None else f"Since {self._since:%Y-%m-%d}"
        return super().header(column)

    def export_header(self, column: int) -> str:
        """The title in the CSV: it names the valuation currency and the cost method."""
        key = self.columns[column].key
        title = super().header(column)
        if key == "realised_since":
            title = (
                "Realised all time"
                if self._since is None
                else f"Realised since {self._since:%Y-%m-%d}"
            )
        if key in ("average_cost", "cost_basis"):
            method = "FIFO" if self._method is CostMethod.FIFO else "average"
            return f"{title} ({self._currency}, {method})"
        if key in IN_CURRENCY or key == "realised_since":
            return f"{title} ({self._currency})"
        return title

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """While the prices are stale every cell is in the stale grey: no mark looks current
        that is not."""
        if self._stale and role == Qt.ItemDataRole.ForegroundRole and index.isValid():
            return self._palette.stale
        return super().data(index, role)

    def line(self, asset: str) -> PositionLine | None:
        row = self.position(asset if asset != TOTAL else None)
        return None if row is None else self.record(row)

    def text(self, asset: str, key: str) -> str:
        """The display text of one cell (tests, the status line)."""
        row = self.position(asset if asset != TOTAL else None)
        assert row is not None, asset
        return self.cell(row, self.column(key)).display

    def assets(self) -> Sequence[str]:
        return [line.asset for line in self._records if not line.total]


class PositionsSortProxy(KeyedSortView):
    """Sorts by the exact values (in the model); the totals row stays last in either order."""


class ExportHeaders(QIdentityProxyModel):
    """The view's rows (its sort) under the CSV's titles (``PositionsModel.export_header``),
    for ``app.ui.csv_export``."""

    def __init__(self, model: PositionsModel, view: QAbstractItemModel) -> None:
        super().__init__(view)
        self._model = model
        self.setSourceModel(view)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._model.export_header(section)
        return super().headerData(section, orientation, role)
