"""The order ticket's widgets and their layout, without behaviour: pair, Buy/Sell, amount with
its size-preset buttons, type, limit with its wire details line, end time, client id, the
prediction labels, the what-if grid, the override, Send and the outcome. ``OrderTicketPanel``
(``order_ticket.py``) wires them to the Qt-free ticket and renders its previews.

The ticket scrolls inside its dock rather than squeezing wrapped lines into each other when the
dock is shorter than the ticket, and its minimum width follows the form rows only (so a price
never relays the window out)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from itertools import pairwise

from PySide6.QtCore import Qt, QTimeZone
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import digits_of, format_number
from app.domain.pair_terms import Side
from app.ui.fonts import number_font
from app.ui.level_text import wrapped_label
from app.ui.palette import TradePalette, level_css

#: The widest unit text the ticket shows beside the amount (the limit's is shorter).
UNIT_SAMPLE = "USD to spend"


def side_css(side: Side, palette: TradePalette) -> str:
    """A side button: its colour as text, filled with it when picked."""
    colour = (palette.bid if side == "buy" else palette.ask).name()
    return (
        f"QPushButton {{ color: {colour}; font-weight: bold; }}"
        f"QPushButton:checked {{ background-color: {colour}; "
        f"color: {palette.background.name()}; }}"
    )


class OrderTicketForm(QWidget):
    """The ticket's widgets (object names are what tests and style sheets find them by)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("orderTicketPanel")
        self._presets_for: str | None = None  # the asset the preset buttons are for
        mono = number_font()
        self._build_form(mono)
        self._build_predictions()
        self._build_layout()
        order = [
            self.pair_box,
            self.buy_button,
            self.sell_button,
            self.size_edit,
            self.type_box,
            self.limit_edit,
            self.end_check,
            self.end_edit,
            self.override_check,
            self.send_button,
        ]
        for first, second in pairwise(order):
            QWidget.setTabOrder(first, second)

    def _build_form(self, mono: QFont) -> None:
        self.pair_box = QComboBox(self)
        self.pair_box.setObjectName("orderPair")
        self.pair_box.setToolTip("The pair traded: Buy or Sell its base asset")
        self.buy_button = QPushButton("Buy  Alt+B", self)
        self.buy_button.setObjectName("orderBuy")
        self.sell_button = QPushButton("Sell  Alt+S", self)
        self.sell_button.setObjectName("orderSell")
        self.side_group = QButtonGroup(self)
        self.side_group.setExclusive(True)
        for button in (self.buy_button, self.sell_button):
            button.setCheckable(True)
            button.setAutoDefault(False)
            self.side_group.addButton(button)
        self.buy_button.setChecked(True)
        sides = _row(self.pair_box, self.buy_button, self.sell_button)

        self.size_edit, self.size_unit = self._number_field("orderSize", "amount", mono)
        self.units_button = QPushButton(self)  # the amount in the pair's base or quote
        self.units_button.setObjectName("orderUnits")
        self.units_button.setAutoDefault(False)
        self.preset_row = QHBoxLayout()  # quick buttons: the size presets of the asset sold
        self.preset_row.setContentsMargins(0, 0, 0, 0)
        self.preset_row.addStretch(1)  # the buttons compact on the left
        self.preset_box = QWidget(self)
        self.preset_box.setObjectName("orderPresets")
        self.preset_box.setLayout(self.preset_row)
        self.preset_buttons: list[QPushButton] = []

        self.type_box = QComboBox(self)
        self.type_box.setObjectName("orderType")
        self.type_box.addItem("Market", "market")
        self.type_box.addItem("Limit", "limit")

        self.limit_edit, self.limit_unit = self._number_field("orderLimit", "limit price", mono)
        # Room for the unit text from the start: the dock is sized before the pairs are known,
        # and a unit label squeezed later is cut ("USD to spen").
        self.size_unit.setMinimumWidth(self.fontMetrics().horizontalAdvance(UNIT_SAMPLE))
        # the details line: the wire's own view of the limit
        self.wire_label = wrapped_label(self, "orderWireLimit")
        self.wire_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.wire_label.setToolTip("What is sent: the limit as the service reads it")
        self.wire_label.setStyleSheet("font-size: small;")

        self.end_check = QCheckBox("Good until (UTC)", self)
        self.end_check.setObjectName("orderEndEnabled")
        self.end_check.setChecked(True)
        self.end_check.setToolTip(
            "The service cannot cancel an order: without an end time a limit order rests "
            "until it fills"
        )
        self.end_edit = QDateTimeEdit(self)
        self.end_edit.setObjectName("orderEndAt")
        self.end_edit.setTimeZone(QTimeZone.utc())
        self.end_edit.setDisplayFormat("yyyy-MM-dd HH:mm 'UTC'")
        self.end_edit.setCalendarPopup(True)

        self.client_id_label = QLabel(self)
        self.client_id_label.setObjectName("orderClientId")
        self.client_id_label.setFont(mono)
        self.client_id_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        form = self._form = QFormLayout()
        form.addRow("Pair", sides)
        form.addRow(
            self._buddy("Amount (&z)", self.size_edit),
            _row(self.size_edit, self.size_unit, self.units_button),
        )
        form.addRow("", self.preset_box)
        form.addRow("T&ype", self.type_box)
        form.addRow(self._buddy("Li&mit", self.limit_edit), _row(self.limit_edit, self.limit_unit))
        form.addRow("", self.wire_label)
        form.addRow(
            self._buddy("E&nd", self.end_check), _row(self.end_check, self.end_edit, stretch=1)
        )
        form.addRow("Client id", self.client_id_label)

    def _build_predictions(self) -> None:
        self.input_error = wrapped_label(self, "orderInputError")
        self.estimate_label = wrapped_label(self, "orderEstimate")
        self.rest_label = wrapped_label(self, "orderRests")
        self.what_if_toggle = QToolButton(self)
        self.what_if_toggle.setObjectName("orderWhatIfToggle")
        self.what_if_toggle.setText("What-if")
        self.what_if_toggle.setCheckable(True)
        self.what_if_toggle.setChecked(True)
        self.what_if_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.what_if_toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.what_if_toggle.setToolTip("Show or hide the balances after the trade")
        self.what_if_box = QWidget(self)
        self.what_if_box.setObjectName("orderWhatIf")
        self.what_if_grid = QGridLayout(self.what_if_box)
        self.what_if_grid.setContentsMargins(0, 0, 0, 0)
        self.what_if_cells: list[list[QLabel]] = []
        self.what_if_headers: list[QLabel] = []
        for column, title in enumerate(("After", "free", "credit")):
            header = QLabel(f"<b>{title}</b>", self.what_if_box)
            self.what_if_grid.addWidget(header, 0, column)
            self.what_if_headers.append(header)
        for row in (1, 2):
            cells = [QLabel(self.what_if_box) for _ in range(3)]
            for column, cell in enumerate(cells):
                cell.setObjectName(f"orderWhatIf{row}{column}")
                self.what_if_grid.addWidget(cell, row, column)
            self.what_if_cells.append(cells)
        self.verdict_label = wrapped_label(self, "orderVerdict")
        self.checks_label = wrapped_label(self, "orderChecks")
        self.override_check = QCheckBox("Override the size &limit for this order", self)
        self.override_check.setObjectName("orderOverride")
        self.override_check.setVisible(False)
        self.send_button = QPushButton(self)
        self.send_button.setObjectName("orderSend")
        self.send_button.setDefault(True)
        self.send_button.setToolTip("Enter sends (after the confirmation, if switched on)")
        self.outcome_label = wrapped_label(self, "orderOutcome")
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Offered after a refusal for credit outside business hours (the ticket's words).
        self.retry_button = QPushButton("Send when credit opens…", self)
        self.retry_button.setObjectName("orderCreditRetry")
        self.retry_button.setToolTip(
            "Queue this order to be sent when the service's credit window opens (a parent in "
            "Working orders, until a deadline)"
        )
        self.retry_button.setVisible(False)

    def _build_layout(self) -> None:
        content = QWidget(self)
        content.setObjectName("orderTicketContent")
        scroll = QScrollArea(self)
        scroll.setObjectName("orderTicketScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        self._content, self._scroll = content, scroll
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll, 1)
        layout = self._content_layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)  # a dock is narrow: no width wasted on margins
        layout.addLayout(self._form)
        for label in (self.input_error, self.estimate_label, self.rest_label):
            layout.addWidget(label)
        layout.addWidget(self.what_if_toggle)
        layout.addWidget(self.what_if_box)
        layout.addWidget(self.verdict_label)
        layout.addStretch(1)
        # The action area is anchored under the scrolling part: Send, what blocks or warns
        # about it, and the one outcome line are in view at any window size.
        actions = self.action_area = QWidget(self)
        actions.setObjectName("orderTicketActions")
        below = QVBoxLayout(actions)
        below.setContentsMargins(6, 2, 6, 6)
        for widget in (self.checks_label, self.override_check, self.send_button):
            below.addWidget(widget)
        below.addWidget(self.outcome_label)
        below.addWidget(self.retry_button)
        outer.addWidget(actions)
        self.what_if_toggle.toggled.connect(self._show_what_if)

    def _show_what_if(self, shown: bool) -> None:
        """The what-if collapses to its title (the verdict line stays: it says a refusal)."""
        self.what_if_box.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.what_if_toggle.setArrowType(arrow)

    def _fit_width(self) -> None:
        """The dock is never narrower than the ticket's form rows (plus margins and room for
        the vertical scrollbar): there is no horizontal scrollbar, so a narrower dock cut a
        row's end off ("USD to spen" at 1366×768). Only the form counts: its rows change with
        the pair and side, not with every tick, so a price never relays the window out (the
        labels below wrap)."""
        margins = self._content_layout.contentsMargins()
        bar = self._scroll.verticalScrollBar().sizeHint().width()
        width = self._form.minimumSize().width() + margins.left() + margins.right() + bar
        if width != self._scroll.minimumWidth():
            self._scroll.setMinimumWidth(width)

    def _number_field(self, name: str, placeholder: str, font: QFont) -> tuple[QLineEdit, QLabel]:
        """An amount or price entry in the numbers' font, and the unit label beside it (named
        ``name`` and ``name + "Unit"``)."""
        edit = QLineEdit(self)
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        edit.setFont(font)
        unit = QLabel(self)
        unit.setObjectName(f"{name}Unit")
        return edit, unit

    def _buddy(self, text: str, field: QWidget) -> QLabel:
        """A row label whose Alt+letter jumps to ``field`` (rows holding a layout need one)."""
        label = QLabel(text, self)
        label.setBuddy(field)
        return label

    def restyle(self, palette: TradePalette) -> None:
        """The side buttons and every message label in the colours of ``palette``."""
        self.buy_button.setStyleSheet(side_css("buy", palette))
        self.sell_button.setStyleSheet(side_css("sell", palette))
        for label in self.findChildren(QLabel):
            level = label.property("level")
            if isinstance(level, str):
                label.setStyleSheet(level_css(level, palette))

    def show_presets(
        self,
        asset: str | None,
        amounts: tuple[Decimal, ...],
        use: Callable[[Decimal], object],
    ) -> None:
        """One quick button per size preset of the asset the order sells (rebuilt when the
        asset changes; forget ``_presets_for`` to rebuild after the presets changed)."""
        if asset == self._presets_for:
            return
        self._presets_for = asset
        for button in self.preset_buttons:
            self.preset_row.removeWidget(button)
            button.deleteLater()
        self.preset_buttons = []
        for amount in amounts:
            text = format_number(amount, digits_of(amount))  # as typed: 0.01, 10,000
            button = QPushButton(text, self.preset_box)
            button.setObjectName("orderPreset")
            button.setAutoDefault(False)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the focus stays where Enter sends
            button.setToolTip(f"Amount {text} {asset}")
            button.clicked.connect(lambda _=False, value=amount: use(value))
            button.installEventFilter(self)  # Alt+B / Alt+S as everywhere in the ticket
            self.preset_row.insertWidget(self.preset_row.count() - 1, button)
            self.preset_buttons.append(button)
        self._form.setRowVisible(self.preset_box, bool(self.preset_buttons))


def _row(*widgets: QWidget, stretch: int = 0) -> QHBoxLayout:
    """Widgets side by side, the one at ``stretch`` taking the room left."""
    row = QHBoxLayout()
    for index, widget in enumerate(widgets):
        row.addWidget(widget, 1 if index == stretch else 0)
    return row
