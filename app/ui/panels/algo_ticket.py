"""The algo ticket (F4): choose an algo, a pair, Buy or Sell, the amount in the asset sold and
the fields that algo needs (only those are shown); a preview says what it will do; Send asks
for a confirmation that shows the exact spec, then starts the parent in the execution engine.

Its logic is Qt-free (``app.services.algos.form`` turns the fields into an ``AlgoSpec``,
``app.services.algos.preview`` says what the spec will do on the current book and balances);
this widget forwards what the trader types and renders. The preview is rebuilt on the frame
clock after an edit or a new book of the pair, never per keystroke twice in a frame.

The amount is in the asset sold: the label beside it says ``USD to spend`` for a buy and
``BTC to sell`` for a sell. A side switch never keeps the digits in the other asset: the
amount is converted at the ask, visibly (the words under the field), or cleared when there is
no price. A pair switch clears the amount and the prices (they belonged to the other pair).

A refusal (the spec, the risk limits, the kill switch) is shown in words under the fields and
the fields stay as typed.
"""

from __future__ import annotations

import html
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.domain import utc_now
from app.domain.pair_terms import Side
from app.domain.records import Balances, TopOfBook
from app.services.algos.engine import AlgoRefused, ExecutionEngine
from app.services.algos.form import FIELDS, KIND_FIELDS, AlgoForm, amount_words, switch_side
from app.services.algos.preview import AlgoPreview, preview
from app.services.algos.specs import KINDS, AlgoSpec
from app.services.pretrade import CheckLimits
from app.services.ticket import TicketError
from app.ui.frame_clock import shared_frame_clock
from app.ui.palette import TradePalette, current_palette, follow_palette, level_css
from app.ui.panels.algo_ticket_view import describe, preview_html, spec_lines
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket_form import side_css
from app.ui.preferences import Preferences


