"""Balances panel: free, locked, credit and value per asset, and the total in a chosen currency.

Fed by the bridge's ``balances`` and ``topOfBook`` signals. The valuation currency is kept in
the settings (``valuation_currency``, USD by default). The model keeps the sort order (the
tables' one sort, ``app.ui.models.sorting``; the view sits on a ``BalancesSortView`` that adds
no order of its own) and does not re-sort on every tick: changes are collected and the current
sort is re-applied at most every ``RESORT_MS``, in a frame of the application's frame clock
(``app.ui.frame_clock``).

No layout churn: the columns have fixed (interactive) widths, fitted to their contents when
rows, headers or the currency change, and on a tick only when a column's longest text grew
(``fit_columns``) — never ``ResizeToContents``, which measured every cell on every tick and made
the window relayout each time.
The note about unvalued assets is in the palette's warning colour and the utilisation bars
paint from the palette: both follow a theme switch.

Offline honesty, so old balances never pass for current ones: while the balances feed is stale
(offline, failing, or its data too old; ``bridge.freshness``) the table and the total are greyed and
the total says "stale since HH:MM:SS" (the time of the last good balances); both come back when
fresh data arrives.
"""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import Precision
from app.domain.records import TopOfBook
from app.services.session import Balances
from app.ui.column_choice import ColumnChoice
from app.ui.delegates import UtilisationBarDelegate
from app.ui.frame_clock import FrameClock, shared_frame_clock
from app.ui.freshness import Freshness
from app.ui.models.balances_model import (
    UTILISATION_ROLE,
    BalancesModel,
    BalancesSortView,
)
from app.ui.palette import TradePalette, follow_palette, level_css, stale_css
from app.ui.panels.base import PanelContext
from app.ui.preferences import Preferences
from app.ui.widgets.live_text import TextHost

SETTINGS_KEY = "valuation_currency"
DEFAULT_CURRENCY = "USD"
RESORT_MS = 250
#: Columns hidden until the trader shows them (header context menu): the table then fits a
#: 1366×768 layout without a horizontal scrollbar. Credit shows in the ticket too.
DEFAULT_HIDDEN = (
    "available",
    "credit_limit",
    "used_credit",
    "available_credit",
    "pending_deposit",
    "utilisation",
)


def total_text(total: Decimal, currency: str, precision: Precision) -> str:
    return f"Total: {precision.amount(total, currency)} {currency}"


def unvalued_text(assets: list[str]) -> str:
    if not assets:
        return ""
    return f"{', '.join(assets)} not valued (no price); left out of the total"


