"""The balances table: both account views merged per asset, valued in a chosen currency.

One row per asset seen in Get Account or Get Account Credit (the portfolio). The columns follow
README "Behaviour the seed leaves open": ``free`` may go negative when credit is spent,
``available`` = free − limit, credit limit = the portfolio's ``totalCredit`` (= −limit), used and
available credit from the portfolio. An asset's value is its holding (free + locked, so spent
credit counts against it) times the top-of-book mid to the valuation currency: the direct pair,
the inverse pair, or one hop through USD or USDT. Everything is Decimal; the model tells the view
which cells changed (one ``dataChanged`` per run of changed cells in a row) and resets only when
the set of assets changes. Negative amounts are in the theme's error colour, a value that cannot
be computed in its stale grey (``app.ui.palette``); a theme switch repaints the text colours of
the whole table in one ``dataChanged``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontDatabase

from app.domain.money import MONEY_CONTEXT
from app.domain.records import Balance, PortfolioBalance, TopOfBook
from app.domain.valuation import valuation_rate
from app.services.session import Balances
from app.ui.formatting import Precision
from app.ui.models.record_cells import signal_changed_cells, signal_whole_table
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import DecimalSortProxy
from app.ui.palette import TradePalette, current_palette, follow_palette

Index = QModelIndex | QPersistentModelIndex

#: The exact Decimal behind a numeric cell (None where there is none).
VALUE_ROLE = Qt.ItemDataRole.UserRole + 2
#: ``(used, total)`` credit as Decimals for the utilisation bar, None without a credit line.
UTILISATION_ROLE = Qt.ItemDataRole.UserRole + 3
#: The roles whose values come from the palette (repainted on a theme switch).
COLOUR_ROLES = (Qt.ItemDataRole.ForegroundRole,)


class Column(IntEnum):
    ASSET = 0
    FREE = 1
    LOCKED = 2
    AVAILABLE = 3
    CREDIT_LIMIT = 4
    USED_CREDIT = 5
    AVAILABLE_CREDIT = 6
    PENDING_DEPOSIT = 7
    UTILISATION = 8
    VALUE = 9


HEADERS = {
    Column.ASSET: "Asset",
    Column.FREE: "Free",
    Column.LOCKED: "Locked",
    Column.AVAILABLE: "Available",
    Column.CREDIT_LIMIT: "Credit limit",
    Column.USED_CREDIT: "Used credit",
    Column.AVAILABLE_CREDIT: "Available credit",
    Column.PENDING_DEPOSIT: "Pending deposit",
    Column.UTILISATION: "Credit used",
    Column.VALUE: "Value",
}

TOOLTIPS = {
    Column.FREE: "Funds not locked in orders; negative when credit is spent",
    Column.LOCKED: "Locked by resting orders",
    Column.AVAILABLE: "Free plus the credit line (free − limit)",
    Column.CREDIT_LIMIT: "Credit granted on this asset",
    Column.USED_CREDIT: "Credit in use (free below zero)",
    Column.AVAILABLE_CREDIT: "Credit still available",
    Column.PENDING_DEPOSIT: "Deposits not yet credited",
    Column.UTILISATION: "Used credit as a share of the credit limit",
    Column.VALUE: "Holding (free + locked) valued at top-of-book mid",
}

ZERO = Decimal(0)
HUNDRED = Decimal(100)


# -- rows -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssetRow:
    """One asset as the table shows it; Decimal throughout."""

    asset: str
    free: Decimal
    locked: Decimal
    available: Decimal
    credit_limit: Decimal
    used_credit: Decimal
    available_credit: Decimal
    pending_deposit: Decimal
    value: Decimal | None = None

    @property
    def holding(self) -> Decimal:
        return self.free + self.locked

    @property
    def utilisation(self) -> tuple[Decimal, Decimal] | None:
        """``(used, total)`` credit, or None when the asset has no credit line."""
        if self.credit_limit <= 0:
            return None
        return (self.used_credit, self.credit_limit)

    def cell(self, column: Column) -> Decimal | str | None:
        """The raw value of one column."""
        if column is Column.ASSET:
            return self.asset
        if column is Column.UTILISATION:
            return utilisation_percent(self.utilisation)
        attribute: Decimal | None = getattr(self, _ATTRIBUTES[column])
        return attribute


_ATTRIBUTES = {
    Column.FREE: "free",
    Column.LOCKED: "locked",
    Column.AVAILABLE: "available",
    Column.CREDIT_LIMIT: "credit_limit",
    Column.USED_CREDIT: "used_credit",
    Column.AVAILABLE_CREDIT: "available_credit",
    Column.PENDING_DEPOSIT: "pending_deposit",
    Column.VALUE: "value",
}


def utilisation_percent(utilisation: tuple[Decimal, Decimal] | None) -> Decimal | None:
    """Used credit in percent of the limit (exact Decimal), None without a credit line."""
    if utilisation is None:
        return None
    used, total = utilisation
    with localcontext(MONEY_CONTEXT):
        return used * HUNDRED / total


def utilisation_text(percent: Decimal | None) -> str:
    """``"38%"``; ``"<1%"`` for a little credit used; ``""`` without a credit line."""
    if percent is None:
        return ""
    if ZERO < percent < 1:
        return "<1%"
    return f"{percent.quantize(Decimal(1), rounding=ROUND_HALF_EVEN)}%"


def merge_row(asset: str, account: Balance | None, portfolio: PortfolioBalance | None) -> AssetRow:
    """One asset from Get Account and Get Account Credit; either may lack the asset."""
    if account is not None:
        free, locked = account.free, account.locked
        pending = account.pending_deposit
    else:
        assert portfolio is not None
        free = portfolio.available_funds - portfolio.used_credit
        locked, pending = portfolio.locked_funds, ZERO
    if portfolio is not None:
        credit_limit = portfolio.total_credit
        used, available_credit = portfolio.used_credit, portfolio.available_credit
    else:
        assert account is not None
        credit_limit = max(ZERO, -account.limit)
        used = max(ZERO, -account.free)
        available_credit = max(ZERO, credit_limit - used)
    available = account.available if account is not None else free + credit_limit
    return AssetRow(asset, free, locked, available, credit_limit, used, available_credit, pending)


def merge_balances(balances: Balances) -> list[AssetRow]:
    """Rows for every asset of either view, in asset-code order (not yet valued)."""
    account, portfolio = balances.account.balances, balances.portfolio.balances
    assets = sorted(set(account) | set(portfolio))
    return [merge_row(asset, account.get(asset), portfolio.get(asset)) for asset in assets]


# -- the model ------------------------------------------------------------------------------


class BalancesModel(QAbstractTableModel):
    """Balances per asset with their value in ``valuation_currency``.

    Feed it ``set_balances`` (a ``Balances`` snapshot) and ``set_top_of_book``; read the
    total with ``total()`` and what could not be valued with ``unvalued()``.
    """

    #: Emitted after the total or the unvalued assets may have changed.
    valuationChanged = Signal()
    #: Emitted when the set of assets changes (the list, in row order).
    assetsChanged = Signal(list)

    def __init__(
        self, precision: Precision, currency: str = "USD", parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._precision = precision
        self._currency = currency
        self._base: list[AssetRow] = []
        self._rows: list[AssetRow] = []
        self._books: dict[str, TopOfBook] = {}
        self._rates: dict[str, Decimal | None] = {}
        self._number_font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._palette = current_palette()
        follow_palette(self.set_palette)

    # -- colours ----------------------------------------------------------------------------

    @property
    def palette(self) -> TradePalette:
        return self._palette

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the text colours of the whole table, in one signal."""
        if palette == self._palette:
            return
        self._palette = palette
        signal_whole_table(self, COLOUR_ROLES)

    # -- feeding ----------------------------------------------------------------------------

    def set_balances(self, balances: Balances) -> None:
        self._base = merge_balances(balances)
        self._revalue()

    def set_top_of_book(self, books: Mapping[str, TopOfBook]) -> None:
        self._books = dict(books)
        self._revalue()

    def set_valuation_currency(self, currency: str) -> None:
        if currency == self._currency:
            return
        self._currency = currency
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, Column.VALUE, Column.VALUE)
        self._revalue(force_values=True)

    # -- reading ----------------------------------------------------------------------------

    @property
    def valuation_currency(self) -> str:
        return self._currency

    @property
    def top_of_book(self) -> dict[str, TopOfBook]:
        """The books the current values were computed from."""
        return dict(self._books)

    @property
    def rows(self) -> Sequence[AssetRow]:
        return tuple(self._rows)

    def assets(self) -> list[str]:
        return [row.asset for row in self._rows]

    def row_of(self, asset: str) -> AssetRow | None:
        for row in self._rows:
            if row.asset == asset:
                return row
        return None

    def rate(self, asset: str) -> Decimal | None:
        return self._rates.get(asset)

    def total(self) -> Decimal:
        """Sum of the values of the assets that could be valued."""
        with localcontext(MONEY_CONTEXT):
            return sum((row.value for row in self._rows if row.value is not None), ZERO)

    def unvalued(self) -> list[str]:
        """Assets with a holding but no price to the valuation currency (left out of the total)."""
        return [row.asset for row in self._rows if row.value is None and row.holding != 0]

    # -- recomputing ------------------------------------------------------------------------

    def _revalue(self, *, force_values: bool = False) -> None:
        self._rates = {
            row.asset: valuation_rate(row.asset, self._currency, self._books) for row in self._base
        }
        new_rows = [self._valued(row) for row in self._base]
        if [row.asset for row in new_rows] != [row.asset for row in self._rows]:
            self.beginResetModel()
            self._rows = new_rows
            self.endResetModel()
            self.assetsChanged.emit(self.assets())
        else:
            old_rows, self._rows = self._rows, new_rows
            self._signal_changes(old_rows, new_rows, force_values)
        self.valuationChanged.emit()

    def _valued(self, row: AssetRow) -> AssetRow:
        rate = self._rates.get(row.asset)
        if rate is None:
            return row
        with localcontext(MONEY_CONTEXT):
            value = row.holding * rate
        return replace(row, value=value)

    def _signal_changes(
        self, old_rows: Sequence[AssetRow], new_rows: Sequence[AssetRow], force_values: bool
    ) -> None:
        """One dataChanged per run of adjacent changed cells of a row, nothing for the rest."""
        for r, (old, new) in enumerate(zip(old_rows, new_rows, strict=True)):
            changed = [
                column
                for column in Column
                if old.cell(column) != new.cell(column) or (force_values and column is Column.VALUE)
            ]
            signal_changed_cells(self, r, changed)

    # -- Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column):
            return None
        column = Column(section)
        if role == Qt.ItemDataRole.DisplayRole:
            if column is Column.VALUE:
                return f"Value ({self._currency})"
            return HEADERS[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return TOOLTIPS.get(column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column is not Column.ASSET:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if not 0 <= index.column() < len(Column):
            return None
        row, column = self._rows[index.row()], Column(index.column())
        raw = row.cell(column)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column, raw)
        if role in (SORT_ROLE, VALUE_ROLE):
            return raw
        if role == UTILISATION_ROLE:
            return row.utilisation if column is Column.UTILISATION else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column is Column.ASSET:
                return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            if column is Column.UTILISATION:
                return Qt.AlignmentFlag.AlignCenter
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        if role == Qt.ItemDataRole.FontRole:
            return self._font(column)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(column, raw)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        return None

    def _text(self, row: AssetRow, column: Column, raw: Decimal | str | None) -> str:
        if isinstance(raw, str):
            return raw
        if column is Column.UTILISATION:
            return utilisation_text(raw)
        if column is Column.VALUE:
            return self._precision.amount(raw, self._currency)
        return self._precision.amount(raw, row.asset)

    def _foreground(self, column: Column, raw: Decimal | str | None) -> QColor | None:
        """Negative amounts in the error colour, a value that cannot be computed in grey."""
        if isinstance(raw, Decimal) and raw < 0:
            return self._palette.error
        if column is Column.VALUE and raw is None:
            return self._palette.stale
        return None

    def _font(self, column: Column) -> QFont | None:
        if column in (Column.ASSET, Column.UTILISATION):
            return None
        return self._number_font

    def _tooltip(self, row: AssetRow, column: Column) -> str | None:
        if column is Column.VALUE and row.value is None:
            return f"No price to value {row.asset} in {self._currency}"
        if column is Column.VALUE:
            rate = self._rates.get(row.asset)
            pair = f"{row.asset}/{self._currency}"
            return f"{self._precision.amount(row.holding, row.asset)} {row.asset} at {rate} {pair}"
        if column is Column.UTILISATION and row.utilisation is not None:
            used, total = row.utilisation
            amount = self._precision.amount
            return f"{amount(used, row.asset)} of {amount(total, row.asset)} {row.asset} used"
        return None


class BalancesSortProxy(DecimalSortProxy):
    """Assets without a value ("—") sort before every number."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, missing_first=True)