#: The spec's fields the confirmation lists when they differ from a new spec's.
class AlgoTicketPanel(QWidget):
    def __init__(self, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("algoTicketPanel")
        self._context = context
        bridge = context.bridge
        self.engine: ExecutionEngine | None = bridge.algos
        self.limits: CheckLimits = Preferences.load(context.settings).check_limits()
        self._tops: dict[str, TopOfBook] = dict(bridge.topOfBook.latest or {})
        self._balances: Balances | None = bridge.balances.latest
        self.spec: AlgoSpec | None = None  # the spec the fields make now (None: an error)
        self.shown_preview: AlgoPreview | None = None
        self.pending: AlgoSpec | None = None  # the spec the open confirmation shows
        self.confirmation: QMessageBox | None = None
        self.started: list[str] = []  # parents started from this ticket

        content = QWidget(self)
        self.kind_box = QComboBox(content)
        self.kind_box.setObjectName("algoKind")
        for kind, info in KINDS.items():
            self.kind_box.addItem(info.label, kind)
            self.kind_box.setItemData(
                self.kind_box.count() - 1, info.summary, Qt.ItemDataRole.ToolTipRole
            )
        self.pair_box = QComboBox(content)
        self.pair_box.setObjectName("algoPair")
        self.pair_box.addItems(sorted(bridge.available_pairs))
        if bridge.selected_pair:
            self.pair_box.setCurrentText(bridge.selected_pair)
        self.buy_button = QPushButton("Buy", content)
        self.buy_button.setObjectName("algoBuy")
        self.sell_button = QPushButton("Sell", content)
        self.sell_button.setObjectName("algoSell")
        self.side_group = QButtonGroup(self)
        for button in (self.buy_button, self.sell_button):
            button.setCheckable(True)
            button.setAutoDefault(False)
            self.side_group.addButton(button)
        self.buy_button.setChecked(True)
        self.amount = QLineEdit(content)
        self.amount.setObjectName("algoAmount")
        self.amount.setPlaceholderText("amount")
        self.amount_unit = QLabel(content)
        self.amount_unit.setObjectName("algoAmountUnit")
        self.conversion = QLabel(content)
        self.conversion.setObjectName("algoConversion")
        self.conversion.setWordWrap(True)
        self.conversion.hide()  # shown with words only (no empty row under the amount)

        form = QFormLayout(content)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Algo", self.kind_box)
        sides = QHBoxLayout()
        sides.addWidget(self.pair_box, 1)
        sides.addWidget(self.buy_button)
        sides.addWidget(self.sell_button)
        form.addRow("Pair", sides)
        amount_row = QHBoxLayout()
        amount_row.addWidget(self.amount, 1)
        amount_row.addWidget(self.amount_unit)
        form.addRow("Amount", amount_row)
        form.addRow(self.conversion)
        self.fields: dict[str, QWidget] = {}
        for key, field_info in FIELDS.items():
            widget: QWidget
            if field_info.kind == "ref":
                box = QComboBox(content)
                box.addItem("touch", "touch")
                box.addItem("mid", "mid")
                widget = box
                box.currentIndexChanged.connect(self._edited)
            else:
                edit = QLineEdit(field_info.default, content)
                edit.setPlaceholderText("optional" if field_info.optional else "")
                edit.textEdited.connect(self._edited)
                widget = edit
            widget.setObjectName(f"algo_{key}")
            widget.setToolTip(field_info.tip)
            form.addRow(field_info.label, widget)
            self.fields[key] = widget
        self._form = form
        self.preview_label = QLabel(content)
        self.preview_label.setObjectName("algoPreview")
        self.preview_label.setWordWrap(True)
        self.preview_label.setTextFormat(Qt.TextFormat.RichText)
        self.preview_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.preview_label)
        # The answer and Send stay in view below the scrolled fields (at 1366×768 the
        # preview runs below the fold); one line, elided, the whole text in its tooltip, so a
        # long refusal never makes the dock taller or wider.
        self.error = QLabel(self)
        self.error.setObjectName("algoError")
        self.error.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.send_button = QPushButton("Send algo…", self)
        self.send_button.setObjectName("algoSend")
        self.send_button.setDefault(True)

        scroll = QScrollArea(self)
        scroll.setWidget(content)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.send_button)

        self.kind_box.currentIndexChanged.connect(self._kind_changed)
        self.pair_box.currentTextChanged.connect(self._pair_changed)
        self.side_group.buttonClicked.connect(self._side_clicked)
        self.amount.textEdited.connect(self._amount_typed)
        self.amount.returnPressed.connect(self.ask_send)
        self.send_button.clicked.connect(self.ask_send)
        bridge.topOfBook.connect(self._on_books)
        bridge.balances.connect(self._on_balances)
        bridge.watchlistChanged.connect(self._refresh_pairs)
        bridge.selectionChanged.connect(self._pair_selected)
        self._frames = shared_frame_clock()
        self._frames.listen(self._on_frame)
        self._frame_asked = False
        self._side: Side = "buy"
        follow_palette(self._paint_sides)
        self._paint_sides()
        self._kind_changed()
        self.rebuild()

    # -- what is on screen ----------------------------------------------------------------------

    @property
    def kind(self) -> str:
        return str(self.kind_box.currentData())

    @property
    def pair(self) -> str:
        return self.pair_box.currentText()

    @property
    def side(self) -> Side:
        return self._side

    def form(self) -> AlgoForm:
        values: dict[str, str] = {}
        for key, widget in self.fields.items():
            if isinstance(widget, QLineEdit):
                values[key] = widget.text()
            elif isinstance(widget, QComboBox):
                values[key] = str(widget.currentData())
        return AlgoForm(self.kind, self.pair, self.side, self.amount.text(), values)

    def field(self, key: str) -> QLineEdit:
        widget = self.fields[key]
        assert isinstance(widget, QLineEdit)
        return widget

    def focus_entry(self) -> None:
        self.amount.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.amount.selectAll()

    def _paint_sides(self, palette: TradePalette | None = None) -> None:
        palette = palette or current_palette()
        self.buy_button.setStyleSheet(side_css("buy", palette))
        self.sell_button.setStyleSheet(side_css("sell", palette))

    # -- edits ----------------------------------------------------------------------------------

    def _kind_changed(self, *_: object) -> None:
        shown = set(KIND_FIELDS[self.kind])
        for key, widget in self.fields.items():
            self._form.setRowVisible(widget, key in shown)
        self._edited()

    def _pair_changed(self, *_: object) -> None:
        cleared = [self.amount] + [
            w
            for k, w in self.fields.items()
            if FIELDS[k].kind == "price" and isinstance(w, QLineEdit)
        ]
        if any(edit.text() for edit in cleared):
            for edit in cleared:
                edit.clear()
            self._convert_note(f"Pair changed to {self.pair}: the amount and prices cleared")
        self._show_unit()
        self._edited()

    def _side_clicked(self, *_: object) -> None:
        side: Side = "buy" if self.buy_button.isChecked() else "sell"
        if side == self._side:
            return
        self.set_side(side)

    def set_side(self, side: Side) -> None:
        """Buy or Sell: the amount converted at the ask into the new asset sold, or cleared."""
        if side == self._side:
            return
        self._side = side
        (self.buy_button if side == "buy" else self.sell_button).setChecked(True)
        pair = self.pair
        if pair:
            precision = self._context.precision
            base, quote = pair.split("/")
            switched = switch_side(
                self.amount.text(),
                pair,
                side,
                self._tops.get(pair),
                {base: precision.asset(base), quote: precision.asset(quote)},
            )
            self.amount.setText(switched.text)
            self._convert_note(switched.words)
        self._show_unit()
        self._edited()

    def _amount_typed(self, *_: object) -> None:
        """A number typed by hand: the words about the last conversion no longer apply."""
        self._convert_note("")
        self._edited()

    def _convert_note(self, words: str) -> None:
        self.conversion.setText(words)
        self.conversion.setVisible(bool(words))

    def _show_unit(self) -> None:
        """The asset the amount is in, at once (not on the next frame: the digits changed now)."""
        self.amount_unit.setText(amount_words(self.pair, self.side) if self.pair else "")

    def _edited(self, *_: object) -> None:
        self.error.clear()
        self._ask_frame()

    def _on_books(self, tops: dict[str, TopOfBook]) -> None:
        self._tops = dict(tops)
        if self.pair in tops:
            self._ask_frame()

    def _on_balances(self, balances: Balances) -> None:
        self._balances = balances
        self._ask_frame()

    def _pair_selected(self, pair: str) -> None:
        """The pair picked elsewhere, while nothing is typed here (never under typed digits)."""
        if not self.amount.text().strip() and self.pair_box.findText(pair) >= 0:
            self.pair_box.setCurrentText(pair)

    def _refresh_pairs(self, *_: object) -> None:
        pairs = sorted(self._context.bridge.available_pairs)
        if pairs != [self.pair_box.itemText(i) for i in range(self.pair_box.count())]:
            current = self.pair
            self.pair_box.blockSignals(True)
            self.pair_box.clear()
            self.pair_box.addItems(pairs)
            self.pair_box.setCurrentText(current)
            self.pair_box.blockSignals(False)

    def _ask_frame(self) -> None:
        if not self._frame_asked:
            self._frame_asked = True
            self._frames.request()

    def _on_frame(self, _now: float) -> None:
        if self._frame_asked:
            self._frame_asked = False
            self.rebuild()

    # -- the preview ----------------------------------------------------------------------------

    def server_now(self) -> datetime:
        return utc_now() + self._context.bridge.clock_offset

    def rebuild(self) -> None:
        """The spec from the fields and its preview, now."""
        self._show_unit()
        try:
            spec = self.form().build(self.server_now())
        except TicketError as exc:
            self.spec = None
            self.shown_preview = None
            self.preview_label.setText(
                f"<i>{html.escape(exc.message)}</i>" if self.amount.text() else ""
            )
            return
        self.spec = spec
        base = spec.pair_side.pair.base if spec.side == "sell" else spec.pair_side.pair.quote
        self.shown_preview = preview(
            spec,
            self._tops.get(spec.pair),
            self._balances,
            now=self.server_now(),
            tops=self._tops,
            limits=self.limits,
            decimals=self._context.precision.asset(base),
        )
        self.preview_label.setText(self.preview_html(self.shown_preview))

    def preview_html(self, shown: AlgoPreview) -> str:
        return preview_html(shown, self._context.precision)

    def ask_send(self) -> QMessageBox | None:
        """Build the spec now; the confirmation shows it exactly, and Send submits that one."""
        if self.engine is None:
            self._refused("no trading desks in this window")
            return None
        try:
            spec = self.form().build(self.server_now())
        except TicketError as exc:
            self._refused(exc.message, exc.field)
            return None
        self.pending = spec
        box = QMessageBox(self)
        box.setObjectName("algoConfirmation")
        box.setWindowTitle("Start this algo?")
        box.setIcon(QMessageBox.Icon.Question)
        box.setText(describe(spec))
        box.setInformativeText("\n".join(spec_lines(spec)))
        send = box.addButton("&Send", QMessageBox.ButtonRole.AcceptRole)
        send.setObjectName("algoConfirmSend")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(send)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(lambda button: self._send(spec) if button is send else None)
        box.finished.connect(lambda _: box.deleteLater())
        box.open()
        self.confirmation = box
        return box

    def _send(self, spec: AlgoSpec) -> None:
        assert self.engine is not None
        self.pending = None
        try:
            parent = self._context.bridge.submit_algo(spec)
        except (AlgoRefused, TicketError) as exc:
            self._refused(exc.message if isinstance(exc, TicketError) else str(exc))
            return
        self.started.append(parent.id)
        self._answer(f"Started: {self.engine.describe(parent)} ({parent.id})", "success")

    def _answer(self, text: str, level: str) -> None:
        self.error.setStyleSheet(level_css(level))
        self.error.setText(text)
        self.error.setToolTip(text)

    def _refused(self, message: str, field: str = "") -> None:
        self._answer(f"Not sent: {message}", "error")
        widget = self.amount if field == "amount" else self.fields.get(field)
        if widget is not None and widget.isVisible():
            widget.setFocus(Qt.FocusReason.OtherFocusReason)
