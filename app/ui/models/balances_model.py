"""The balances table: both account views merged per asset, valued in a chosen currency.

One row per asset seen in Get Account or Get Account Credit (the portfolio). The columns follow
the sandbox README, "Behaviour the seed leaves open": ``free`` may go negative when credit is spent,
``available`` = free − limit, credit limit = the portfolio's ``totalCredit`` (= −limit), used and
available credit from the portfolio. An asset's value is its holding (free + locked, so spent
credit counts against it) times the top-of-book mid to the valuation currency: the direct pair,
the inverse pair, or one hop through USD or USDT. Everything is Decimal; the model tells the view
which cells changed (one ``dataChanged`` per run of changed cells in a row) and resets only when
the set of assets changes. Negative amounts are in the theme's error colour, a value that cannot
be computed in its stale grey (``app.ui.palette``); a theme switch repaints the text colours of
the whole table in one ``dataChanged``. While the balances feed is stale (``set_stale``: offline,
failing, or too old) every cell is in the stale grey, so no number looks current that is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor

from app.domain.balance_rows import ZERO, AssetRow, merge_row
from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT
from app.domain.records import TopOfBook
from app.domain.valuation import valuation_rate
from app.services.session import Balances
from app.ui.models.columns import Column
from app.ui.models.keyed_table import Index, KeyedTableModel
from app.ui.models.record_cells import Cell
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import KeyedSortView
from app.ui.palette import TradePalette

#: The exact Decimal behind a numeric cell (None where there is none).
VALUE_ROLE = Qt.ItemDataRole.UserRole + 2
#: ``(used, total)`` credit as Decimals for the utilisation bar, None without a credit line.
UTILISATION_ROLE = Qt.ItemDataRole.UserRole + 3
HUNDRED = Decimal(100)


# -- rows -----------------------------------------------------------------------------------


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


def merge_balances(balances: Balances) -> list[AssetRow]:
    """Rows for every asset of either view, in asset-code order (not yet valued)."""
    account, portfolio = balances.account.balances, balances.portfolio.balances
    assets = sorted(set(account) | set(portfolio))
    return [merge_row(asset, account.get(asset), portfolio.get(asset)) for asset in assets]


# -- columns ---------------------------------------------------------------------------------


def negative_colour(palette: TradePalette, value: Decimal | None) -> QColor | None:
    return palette.error if value is not None and value < 0 else None


def amount_column(key: str, header: str, tooltip: str) -> Column[AssetRow]:
    """A column of the ``AssetRow`` attribute ``key``: an amount of the row's asset."""

    def cell(row: AssetRow, precision: Precision) -> Cell:
        value: Decimal = getattr(row, key)
        return Cell(precision.exact(value, row.asset), value, None)

    def colour(row: AssetRow, palette: TradePalette) -> QColor | None:
        return negative_colour(palette, getattr(row, key))

    return Column(key, header, cell, tooltip, numeric=True, colour=colour)


def utilisation_cell(row: AssetRow, _: Precision) -> Cell:
    percent = utilisation_percent(row.utilisation)
    return Cell(utilisation_text(percent), percent, None)


def utilisation_tip(row: AssetRow, precision: Precision) -> str | None:
    if row.utilisation is None:
        return None
    used, total = row.utilisation
    amount = precision.amount
    return f"{amount(used, row.asset)} of {amount(total, row.asset)} {row.asset} used"


def value_cell(row: AssetRow, precision: Precision) -> Cell:
    return Cell(precision.amount(row.value, row.currency), row.value, None)


def value_colour(row: AssetRow, palette: TradePalette) -> QColor | None:
    """Negative in the error colour, a value that cannot be computed in grey."""
    return palette.stale if row.value is None else negative_colour(palette, row.value)


def value_tip(row: AssetRow, precision: Precision) -> str:
    if row.value is None:
        return f"No price to value {row.asset} in {row.currency}"
    pair = f"{row.asset}/{row.currency}"
    rate = precision.price_text(row.rate, pair)  # grouped: 91,234.50, not 91234.5
    return f"{precision.amount(row.holding, row.asset)} {row.asset} at {rate} {pair}"


