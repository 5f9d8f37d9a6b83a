"""Set cost of deposits… (the positions dock's context menu): the trader's own unit
cost of a deposit, a withdrawal or an initial balance of one asset, instead of the mark the
terminal saw first (the service keeps no price history, so an entry older than the terminal
enters at the first mark seen; see ``app.services.positions``).

The cost is typed as text and read as Decimal, in valuation currency per unit (commas are
thousands separators). A value that is not a number, or is negative, is refused with the reason
beside the buttons and stays in the box. "Use first mark" forgets an entered cost. The dialog is
opened with ``open()`` (never ``exec()``): ``costSet`` carries the choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import Precision
from app.domain.errors import ParseError
from app.domain.money import parse_decimal
from app.domain.positions import MarkKey
from app.services.positions import UnitValue
from app.ui.level_text import show_level
from app.ui.models.record_cells import local_time_text

#: Ledger event types as the dialog words them.
KINDS = {"deposit": "Deposit", "withdrawal": "Withdrawal", "initialBalances": "Initial balance"}


@dataclass(frozen=True)
class CostChoice:
    """One entry of the asset that enters at a unit value: its key, amount and current value."""

    key: MarkKey
    kind: str
    amount: Decimal
    value: UnitValue | None


def parse_cost(text: str, currency: str, asset: str) -> Decimal:
    """The unit cost typed; ValueError in the trader's words."""
    cleaned = text.replace(",", "").strip()
    if not cleaned:
        raise ValueError(f"Enter the cost in {currency} per {asset}")
    try:
        value = parse_decimal(cleaned, "cost")
    except ParseError:
        raise ValueError(f"{text.strip()!r} is not a number of {currency} per {asset}") from None
    if value < 0:
        raise ValueError(f"A cost is zero or more {currency} per {asset}, not {text.strip()}")
    return value


class CostDialog(QDialog):
    """Choose one entry of ``asset`` and enter its unit cost (or go back to its first mark)."""

    #: transaction id, asset, unit cost (None: use the first mark again)
    costSet = Signal(str, str, object)

    def __init__(
        self,
        asset: str,
        currency: str,
        choices: list[CostChoice],
        precision: Precision,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("costDialog")
        self.setWindowTitle(f"Set cost of {asset} deposits")
        self.asset, self.currency = asset, currency
        self.choices = choices
        self._precision = precision
        self.entry = QComboBox(self)
        self.entry.setObjectName("costEntry")
        for choice in choices:
            self.entry.addItem(self._describe(choice))
        self.unit = QLineEdit(self)
        self.unit.setObjectName("costUnit")
        self.unit.setPlaceholderText(f"{currency} per {asset}")
        self.now = QLabel(self)
        self.now.setObjectName("costNow")
        self.error = QLabel(self)
        self.error.setObjectName("costError")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.reset = QPushButton("Use first mark", self)
        self.reset.setObjectName("costReset")
        self.reset.setToolTip("Forget the cost entered: the entry counts at the mark first seen")
        self.buttons.addButton(self.reset, QDialogButtonBox.ButtonRole.ResetRole)
        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        self.reset.clicked.connect(self._reset)
        self.entry.currentIndexChanged.connect(self._chosen)

        form = QFormLayout()
        form.addRow("Entry", self.entry)
        form.addRow(f"Cost ({currency} per {asset})", self.unit)
        form.addRow("", self.now)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self._chosen(self.entry.currentIndex())

    def _describe(self, choice: CostChoice) -> str:
        amount = self._precision.exact(choice.amount, self.asset)
        sign = "+" if choice.amount > 0 else ""
        kind = KINDS.get(choice.kind, choice.kind)
        return f"{local_time_text(choice.key.time)} · {kind} {sign}{amount} {self.asset}"

    def _chosen(self, index: int) -> None:
        if not 0 <= index < len(self.choices):
            self.now.setText("No deposit, withdrawal or initial balance of this asset")
            self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)
            self.reset.setEnabled(False)
            return
        value = self.choices[index].value
        self.reset.setEnabled(value is not None and value.source == "cost")
        if value is None:
            self.now.setText("Counts at: no value yet (no price seen)")
            return
        unit = f"{value.unit:,f} {self.currency}"
        if value.source == "cost":
            self.now.setText(f"Counts at: {unit}, the cost entered")
            self.unit.setText(f"{value.unit:f}")
        else:
            seen = "" if value.seen_at is None else f", seen {local_time_text(value.seen_at)}"
            self.now.setText(f"Counts at: {unit}, the first mark{seen}")

    def _ok(self) -> None:
        choice = self.choices[self.entry.currentIndex()]
        try:
            unit = parse_cost(self.unit.text(), self.currency, self.asset)
        except ValueError as exc:
            show_level(self.error, str(exc), "error")
            self.unit.setFocus()
            return
        self.costSet.emit(choice.key.transaction_id, self.asset, unit)
        self.accept()

    def _reset(self) -> None:
        choice = self.choices[self.entry.currentIndex()]
        self.costSet.emit(choice.key.transaction_id, self.asset, None)
        self.accept()