class BalancesPanel(QWidget):
    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        frames: FrameClock | None = None,
    ) -> None:
        """``frames``: the frame clock (the application's by default)."""
        super().__init__(parent)
        self.setObjectName("balancesPanel")
        self._frames = frames if frames is not None else shared_frame_clock()
        #: Column -> the longest text (in characters) its width was fitted to.
        self._fitted: dict[int, int] = {}
        self._fit_due: set[int] = set()
        self._resort_due = False
        self._context = context
        currency = str(context.settings.value(SETTINGS_KEY, DEFAULT_CURRENCY) or DEFAULT_CURRENCY)

        self.model = BalancesModel(context.precision, currency, self)
        self.proxy = BalancesSortView(self)
        self.proxy.setDynamicSortFilter(False)
        self.proxy.setSourceModel(self.model)

        self.currency_box = QComboBox(self)
        self.currency_box.setObjectName("valuationCurrency")
        self.currency_box.setToolTip("Currency the values and the total are shown in")
        self.currency_box.addItem(currency)
        self.currency_box.setCurrentText(currency)
        self.currency_box.currentTextChanged.connect(self._currency_chosen)

        self.table = QTableView(self)
        self.table.setObjectName("balancesTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        # rows as tight as the watchlist's: five assets fit the compact layout's dock
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.bar_delegate = UtilisationBarDelegate(UTILISATION_ROLE, self.table)
        self.table.setItemDelegateForColumn(self.model.column("utilisation"), self.bar_delegate)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(self.model.column("asset"), Qt.SortOrder.AscendingOrder)
        self.columns = ColumnChoice.of_model(
            self.table, "balances", self.model.columns, context.settings, DEFAULT_HIDDEN
        )

        self.total_label = QLabel(self)
        self.total_label.setObjectName("balancesTotal")
        self.total_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        font = self.total_label.font()
        font.setBold(True)
        self.total_label.setFont(font)
        self.note_label = QLabel(self)
        self.note_label.setObjectName("balancesNote")
        self.note_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.note_label.setStyleSheet(level_css("warning"))
        self.note_label.setVisible(False)
        self.freshness = context.bridge.freshness(context.bridge.balances_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        follow_palette(self.set_palette)

        top = QHBoxLayout()
        top.addWidget(QLabel("Value in:", self))
        top.addWidget(self.currency_box)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        # hosted: a new total repaints the label and never relayouts the window
        layout.addWidget(TextHost(self.total_label, "Total: 0,000,000.00 USD", self))
        layout.addWidget(self.note_label)

        self._frames.listen(self._on_frame)
        self.model.dataChanged.connect(self._schedule_resort)
        self.model.dataChanged.connect(self._cells_changed)
        self.model.modelReset.connect(self._apply_sort)
        for structural in (
            self.model.modelReset,
            self.model.rowsInserted,
            self.model.rowsRemoved,
            self.model.headerDataChanged,
        ):
            structural.connect(self._refit_all)
        self.model.assetsChanged.connect(self._assets_changed)
        self.model.valuationChanged.connect(self._show_total)
        self._show_total()

        context.bridge.balances.connect(self._on_balances)
        context.bridge.topOfBook.connect(self._on_top_of_book)
        # The feeds publish no "latest" value: ask for balances now rather than at the next poll.
        context.bridge.refresh_balances()

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the note's colour, and the bars repainted in the new colours."""
        self.note_label.setStyleSheet(level_css("warning", palette))
        self.total_label.setStyleSheet(stale_css(self.freshness.stale, palette))
        self.table.viewport().update()

    def _freshness_changed(self, freshness: Freshness) -> None:
        """The table and the total in the stale grey while stale (the reason in the tooltip)."""
        self.model.set_stale(freshness.stale)
        self.table.setToolTip(freshness.reason if freshness.stale else "")
        self.total_label.setStyleSheet(stale_css(self.freshness.stale))
        self._show_total()

    # -- feeds ------------------------------------------------------------------------------

    def _on_balances(self, balances: Balances) -> None:
        self.model.set_balances(balances)

    def _on_top_of_book(self, books: dict[str, TopOfBook]) -> None:
        self.model.set_top_of_book(books)

    # -- reactions --------------------------------------------------------------------------

    @property
    def valuation_currency(self) -> str:
        return self.model.valuation_currency

    def apply_preferences(self, prefs: Preferences) -> None:
        self.set_valuation_currency(prefs.valuation_currency)

    def set_valuation_currency(self, currency: str) -> None:
        """Choose the currency (as the combobox does) and remember it."""
        if self.currency_box.findText(currency) < 0:
            self.currency_box.addItem(currency)
        self.currency_box.setCurrentText(currency)

    def _currency_chosen(self, currency: str) -> None:
        if not currency or currency == self.model.valuation_currency:
            return
        self._context.settings.setValue(SETTINGS_KEY, currency)
        self._context.settings.sync()
        self.model.set_valuation_currency(currency)
        self._schedule_resort()

    def _assets_changed(self, assets: list[str]) -> None:
        current = self.model.valuation_currency
        wanted = list(dict.fromkeys([*assets, current]))
        present = [self.currency_box.itemText(i) for i in range(self.currency_box.count())]
        if present == wanted:
            return
        blocked = self.currency_box.blockSignals(True)
        try:
            self.currency_box.clear()
            self.currency_box.addItems(wanted)
            self.currency_box.setCurrentText(current)
        finally:
            self.currency_box.blockSignals(blocked)

    def _show_total(self) -> None:
        model, precision = self.model, self._context.precision
        if model.rowCount() == 0:
            text = f"Total: {precision.amount(None, model.valuation_currency)}"
        else:
            text = total_text(model.total(), model.valuation_currency, precision)
        freshness = self.freshness.current
        if freshness.stale:
            text = f"{text} — {freshness.mark()}"
        self.total_label.setText(text)
        self.total_label.setToolTip(freshness.reason if freshness.stale else "")
        note = unvalued_text(model.unvalued())
        self.note_label.setText(note)
        self.note_label.setVisible(bool(note))

    def _schedule_resort(self, *_: object) -> None:
        if self.proxy.sortColumn() >= 0 and not self._resort_due:
            self._resort_due = True
            self._frames.request(RESORT_MS / 1000)

    def _on_frame(self, _now: float) -> None:
        """The frame clock's tick: the re-sort asked for, columns whose text grew."""
        if self._resort_due:
            self._resort_due = False
            self._apply_sort()
        if self._fit_due:
            columns, self._fit_due = sorted(self._fit_due), set()
            self.fit_columns(columns)

    def _cells_changed(
        self,
        top: QModelIndex | QPersistentModelIndex,
        bottom: QModelIndex | QPersistentModelIndex,
        roles: list[int] | None = None,
    ) -> None:
        if roles and int(Qt.ItemDataRole.DisplayRole) not in roles:
            return  # colours only
        self._fit_due.update(range(top.column(), bottom.column() + 1))
        self._frames.request()

    def _refit_all(self, *_: object) -> None:
        self._fitted.clear()
        self._fit_due.update(range(self.model.columnCount()))
        self._frames.request()

    def fit_columns(self, columns: list[int] | None = None) -> None:
        """Fit ``columns`` (all by default) to their header and cells — only those whose
        longest text grew since they were last fitted, so a tick changes no width."""
        header = self.table.horizontalHeader()
        for column in range(self.model.columnCount()) if columns is None else columns:
            longest = max(map(len, self.model.column_texts(column)), default=0)
            if column in self._fitted and longest <= self._fitted[column]:
                continue
            self._fitted[column] = longest
            width = max(self.table.sizeHintForColumn(column), header.sectionSizeHint(column))
            if width != header.sectionSize(column):
                self.table.setColumnWidth(column, width)

    def _apply_sort(self) -> None:
        column = self.proxy.sortColumn()
        if column >= 0:
            self.proxy.sort(column, self.proxy.sortOrder())

    def asset_order(self) -> list[str]:
        """Assets as the table shows them, top to bottom."""
        return [
            str(self.proxy.index(r, self.model.column("asset"), QModelIndex()).data())
            for r in range(self.proxy.rowCount())
        ]
