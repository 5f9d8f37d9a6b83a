"""The price alert dialog: a new alert (from the Alerts panel or the watchlist's context menu)
or new terms for one (Edit in the Alerts panel).

Pair (any the service trades, watched or not), which price (bid, ask or mid), the condition
(at or above, at or below, crossing), the level in QUOTE per BASE, and whether it fires once or
every time. OK checks the level against the pair (``app.domain.alerts.parse_level``): a level
that is not a number, not positive, or finer than the pair's price increment is refused with
the reason under the form, every value stays as typed and the cursor goes back to the level.
The dialog is opened with ``open()`` (never ``exec()``: nothing blocks the event loop); a saved
alert goes to the session's alerts through the bridge and the dialog closes.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from enum import StrEnum
from typing import TypeVar

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.domain.alerts import (
    CONDITION_WORDS,
    REPEAT_WORDS,
    SOURCE_WORDS,
    AlertInputError,
    Condition,
    PriceAlert,
    PriceSource,
    Repeat,
    new_alert_id,
    parse_level,
    price_unit,
)
from app.domain.display import format_number
from app.ui.level_text import error_line
from app.ui.panels.base import PanelContext

E = TypeVar("E", bound=StrEnum)


class AlertDialog(QDialog):
    """New alert (``alert`` None) or edit ``alert``; see the module docstring."""

    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        alert: PriceAlert | None = None,
        pair: str | None = None,
        source: PriceSource = PriceSource.MID,
        level: Decimal | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("alertDialog")
        self._context = context
        self._alert = alert
        self.setWindowTitle("Edit price alert" if alert else "New price alert")

        pairs = list(context.bridge.available_pairs or context.bridge.watchlist)
        chosen = alert.pair if alert else pair or context.bridge.selected_pair or ""
        if chosen and chosen not in pairs:
            pairs.append(chosen)
        self.pair = QComboBox(self)
        self.pair.setObjectName("alertPair")
        self.pair.addItems(pairs)
        if chosen:
            self.pair.setCurrentText(chosen)
        self.source = self._choice("alertSource", SOURCE_WORDS)
        self.condition = self._choice("alertCondition", CONDITION_WORDS)
        self.repeat = self._choice("alertRepeat", REPEAT_WORDS)
        self.level = QLineEdit(self)
        self.level.setObjectName("alertLevel")
        self.level.setAccessibleName("Alert price")
        self.unit = QLabel(self)
        self.unit.setObjectName("alertUnit")
        level_row = QHBoxLayout()
        level_row.addWidget(self.level, 1)
        level_row.addWidget(self.unit)
        self.error = error_line(self, "alertError")

        if alert is not None:
            self._select(self.source, alert.source)
            self._select(self.condition, alert.condition)
            self._select(self.repeat, alert.repeat)
            level = alert.level
        else:
            self._select(self.source, source)
        if level is not None:
            places = context.precision.price(self.pair.currentText())
            self.level.setText(format_number(level, places, grouping=False))

        form = QFormLayout()
        form.addRow("&Pair", self.pair)
        form.addRow("P&rice", self.source)
        form.addRow("&When", self.condition)
        # a row holding a layout gets a label without a buddy, which shows its "&" as text
        level_label = QLabel("&Level", self)
        level_label.setObjectName("alertLevelLabel")
        level_label.setBuddy(self.level)
        form.addRow(level_label, level_row)
        form.addRow("&Fires", self.repeat)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

        self._show_unit()
        self.pair.currentTextChanged.connect(self._show_unit)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.level.setFocus()
        self.level.selectAll()

    def _choice(self, name: str, words: Mapping[E, str]) -> QComboBox:
        box = QComboBox(self)
        box.setObjectName(name)
        for value, text in words.items():
            box.addItem(text, str(value))
        return box

    @staticmethod
    def _select(box: QComboBox, value: str) -> None:
        box.setCurrentIndex(max(0, box.findData(str(value))))

    def _show_unit(self, *_: object) -> None:
        pair = self.pair.currentText()
        self.unit.setText(price_unit(pair) if pair else "")

    # -- saving ---------------------------------------------------------------------------------

    def read(self) -> PriceAlert:
        """The alert the form describes; AlertInputError says what is wrong."""
        pair = self.pair.currentText()
        if not pair:
            raise AlertInputError("pair", "Choose a pair.")
        info = self._context.bridge.pair_info.get(pair)
        increment = info.price_increment if info is not None else None
        level = parse_level(self.level.text(), pair, increment, self._context.precision.price(pair))
        source = PriceSource(self.source.currentData())
        condition = Condition(self.condition.currentData())
        repeat = Repeat(self.repeat.currentData())
        if self._alert is not None:
            return self._alert.edited(pair, source, condition, level, repeat)
        return PriceAlert(new_alert_id(), pair, source, condition, level, repeat)

    def save(self) -> None:
        """OK: the alert is added (or changed) and the dialog closes; bad input is said under
        the form and every value stays."""
        try:
            alert = self.read()
        except AlertInputError as exc:
            self.error.setText(exc.message)
            self.error.show()
            target = self.level if exc.field == "price" else self.pair
            target.setFocus()
            return
        self.error.hide()
        self._context.bridge.price_alerts.put(alert)
        self.accept()


def open_alert_dialog(
    context: PanelContext,
    parent: QWidget,
    *,
    alert: PriceAlert | None = None,
    pair: str | None = None,
    source: PriceSource = PriceSource.MID,
    level: Decimal | None = None,
) -> AlertDialog:
    """Open the dialog (non-blocking); it deletes itself when closed."""
    dialog = AlertDialog(context, parent, alert=alert, pair=pair, source=source, level=level)
    dialog.finished.connect(lambda _: dialog.deleteLater())
    dialog.open()
    return dialog
