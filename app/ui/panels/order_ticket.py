"""Order ticket in the trader's terms: pick a pair, then **Buy** or **Sell** its base, with the
live indicative price (refreshed as the book moves, with its age), what-if balances, whether a
limit fills now or rests, and pre-trade checks; Enter sends (after a confirmation unless
switched off), F2 jumps to the amount.

Choices where the issue is silent (README "Trading: the order ticket (F2)"):
- the pair follows the pair selected elsewhere (top of book, depth), keeping the side; a new
  ticket buys;
- Buy and Sell are two buttons in the bid and ask colours of the palette in force; Alt+B and
  Alt+S pick them while the focus is in the ticket (the ticket claims the keys there, so the
  RFQ ticket's Alt+B / Alt+S accepts keep working when its own fields have the focus);
- the amount is in the asset the order sells, because the service takes the size in the
  ``source`` only: a buy spends QUOTE ("Buy BTC for 10,000 USD", then ≈ the BTC it gets), a
  sell sells BASE ("Sell 2 ETH"). No conversion through an estimate, so what is sent is
  exactly what was typed;
- a limit is typed and shown as QUOTE per BASE; the wire value is in a details line;
- a limit order gets an end time by default, ``resting_hours`` (Settings) after the moment the
  trader last edited the ticket; the service cannot cancel an order, so the ticket says until
  when it rests and that it cannot be cancelled before;
- offline (every feed failing) or with the login expired, Send is disabled and says why: a
  send that probably cannot reach the service is not offered;
- the clientOrderId shown is the one the next send carries; it changes only after a settled
  answer or an edit, so sending an unsettled ticket again cannot place a second order.

Click-to-trade (issue 13, README "Click-to-trade"): a click on a bid or an ask (watchlist,
ladder) arrives as a ``TradeRequest`` (``app/ui/click_trade.py``) and ``prefill``s a limit at
that price; a double-click, Hit bid (Ctrl+Shift+S) and Lift offer (Ctrl+Shift+B) then
``send_now`` — the same checks and confirmation as Enter. A click keeps an amount already
typed in the asset the order sells, else takes that asset's default size: the first of its
size presets (Settings), which are also quick buttons under the amount; the keys always use
the default size.

Messages are coloured by level (error, warning, success) from the palette in force; a theme
switch restyles every message on screen.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import pairwise

from PySide6.QtCore import QDateTime, QEvent, QObject, Qt, QTimeZone
from PySide6.QtGui import QAction, QFont, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDockWidget,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.domain import utc_now
from app.domain.display import digits_of, format_number
from app.domain.money import AssetPair
from app.domain.pair_terms import PairSide, Side
from app.domain.records import TopOfBook
from app.services.estimates import EstimateResult
from app.services.health import Health, HealthState
from app.services.log_events import LogLevel
from app.services.order_desk import AlreadySending, OrderDesk, SubmitResult
from app.services.order_words import action
from app.services.pretrade import Check, checks, fills_now, what_if
from app.services.session import Balances
from app.services.ticket import OrderType, TicketError, TicketForm, TicketInput
from app.ui.bridge import QtTopic
from app.ui.click_trade import TradeRequest
from app.ui.fonts import number_font
from app.ui.level_text import show_level, wrapped_label
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.order_confirm import confirm_order, update_confirmation
from app.ui.palette import TradePalette, current_palette, follow_palette, level_colour, level_css
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket_view import (
    STALE_AFTER,
    age_text,
    checks_text,
    estimate_text,
    limit_fill_text,
    rest_text,
    what_if_rows,
    what_if_verdict,
    wire_text,
)
from app.ui.preferences import Preferences
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer

OUTCOME_LEVEL = {
    "filled": "success",
    "submitted": "success",
    "rejected": "error",
    "failed": "error",
    "unknown": "warning",
}
#: Alt+letter picks a side while the focus is in the ticket.
SIDE_KEYS: dict[int, Side] = {Qt.Key.Key_B: "buy", Qt.Key.Key_S: "sell"}
#: Hit the bid / lift the offer of the ticket's pair (Trade menu; no clash with F1-F3,
#: Ctrl+1..8, Ctrl+L, Ctrl+, or the tickets' Alt+B / Alt+S).
HIT_BID_KEY = "Ctrl+Shift+S"
LIFT_OFFER_KEY = "Ctrl+Shift+B"
#: Health in which Send is not offered.
CANNOT_SEND = {Health.OFFLINE: "Offline", Health.AUTH_EXPIRED: "Login expired"}

#: The widest unit text the ticket shows beside the amount (the limit's is shorter).
UNIT_SAMPLE = "USD to spend"


def _styled(label: QLabel, level: str, text: str) -> None:
    """``text`` in the colour of ``level``; the level stays on the label (property "level")
    so a theme switch can restyle it."""
    show_level(label, text, level)


def _check_line(level: str, text: str) -> str:
    """One pre-trade check as rich text: ✗ for a block, ⚠ for a warning, in its colour."""
    colour = level_colour(level)
    line = f"{'✗' if level == 'error' else '⚠'} {html.escape(text, quote=False)}"
    return line if colour is None else f"<span style='color:{colour.name()}'>{line}</span>"


def side_css(side: Side, palette: TradePalette) -> str:
    """A side button: its colour as text, filled with it when picked."""
    colour = (palette.bid if side == "buy" else palette.ask).name()
    return (
        f"QPushButton {{ color: {colour}; font-weight: bold; }}"
        f"QPushButton:checked {{ background-color: {colour}; "
        f"color: {palette.background.name()}; }}"
    )


class OrderTicketPanel(QWidget):
    def __init__(
        self, context: PanelContext, desk: OrderDesk, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("orderTicketPanel")
        self._context = context
        self._bridge = context.bridge
        self._desk = desk
        self._estimates = context.bridge.estimate_feed()
        self.tasks = TaskOwner(self, self._task_failed)
        # The market as the signals that woke this panel carried it: predictions never read a
        # service's cache, so which subscriber heard a tick first cannot matter.
        self._balances: Balances | None = context.bridge.balances.latest
        self._tops: dict[str, TopOfBook] = dict(context.bridge.topOfBook.latest or {})
        self._health: HealthState = context.bridge.health_now
        self._desk_sending = desk.sending
        self._side: Side = "buy"
        self._ticket: TicketInput | None = None
        self._estimate: EstimateResult | None = None
        self._in_flight = False
        self._confirming = False
        self._confirm_ticket: TicketInput | None = None
        self._last_sent: str | None = None  # clientOrderId of the last send (its outcome shown)
        prefs = Preferences.load(context.settings)
        self._resting_hours = float(prefs.resting_hours)
        self._presets: dict[str, tuple[Decimal, ...]] = prefs.presets()
        self._presets_for: str | None = None  # the asset the preset buttons are for
        self._end_touched = False  # the trader set the end time: no default replaces it
        #: An estimate older than this (seconds) is not presented as the current price.
        self.stale_after = STALE_AFTER
        self._build()
        self.estimates: QtTopic[EstimateResult] = QtTopic(self._estimates.results, self)
        self.results: QtTopic[SubmitResult] = QtTopic(desk.results, self)
        self.sending: QtTopic[bool] = QtTopic(desk.sending_changed, self)
        self.estimates.connect(self._on_estimate)
        self.results.connect(self._on_result)
        self.sending.connect(self._on_sending)
        feed = self._estimates
        self.destroyed.connect(lambda *_: feed.cancel())  # a closure: the panel is going
        context.bridge.selectionChanged.connect(self.preset_pair)
        # bound methods, not lambdas: Qt drops them with the panel
        context.bridge.balances.connect(self._on_balances)
        context.bridge.topOfBook.connect(self._on_top_of_book)
        context.bridge.health.connect(self._on_health)
        follow_palette(self.set_palette)
        self._age_timer = make_timer(self, 1000, self._show_estimate)
        self._fill_pairs()
        if self._bridge.selected_pair:
            self.preset_pair(self._bridge.selected_pair)
        self._default_end()
        self._update()
        context.trade.requested.connect(self._on_trade_request)
        self.hit_bid_action = self._trade_action("&Hit bid", HIT_BID_KEY, "sell")
        self.lift_offer_action = self._trade_action("&Lift offer", LIFT_OFFER_KEY, "buy")

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        mono = number_font()
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
        sides = QHBoxLayout()
        sides.addWidget(self.pair_box, 1)
        sides.addWidget(self.buy_button)
        sides.addWidget(self.sell_button)

        self.size_edit, self.size_unit = self._number_field("orderSize", "amount", mono)
        size_row = QHBoxLayout()
        size_row.addWidget(self.size_edit, 1)
        size_row.addWidget(self.size_unit)
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
        metrics = self.fontMetrics()
        self.size_unit.setMinimumWidth(metrics.horizontalAdvance(UNIT_SAMPLE))
        limit_row = QHBoxLayout()
        limit_row.addWidget(self.limit_edit, 1)
        limit_row.addWidget(self.limit_unit)
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
        end_row = QHBoxLayout()
        end_row.addWidget(self.end_check)
        end_row.addWidget(self.end_edit, 1)

        self.client_id_label = QLabel(self)
        self.client_id_label.setObjectName("orderClientId")
        self.client_id_label.setFont(mono)
        self.client_id_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        form = self._form = QFormLayout()
        form.addRow("Pair", sides)
        form.addRow(self._buddy("Amount (&z)", self.size_edit), size_row)
        form.addRow("", self.preset_box)
        form.addRow("T&ype", self.type_box)
        form.addRow(self._buddy("Li&mit", self.limit_edit), limit_row)
        form.addRow("", self.wire_label)
        form.addRow(self._buddy("E&nd", self.end_check), end_row)
        form.addRow("Client id", self.client_id_label)

        self.input_error = wrapped_label(self, "orderInputError")
        self.estimate_label = wrapped_label(self, "orderEstimate")
        self.rest_label = wrapped_label(self, "orderRests")
        self.what_if_grid = QGridLayout()
        self.what_if_cells: list[list[QLabel]] = []
        self.what_if_headers: list[QLabel] = []
        for column, title in enumerate(("After", "free", "credit")):
            header = QLabel(f"<b>{title}</b>", self)
            self.what_if_grid.addWidget(header, 0, column)
            self.what_if_headers.append(header)
        for row in (1, 2):
            cells = [QLabel(self) for _ in range(3)]
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

        # The ticket scrolls inside its dock rather than squeezing wrapped lines into each other
        # when the dock is shorter than the ticket (a resting limit says the most).
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
        outer.addWidget(scroll)
        layout = self._content_layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)  # a dock is narrow: no width wasted on margins
        layout.addLayout(form)
        layout.addWidget(self.input_error)
        layout.addWidget(self.estimate_label)
        layout.addWidget(self.rest_label)
        layout.addLayout(self.what_if_grid)
        layout.addWidget(self.verdict_label)
        layout.addWidget(self.checks_label)
        layout.addWidget(self.override_check)
        layout.addWidget(self.send_button)
        layout.addWidget(self.outcome_label)
        layout.addStretch(1)

        self.pair_box.currentTextChanged.connect(lambda _: self._edited())
        self.buy_button.clicked.connect(lambda: self.set_side("buy"))
        self.sell_button.clicked.connect(lambda: self.set_side("sell"))
        self.size_edit.textChanged.connect(lambda _: self._edited())
        self.limit_edit.textChanged.connect(lambda _: self._edited())
        self.type_box.currentIndexChanged.connect(lambda _: self._edited())
        self.end_check.toggled.connect(lambda _: self._update())
        self.end_edit.dateTimeChanged.connect(lambda _: self._end_edited())
        self.override_check.toggled.connect(lambda _: self._refresh_predictions())
        self.send_button.clicked.connect(self.submit)
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
        for child in self.findChildren(QWidget):
            child.installEventFilter(self)
        self.set_palette(current_palette())
        self._fit_width()

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

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter anywhere in the ticket sends it (line edits pass Return on to their parent)."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.submit()
            return
        super().keyPressEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Alt+B / Alt+S anywhere in the ticket pick the side. The ticket claims the keys
        (ShortcutOverride) so no other panel's Alt+B / Alt+S fires while the focus is here.
        A relayout of the content re-fits the ticket's width."""
        if watched is self._content and event.type() == QEvent.Type.LayoutRequest:
            self._fit_width()
        if event.type() in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(
            event, QKeyEvent
        ):
            side = SIDE_KEYS.get(event.key())
            if side is not None and event.modifiers() == Qt.KeyboardModifier.AltModifier:
                event.accept()
                if event.type() == QEvent.Type.KeyPress:
                    self.set_side(side)
                return True
        return super().eventFilter(watched, event)

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the side buttons and every message label restyled for its level,
        the checks redrawn."""
        self.buy_button.setStyleSheet(side_css("buy", palette))
        self.sell_button.setStyleSheet(side_css("sell", palette))
        for label in self.findChildren(QLabel):
            level = label.property("level")
            if isinstance(level, str):
                label.setStyleSheet(level_css(level, palette))
        if hasattr(self, "estimates"):
            self._refresh_predictions()

    # -- pair and side -------------------------------------------------------------------------

    def _fill_pairs(self) -> None:
        names = self._bridge.available_pairs or list(self._bridge.pair_info)
        pairs = sorted(n for n in names if n.count("/") == 1)
        current = self.pair_box.currentText()
        self.pair_box.blockSignals(True)
        self.pair_box.clear()
        self.pair_box.addItems(pairs)
        if current in pairs:
            self.pair_box.setCurrentText(current)
        self.pair_box.blockSignals(False)

    @property
    def side(self) -> Side:
        return self._side

    @property
    def pair_side(self) -> PairSide | None:
        """The pair and side on screen (None before the pairs are known)."""
        text = self.pair_box.currentText()
        if text.count("/") != 1:
            return None
        return PairSide(AssetPair.parse(text), self._side)

    def preset_pair(self, pair: str) -> None:
        """Follow the pair selected elsewhere, keeping the side."""
        if pair.count("/") != 1:
            return
        if self.pair_box.findText(pair) < 0:
            self._fill_pairs()  # quietly: the pair box may land on ``pair`` without a signal
        if self.pair_box.findText(pair) >= 0:
            self.pair_box.setCurrentText(pair)
            self._update()

    def set_side(self, side: Side) -> None:
        """Buy or Sell the pair's base (the buttons, Alt+B / Alt+S)."""
        (self.buy_button if side == "buy" else self.sell_button).setChecked(True)
        if side != self._side:
            self._side = side
            self._edited()

    def focus_entry(self) -> None:
        """F2 (Trade menu): the cursor in the amount, selected."""
        self.size_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.size_edit.selectAll()

    # -- click-to-trade and size presets -------------------------------------------------------

    def default_size(self, asset: str) -> Decimal | None:
        """The default amount of ``asset`` (the first of its size presets), None without one."""
        presets = self._presets.get(asset)
        return presets[0] if presets else None

    def _show_presets(self, asset: str | None) -> None:
        """One quick button per size preset of the asset the order sells."""
        if asset == self._presets_for:
            return
        self._presets_for = asset
        for button in self.preset_buttons:
            self.preset_row.removeWidget(button)
            button.deleteLater()
        self.preset_buttons = []
        for amount in self._presets.get(asset or "", ()):
            text = format_number(amount, digits_of(amount))  # as typed: 0.01, 10,000
            button = QPushButton(text, self.preset_box)
            button.setObjectName("orderPreset")
            button.setAutoDefault(False)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the focus stays where Enter sends
            button.setToolTip(f"Amount {text} {asset}")
            button.clicked.connect(lambda _=False, value=amount: self._use_preset(value))
            button.installEventFilter(self)  # Alt+B / Alt+S as everywhere in the ticket
            self.preset_row.insertWidget(self.preset_row.count() - 1, button)
            self.preset_buttons.append(button)
        self._form.setRowVisible(self.preset_box, bool(self.preset_buttons))

    def _use_preset(self, amount: Decimal) -> None:
        self.size_edit.setText(format(amount, "f"))

    def prefill(
        self, pair: str, side: Side, limit_price: Decimal, amount: Decimal | None = None
    ) -> bool:
        """A limit order to ``side`` ``pair``'s base at ``limit_price`` (QUOTE per BASE), for
        ``amount`` of the asset it sells; without one, the amount already in the ticket when
        it is of that asset (typed or a preset button: the trader sets the size, then clicks
        prices), else that asset's default size. An amount of another asset is never reused
        (10,000 USD to spend must not become 10,000 BTC to sell): with no default it is
        cleared. False (nothing changed) while a confirmation is up or the pair is unknown."""
        if self._confirming or pair.count("/") != 1:
            return False
        if self.pair_box.findText(pair) < 0:
            self._fill_pairs()
        if self.pair_box.findText(pair) < 0:
            return False
        before = self.pair_side
        target = PairSide(AssetPair.parse(pair), side)
        same_asset = before is not None and before.source == target.source
        if amount is None and not (same_asset and self.size_edit.text().strip()):
            amount = self.default_size(target.source)
        self.pair_box.setCurrentText(pair)
        self.set_side(side)
        self.type_box.setCurrentIndex(self.type_box.findData("limit"))
        self.limit_edit.setText(format(limit_price, "f"))
        if amount is not None:
            self.size_edit.setText(format(amount, "f"))
        elif not same_asset:
            self.size_edit.clear()
        self._raise_dock()
        precision = self._context.precision
        price = f"{precision.price_text(limit_price, pair)} {target.pair.quote}"
        text = f"From the book: {target.verb.lower()} {target.pair.base} at {price}"
        if not self.size_edit.text().strip():
            text += f"; no size preset for {target.source} (Settings): type the amount"
        _styled(self.outcome_label, "info", text)
        return True

    def send_now(self) -> None:
        """Send what the ticket holds, exactly as Enter does: checks, confirmation (if on)."""
        self.submit()

    def _on_trade_request(self, request: TradeRequest) -> None:
        """A click on a price (or a double-click, to send) in a panel sharing the context."""
        filled = self.prefill(request.pair, request.side, request.price, request.amount)
        if filled and request.send:
            if not self.size_edit.text().strip():
                self.size_edit.setFocus()  # nothing to send yet: the amount is missing
                return
            self.send_now()

    def _trade_action(self, text: str, keys: str, side: Side) -> QAction:
        action = QAction(text, self)
        action.setObjectName("hitBid" if side == "sell" else "liftOffer")
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        action.setToolTip(
            f"{'Sell at the best bid' if side == 'sell' else 'Buy at the best ask'} of the "
            "ticket's pair, default size, after the checks and confirmation"
        )
        action.triggered.connect(lambda _=False: self.hit_or_lift(side))
        self.addAction(action)  # the keys work while the ticket is shown, the menu or not
        return action

    def trade_actions(self) -> list[QAction]:
        """For the main window's Trade menu."""
        return [self.hit_bid_action, self.lift_offer_action]

    def hit_or_lift(self, side: Side) -> None:
        """Hit the bid (sell) or lift the offer (buy) of the ticket's pair at the touch of the
        last top of book, with the default size, through the checks and confirmation. Without
        a default size for the asset sold the order is prefilled and nothing is sent."""
        pair_side = self.pair_side
        if pair_side is None:
            _styled(self.outcome_label, "error", "Choose a pair to trade first.")
            return
        pair = str(pair_side.pair)
        top = self._tops.get(pair)
        price = None if top is None else (top.bid if side == "sell" else top.ask)
        if price is None:
            what = "bid" if side == "sell" else "ask"
            _styled(self.outcome_label, "error", f"No {what} for {pair} yet: nothing sent.")
            return
        default = self.default_size(PairSide(pair_side.pair, side).source)
        if default is None:
            source = PairSide(pair_side.pair, side).source
            if self.prefill(pair, side, price):
                self.size_edit.clear()
                self.size_edit.setFocus()
                _styled(
                    self.outcome_label,
                    "warning",
                    f"No default size for {source} (Settings › Size presets): nothing sent; "
                    "type the amount, then Enter sends.",
                )
            return
        self._on_trade_request(TradeRequest(pair, side, price, send=True, amount=default))

    def _raise_dock(self) -> None:
        """Bring the ticket's dock to the front (it may be tabbed behind the RFQ ticket)."""
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()

    # -- end time ------------------------------------------------------------------------------

    def _default_end(self) -> None:
        """The end time from the setting, counted from now (the moment the ticket is used),
        to the next whole minute; kept once the trader sets one."""
        if self._end_touched:
            return
        end = utc_now() + timedelta(hours=self._resting_hours)
        end = end.replace(second=0, microsecond=0) + timedelta(minutes=1)
        self.end_edit.blockSignals(True)
        self.end_edit.setDateTime(
            QDateTime.fromSecsSinceEpoch(int(end.timestamp()), QTimeZone.utc())
        )
        self.end_edit.blockSignals(False)

    def _end_edited(self) -> None:
        self._end_touched = True
        self._update()

    def _edited(self) -> None:
        """The trader changed the ticket: a fresh default end time, then re-read it."""
        self._default_end()
        self._update()

    # -- the ticket as typed ------------------------------------------------------------------

    def form(self) -> TicketForm:
        order_type: OrderType = "limit" if self.type_box.currentData() == "limit" else "market"
        end_at: datetime | None = None
        if order_type == "limit" and self.end_check.isChecked():
            seconds = self.end_edit.dateTime().toSecsSinceEpoch()
            end_at = datetime.fromtimestamp(seconds, UTC)
        pair_side = self.pair_side
        if pair_side is None:
            return TicketForm("", "", self.size_edit.text(), order_type, self.limit_edit.text())
        return TicketForm(
            pair_side.source,
            pair_side.destination,
            self.size_edit.text(),
            order_type,
            self.limit_edit.text(),
            end_at,
            pair_side.pair.base,
        )

    def _update(self) -> None:
        """Inputs changed: enable what applies, read the ticket, ask for a fresh estimate."""
        limit = self.type_box.currentData() == "limit"
        self.limit_edit.setEnabled(limit)
        self.end_check.setEnabled(limit)
        self.end_edit.setEnabled(limit and self.end_check.isChecked())
        pair_side = self.pair_side
        self._show_presets(None if pair_side is None else pair_side.source)
        if pair_side is not None:
            spend = "to spend" if pair_side.side == "buy" else "to sell"
            self.size_unit.setText(f"{pair_side.source} {spend}")
            self.limit_unit.setText(f"{pair_side.pair.quote} per {pair_side.pair.base}")
        try:
            ticket = self.form().build()
        except TicketError as exc:
            self._ticket = None
            blank = not self.size_edit.text().strip()  # nothing typed yet: nothing to fault
            _styled(self.input_error, "error", "" if blank else exc.message)
            self.wire_label.clear()
            self._form.setRowVisible(self.wire_label, False)
            self.estimate_label.clear()
            self.rest_label.clear()
            self._age_timer.stop()
            self.client_id_label.setText("—")
            self._refresh_predictions()
            return
        _styled(self.input_error, "info", "")
        wire = wire_text(ticket, self._bridge.pair_info)
        self.wire_label.setText(f"details: {wire}" if wire else "")
        self._form.setRowVisible(self.wire_label, bool(wire))
        if ticket != self._ticket:
            self._ticket = ticket
            self.estimate_label.setText("≈ …")
            self._estimates.request(ticket)
        self.client_id_label.setText(self._desk.client_order_id_for(ticket))
        self._refresh_predictions()

    def _on_estimate(self, result: EstimateResult) -> None:
        if self._ticket is None or result.ticket != self._ticket:
            return  # an answer for a ticket the trader has since changed
        self._estimate = result
        self._age_timer.start()
        self._show_estimate()
        self._refresh_predictions()
        if self._confirming and self._confirm_ticket == result.ticket:
            self._reconfirm()

    def _current_estimate(self) -> EstimateResult | None:
        """The latest estimate of the ticket on screen, however old."""
        estimate = self._estimate
        if estimate is None or self._ticket is None or estimate.ticket != self._ticket:
            return None
        return estimate

    def _show_estimate(self) -> None:
        """The estimate with its age; past ``STALE_AFTER`` it says it is stale. A limit order
        that rests does not fill at the market's price: it shows what it gets at its limit."""
        ticket = self._ticket
        if ticket is not None and self._rests(ticket) is False:
            text = limit_fill_text(ticket, self._bridge.pair_info, self._context.precision)
            _styled(self.estimate_label, "info", text)
            return
        estimate = self._current_estimate()
        if estimate is None:
            self._age_timer.stop()
            return
        age = estimate.age()
        text = estimate_text(estimate, self._bridge.pair_info, self._context.precision, age)
        level = "info" if estimate.ok else "warning"
        if estimate.ok and age > self.stale_after:
            level = "warning"
            text += " (stale: waiting for a fresh price)"
        _styled(self.estimate_label, level, text)

    def _on_balances(self, balances: Balances) -> None:
        self._balances = balances
        self._refresh_predictions()

    def _on_top_of_book(self, books: dict[str, TopOfBook]) -> None:
        pair_side = self.pair_side
        moved = pair_side is not None and books.get(str(pair_side.pair)) != self._tops.get(
            str(pair_side.pair)
        )
        self._tops = books
        if moved and self._ticket is not None:
            self._estimates.refresh(self._ticket)  # the book moved: a fresh indicative price
        self._refresh_predictions()

    def _on_health(self, state: HealthState) -> None:
        self._health = state
        self._sync_send()

    def _on_sending(self, sending: bool) -> None:
        self._desk_sending = sending
        self._sync_send()

    def _checks(self, ticket: TicketInput, override: bool) -> list[Check]:
        """The pre-trade checks on the market this panel was last told about."""
        return checks(
            ticket,
            self._balances,
            self._tops,
            self._desk.limits,
            override=override,
            precision=self._context.precision,
        )

    async def stop_feed(self) -> None:
        """The estimate feed stops before the connection closes (no request cut off at quit)."""
        await self._estimates.close()

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings > trading: the pre-trade limits, the resting time and the size presets,
        at once."""
        self._desk.limits = prefs.check_limits()
        self._resting_hours = float(prefs.resting_hours)
        self._presets = prefs.presets()
        self._presets_for = None  # rebuild the buttons
        self._default_end()
        self._update()

    def _rests(self, ticket: TicketInput) -> bool | None:
        return fills_now(ticket, self._tops) if ticket.order_type == "limit" else None

    def _refresh_predictions(self) -> None:
        ticket = self._ticket
        estimate = self._current_estimate()
        fills = None if ticket is None else self._rests(ticket)
        rests = fills is False
        balances = self._balances
        what = None
        if ticket is not None and balances is not None:
            what = what_if(
                ticket,
                balances,
                None if estimate is None else estimate.estimate,
                rests=rests,
            )
        precision = self._context.precision
        for cells, row in zip(
            self.what_if_cells,
            what_if_rows(what, precision) if what is not None else [],
            strict=False,
        ):
            for cell, text in zip(cells, row, strict=True):
                cell.setText(text)
        for header in self.what_if_headers:
            header.setVisible(what is not None)
        if what is None:
            for cells in self.what_if_cells:
                for cell in cells:
                    cell.clear()
            self.verdict_label.clear()
        else:
            _styled(self.verdict_label, *what_if_verdict(what, precision))
        if ticket is None:
            self.rest_label.clear()
        else:
            text = rest_text(ticket, fills, self._bridge.pair_info, self._tops, precision)
            _styled(self.rest_label, "warning" if rests else "info", text)
        found = self._checks(ticket, self.override_check.isChecked()) if ticket is not None else []
        blocked = any(check.code == "fat_finger" for check in found)
        self.override_check.setVisible(blocked)
        if not blocked:
            self.override_check.setChecked(False)
        lines = checks_text(found)
        self.checks_label.setText("<br>".join(_check_line(level, text) for level, text in lines))
        if ticket is not None and fills is False:
            self._show_estimate()
        self._sync_send()

    def _cannot_send(self) -> str | None:
        """Why no order can be sent now (offline, login expired), or None."""
        return CANNOT_SEND.get(self._health.health)

    def _sync_send(self) -> None:
        busy = self._in_flight or self._confirming or self._desk_sending
        blocked = self._cannot_send()
        self.send_button.setEnabled(not busy and blocked is None)
        if busy and not self._confirming:
            text = "Sending…"
        elif blocked is not None:
            text = f"{blocked} — cannot send"
        elif self._ticket is not None:
            text = action(self._ticket, self._bridge.pair_info, self._context.precision)
        else:
            pair_side = self.pair_side
            text = "Send" if pair_side is None else f"{pair_side.verb} {pair_side.pair.base}"
        self.send_button.setText(text)

    # -- sending ------------------------------------------------------------------------------

    def submit(self) -> None:
        """Enter or the button: check, confirm (setting), send. Does nothing while an order
        is in flight or being confirmed; offline it says why nothing is sent."""
        if self._in_flight or self._confirming or self._desk_sending:
            return
        blocked = self._cannot_send()
        if blocked is not None:
            _styled(
                self.outcome_label,
                "error",
                f"Not sent: {blocked.lower()} ({self._health.reason}).",
            )
            return
        try:
            ticket = self.form().build()
        except TicketError as exc:
            self._show_input_error(exc)
            return
        override = self.override_check.isChecked()
        found = self._checks(ticket, override)
        blocks = [check.message for check in found if check.severity == "block"]
        if blocks:
            _styled(self.input_error, "error", "; ".join(blocks))
            self.override_check.setVisible(True)
            self.override_check.setFocus()
            return
        if self._confirm_wanted():
            self._confirming = True
            self._confirm_ticket = ticket
            self._sync_send()
            summary, details, warnings = self._confirmation(ticket, found)
            self.confirmation = confirm_order(
                self,
                summary,
                details,
                warnings,
                lambda send: self._confirmed(send, ticket, override),
            )
            return
        self._send(ticket, override)

    def _confirmation(
        self, ticket: TicketInput, found: list[Check]
    ) -> tuple[str, list[str], list[str]]:
        """What the confirmation says: the action, the latest estimate (a stale one is not
        shown as current: a fresh one is asked for and replaces it when it comes), whether a
        limit rests and until when, the predicted funds, the wire details, the client id."""
        precision = self._context.precision
        pairs = self._bridge.pair_info
        details: list[str] = []
        estimate = self._current_estimate()
        fills = self._rests(ticket)
        if fills is not False:  # a resting order does not fill at the market's price
            if estimate is not None and estimate.ok and estimate.age() <= self.stale_after:
                details.append(estimate_text(estimate, pairs, precision, estimate.age()))
            elif estimate is not None and estimate.ok:
                details.append(
                    f"The indicative price is {age_text(estimate.age())} — stale; "
                    "asking for a fresh one…"
                )
                self._estimates.refresh(ticket)
            else:
                details.append("No indicative price yet; asking for one…")
                self._estimates.refresh(ticket)
        details.append(rest_text(ticket, fills, pairs, self._tops, precision))
        if self._balances is not None:
            rests = fills is False
            what = what_if(
                ticket,
                self._balances,
                None if estimate is None else estimate.estimate,
                rests=rests,
            )
            level, verdict = what_if_verdict(what, precision)
            if level != "info":
                details.append(verdict)
        wire = wire_text(ticket, pairs)
        if wire:
            details.append(f"details: {wire}")
        details.append(f"client id {self._desk.client_order_id_for(ticket)}")
        summary = action(ticket, pairs, precision)
        return summary, details, [check.message for check in found]

    def _reconfirm(self) -> None:
        """A fresher estimate while the confirmation is up: it shows the new one."""
        ticket = self._confirm_ticket
        if ticket is None:
            return
        found = self._checks(ticket, self.override_check.isChecked())
        update_confirmation(self.confirmation, *self._confirmation(ticket, found))

    def _confirm_wanted(self) -> bool:
        value = self._context.settings.value(CONFIRM_KEY, True)
        return value not in (False, "false", "0", 0)

    def _confirmed(self, send: bool, ticket: TicketInput, override: bool) -> None:
        self._confirming = False
        self._confirm_ticket = None
        if send:
            if self._cannot_send() is not None:
                self.submit()  # went offline while confirming: say so, send nothing
                return
            self._send(ticket, override)
        else:
            self._sync_send()
            _styled(self.outcome_label, "info", "Not sent.")
            self.size_edit.setFocus()

    def _send(self, ticket: TicketInput, override: bool) -> None:
        self._in_flight = True
        self._last_sent = self._desk.client_order_id_for(ticket)
        self._sync_send()
        _styled(self.outcome_label, "info", f"Sending: {self._desk.describe(ticket)} …")
        self.tasks.spawn(self._submit(ticket, override), "sending the order")

    async def _submit(self, ticket: TicketInput, override: bool) -> None:
        try:
            result = await self._desk.submit(ticket, override=override)
        except AlreadySending:
            return  # the other send's answer is what the trader waits for
        except TicketError as exc:
            self._show_input_error(exc)
            _styled(self.outcome_label, "error", "Not sent.")
            return
        finally:
            self._in_flight = False
            self._sync_send()
        self._show_result(result)
        self._update()  # a settled answer gives the next order a new client id

    def _on_result(self, result: SubmitResult) -> None:
        """A later result for the last send (an unknown outcome settled by lookup)."""
        if result.client_order_id == self._last_sent and not self._in_flight:
            self._show_result(result)
            self._update()

    def _show_result(self, result: SubmitResult) -> None:
        level = OUTCOME_LEVEL.get(result.status, "warning")
        if result.status in ("filled", "submitted"):
            text = result.message  # "Bought … · order …" / "Resting: … · order …"
        elif result.status == "unknown":
            text = f"Outcome unknown: {result.message}. Looking the order up…"
        elif result.status == "failed":
            text = f"Failed: {result.message}"
        else:
            text = f"Refused by the service: {result.message}"
        _styled(self.outcome_label, level, text)

    def _show_input_error(self, exc: TicketError) -> None:
        _styled(self.input_error, "error", exc.message)
        target = {
            "size": self.size_edit,
            "limit": self.limit_edit,
            "end_at": self.end_edit,
            "destination": self.pair_box,
            "source": self.pair_box,
        }.get(exc.field, self.size_edit)
        target.setFocus()

    def _task_failed(self, what: str, exc: BaseException) -> None:
        self._in_flight = False
        self._sync_send()
        _styled(self.outcome_label, "error", f"{what} failed: {exc}")
        self._context.notify(LogLevel.ERROR, f"{what} failed: {exc}")