COLUMNS: tuple[Column[AssetRow], ...] = (
    Column("asset", "Asset", lambda row, _: Cell(row.asset, row.asset, None)),
    amount_column("free", "Free", "Funds not locked in orders; negative when credit is spent"),
    amount_column("locked", "Locked", "Locked by resting orders"),
    amount_column("available", "Available", "Free plus the credit line (free − limit)"),
    amount_column("credit_limit", "Credit limit", "Credit granted on this asset"),
    amount_column("used_credit", "Used credit", "Credit in use (free below zero)"),
    amount_column("available_credit", "Available credit", "Credit still available"),
    amount_column("pending_deposit", "Pending deposit", "Deposits not yet credited"),
    Column(
        "utilisation",
        "Credit used",
        utilisation_cell,
        "Used credit as a share of the credit limit",
        numeric=True,
        alignment=Qt.AlignmentFlag.AlignCenter,
        fixed_pitch=False,
        colour=lambda row, palette: negative_colour(palette, utilisation_percent(row.utilisation)),
        tip=utilisation_tip,
    ),
    Column(
        "value",
        "Value",
        value_cell,
        "Holding (free + locked) valued at top-of-book mid",
        numeric=True,
        colour=value_colour,
        tip=value_tip,
    ),
)


# -- the model ------------------------------------------------------------------------------


class BalancesModel(KeyedTableModel[AssetRow]):
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
        super().__init__(COLUMNS, precision, parent)
        self._currency = currency
        self._base: list[AssetRow] = []
        self._books: dict[str, TopOfBook] = {}
        self._value = self.column("value")
        self._utilisation = self.column("utilisation")

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
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, self._value, self._value)
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
        return tuple(self._records)

    def assets(self) -> list[str]:
        return [row.asset for row in self._records]

    def row_of(self, asset: str) -> AssetRow | None:
        row = self.position(asset)
        return None if row is None else self.record(row)

    def rate(self, asset: str) -> Decimal | None:
        row = self.row_of(asset)
        return None if row is None else row.rate

    def total(self) -> Decimal:
        """Sum of the values of the assets that could be valued."""
        with localcontext(MONEY_CONTEXT):
            return sum((row.value for row in self._records if row.value is not None), ZERO)

    def unvalued(self) -> list[str]:
        """Assets with a holding but no price to the valuation currency (left out of the total)."""
        return [row.asset for row in self._records if row.value is None and row.holding != 0]

    def header(self, column: int) -> str:
        if column == self._value:
            return f"Value ({self._currency})"
        return super().header(column)

    # -- recomputing ------------------------------------------------------------------------

    def _revalue(self, *, force_values: bool = False) -> None:
        new_rows = [self._valued(row) for row in self._base]
        changed_set = [row.asset for row in new_rows] != self.assets()
        self.apply([(row.asset, row) for row in new_rows], reset=changed_set)
        if changed_set:
            self.assetsChanged.emit(self.assets())
        elif force_values and new_rows:
            last = len(new_rows) - 1
            self.dataChanged.emit(self.index(0, self._value), self.index(last, self._value))
        self.valuationChanged.emit()

    def _valued(self, row: AssetRow) -> AssetRow:
        rate = valuation_rate(row.asset, self._currency, self._books)
        if rate is None:
            return replace(row, currency=self._currency)
        with localcontext(MONEY_CONTEXT):
            value = row.holding * rate
        return replace(row, value=value, currency=self._currency, rate=rate)

    # -- more roles -------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self._stale and role == Qt.ItemDataRole.ForegroundRole and index.isValid():
            return self._palette.stale
        return super().data(index, role)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        if role == VALUE_ROLE:
            return self._cells[row][column].sort
        if role == UTILISATION_ROLE:
            return self.record(row).utilisation if column == self._utilisation else None
        return None


class BalancesSortView(KeyedSortView):
    """Assets without a value ("—") sort before every number (the model keeps the order)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, missing_first=True)
