"""The RFQ ticket: ask for a two-way quote, watch both sides count down, accept one.

Keyboard: F3 (anywhere in the application) shows and raises the ticket's dock and puts the
cursor in the size field with its text selected — through the panel's own application-wide
QShortcut, or through the main window's Trade menu entry when the panel is registered with
``shortcut="F3"`` (then the panel adds none; see ``_install_focus_shortcut``). Enter in the
size field requests; Alt+B accepts the buy side and Alt+S the sell side (button mnemonics;
pressed in a text field of the ticket while the side is closed, they say why instead of typing
the letter). The pair box starts on the terminal's selected pair and follows the selection
until the trader picks or types a pair in it; the size is in the pair's base asset unless the
unit button beside it is switched to the quote asset.

Countdown: every frame (~30 fps, ``FRAME_MS``) reads the time left from the desk's
``LiveQuote`` — a monotonic deadline already corrected for the server clock and the round trip —
and never counts timer ticks. The frame timer runs only while a side can still be accepted or
is still counting down, and stops when both sides are over (expired, accepted or refused). The
accept buttons follow ``LiveQuote.accept_allowed``; an accept in flight, or a new quote on its
way, disables both.

The desk's two topics (quotes, history) reach the widgets as ``QtTopic``s the panel owns, as the
session's reach them through the bridge; the panel takes its desk in its constructor.

The message under the quote is coloured by its level (a fill in the palette's success colour,
bold; warnings; errors) from the palette in force, and restyled on a theme switch.

Checks (``app.services.rfq_desk``: the order ticket's checks on each side's equivalent order)
run on the balances, top of book and health the bridge last handed the panel, with the limits
from Settings (``apply_preferences``). A request the size limit blocks is not sent: the message
says why and "Override the size limit for this request" appears; ticked, the request and its
quote's accepts go ahead. A quote side a check blocks has its accept disabled with the reason
under the side. Offline (every feed failing, ``Health.OFFLINE``): Request and both accepts are
disabled and say "offline"; a quote on screen is marked offline. (Disabled rather than an
"accept anyway" confirmation: a modal question under a countdown of a few seconds is a worse
choice than waiting for the connection, and an accept that cannot reach the service would only
leave an unknown outcome to settle.)

Fills read as ``Trade.sentence`` (``Filled: bought 0.10000000 BTC at 90,905.00 USD (spent
9,090.50 USD) — order …``); notices carry the trader's words only, details stay in the ticket.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.domain import Amount, AssetPair, ParseError, parse_decimal
from app.domain.display import Precision
from app.domain.records import TopOfBook
from app.services.health import HealthState
from app.services.log_events import LogLevel
from app.services.rfq_desk import (
    SIDES,
    AcceptClosed,
    AcceptResult,
    ChecksBlock,
    LiveQuote,
    Market,
    QuoteEvent,
    RfqChecks,
    RfqDesk,
    Side,
    pair_price,
    quote_checks,
    request_block_text,
    request_checks,
    side_name,
    side_terms,
    size_text,
    trade_of,
)
from app.services.session import Balances
from app.ui.bridge import QtTopic
from app.ui.palette import TradePalette, current_palette, follow_palette, level_css
from app.ui.panels.base import PanelContext
from app.ui.preferences import Preferences
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer
from app.ui.widgets.quote_history import QuoteHistoryModel, QuoteHistoryView
from app.ui.widgets.quote_side import QuoteSideBox

log = logging.getLogger("tradeterm.ui")

SETTINGS_AUTO_REQUOTE = "rfq/autoRequote"
#: One countdown frame every this many milliseconds (~30 fps).
FRAME_MS = 33
FOCUS_KEY = "F3"
#: Keys that accept a side with Alt held (the buttons' mnemonics).
ACCEPT_KEYS: dict[int, Side] = {int(Qt.Key.Key_B): "buy", int(Qt.Key.Key_S): "sell"}
#: The override control's words (the message that asks for it quotes them).
OVERRIDE_TEXT = "Override the size limit for this request"


def message_css(level: str, palette: TradePalette) -> str:
    """The ticket message's style: a fill in the success colour and bold, warnings and
    errors in theirs, anything else ordinary text."""
    if level == "fill":
        return f"{level_css('success', palette)} font-weight: bold;"
    return level_css(level, palette)


def _binds(host: QWidget, keys: QKeySequence) -> bool:
    """Whether an action or shortcut under ``host`` (or on it) already answers ``keys``."""
    actions = [*host.actions(), *host.findChildren(QAction)]
    if any(keys in action.shortcuts() for action in actions):
        return True
    return any(shortcut.key() == keys for shortcut in host.findChildren(QShortcut))


def describe(exc: BaseException) -> str:
    """One line for the trader: the client's errors already read well (``HTTP 400: ...``)."""
    return str(exc).strip() or type(exc).__name__


def fill_text(live: LiveQuote, result: AcceptResult, precision: Precision) -> str:
    """The accept's result as a fill: ``Trade.sentence`` after "Filled:", the order and the
    milliseconds that were left."""
    sentence = trade_of(live, result.side, result.order).sentence(precision)
    order_id = result.order.order_id if result.order is not None else live.order_id
    return (
        f"Filled: {sentence[:1].lower()}{sentence[1:]} — order {order_id} "
        f"({result.ms_left:,} ms left)"
    )


def unknown_text(live: LiveQuote, side: Side) -> str:
    """An accept whose answer was lost, in the trader's words (no wire detail)."""
    return (
        f"{side_name(live.pair, side)} on quote {live.order_id[:8]}: the answer was lost and "
        "the order was not found yet, so it is not known whether it filled (still being looked "
        "up). Check the orders before trading again."
    )


def settled_text(live: LiveQuote, side: Side) -> str:
    """An unknown accept found filled by the desk's look-ups."""
    return (
        f"Filled: {side_name(live.pair, side)} on quote {live.order_id[:8]} — found on the "
        "server after its answer was lost"
    )


class RfqTicketPanel(QWidget):
    _f3: QShortcut | None = None  # set before __init__ runs: a ParentChange may come first

    def __init__(self, context: PanelContext, desk: RfqDesk, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rfqTicketPanel")
        self._context = context
        self._bridge = context.bridge
        self._desk = desk
        self._tasks = TaskOwner(self, lambda what, exc: self._say("error", f"{what}: {exc}"))
        self._live: LiveQuote | None = None
        self._totals: dict[Side, float] = {}
        #: What the checks read: the bridge's last snapshots and the limits from Settings.
        self._market = Market(
            balances=self._bridge.balances.latest,
            top_of_book=dict(self._bridge.topOfBook.latest or {}),
            health=self._bridge.health.latest or self._bridge.health_now,
            limits=Preferences.load(context.settings).check_limits(),
        )
        desk.limits = self._market.limits
        self._quote_checks = RfqChecks()
        self._entry_blocked = False
        self._pair_pinned = False
        self._choices_from: tuple[str, ...] | None = None
        self._request_task: asyncio.Task[None] | None = None
        self._accepting: Side | None = None
        #: The last accept's answer (for the trader's eyes in ``message``; tests read it too).
        self.last_result: AcceptResult | None = None

        self._build_form()
        self._build_quote()
        self._build_history()
        self._lay_out()

        self._frame_timer = make_timer(self, FRAME_MS, self._frame)

        self.quotes: QtTopic[LiveQuote] = QtTopic(desk.quotes, self)
        self.history: QtTopic[QuoteEvent] = QtTopic(desk.history, self)
        self.quotes.connect(self._on_quote)
        self.history.connect(self._on_history)
        self._bridge.topOfBook.connect(self._on_top_of_book)
        self._bridge.balances.connect(self._on_balances)
        self._bridge.health.connect(self._on_health)
        self._bridge.selectionChanged.connect(self._on_selection)
        self._bridge.watchlistChanged.connect(self._refresh_pairs)

        auto = bool(context.settings.value(SETTINGS_AUTO_REQUOTE, False, type=bool))
        self.auto_requote.setChecked(auto)
        self._desk.auto_requote = auto
        self.auto_requote.toggled.connect(self._auto_requote_toggled)

        self._refresh_pairs()
        self.history_model.extend(self._desk.events)
        if self._desk.current is not None:
            self._on_quote(self._desk.current)
        self._update_controls()
        self._show_offline()
        self._attach_focus_shortcut()
        follow_palette(self.set_palette)

    # -- building -------------------------------------------------------------------------------

    def _build_form(self) -> None:
        self.pair_box = QComboBox(self)
        self.pair_box.setObjectName("rfqPair")
        self.pair_box.setEditable(True)
        self.pair_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.pair_box.setAccessibleName("Pair to quote")
        self.pair_box.setToolTip("The pair to quote; follows the selected pair until you pick one")
        self.pair_box.setMinimumContentsLength(9)
        self.pair_box.activated.connect(self._pair_picked)
        line = self.pair_box.lineEdit()
        assert line is not None  # editable
        line.textEdited.connect(self._pair_picked)
        line.installEventFilter(self)
        self.pair_box.currentTextChanged.connect(self._update_unit)

        self.size_edit = QLineEdit(self)
        self.size_edit.setObjectName("rfqSize")
        self.size_edit.setPlaceholderText("Size")
        self.size_edit.setAccessibleName("Size")
        self.size_edit.setToolTip("How much to quote, in the asset on the button beside (F3)")
        self.size_edit.returnPressed.connect(self.request_quote)
        self.size_edit.textEdited.connect(self._entry_changed)
        self.size_edit.installEventFilter(self)

        self.unit_button = QToolButton(self)
        self.unit_button.setObjectName("rfqSizeUnit")
        self.unit_button.setCheckable(True)
        self.unit_button.setAccessibleName("Size asset")
        self.unit_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.unit_button.toggled.connect(self._update_unit)

        # No mnemonic: Enter in the size field requests, and Alt+R is taken elsewhere.
        self.request_button = QPushButton("Request", self)
        self.request_button.setObjectName("rfqRequest")
        self.request_button.setToolTip("Ask for a two-way quote (Enter in the size field)")
        self.request_button.clicked.connect(self.request_quote)

        self.requote_button = QPushButton("Re&quote", self)
        self.requote_button.setObjectName("rfqRequote")
        self.requote_button.setToolTip("A fresh quote for the same pair and size")
        self.requote_button.clicked.connect(self.requote)

        # Shown when the size limit stops the request (or concerns the quote on screen).
        self.override_check = QCheckBox(OVERRIDE_TEXT.replace("ride", "ri&de", 1), self)
        self.override_check.setObjectName("rfqOverride")
        self.override_check.setToolTip(
            "Ask for this quote, and accept it, although it is above the size limit in Settings"
        )
        self.override_check.setVisible(False)
        self.override_check.toggled.connect(self._override_toggled)

        self.auto_requote = QCheckBox("Auto-requote on e&xpiry", self)
        self.auto_requote.setObjectName("rfqAutoRequote")
        self.auto_requote.setToolTip(
            "Ask again when both sides expire: at most one request every 2 s, "
            "stops after 10 quotes nobody acted on"
        )

    def _build_quote(self) -> None:
        self.quote_label = QLabel("No quote yet", self)
        self.quote_label.setObjectName("rfqQuote")
        self.quote_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sides: dict[Side, QuoteSideBox] = {side: QuoteSideBox(side, self) for side in SIDES}
        for side, box in self.sides.items():
            box.accept.clicked.connect(lambda _=False, s=side: self.accept(s))
        self.message = QLabel(self)
        self.message.setObjectName("rfqMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setProperty("level", "")

    def _build_history(self) -> None:
        self.history_model = QuoteHistoryModel(self, precision=self._context.precision)
        self.history_view = QuoteHistoryView(self.history_model, self)
        self.history_view.setObjectName("rfqHistory")

    def _lay_out(self) -> None:
        form = QHBoxLayout()
        pair_label = QLabel("&Pair", self)
        pair_label.setBuddy(self.pair_box)
        size_label = QLabel("S&ize", self)  # Alt+Z is the order ticket's
        size_label.setBuddy(self.size_edit)
        form.addWidget(pair_label)
        form.addWidget(self.pair_box)
        form.addWidget(size_label)
        form.addWidget(self.size_edit, 1)
        form.addWidget(self.unit_button)
        form.addWidget(self.request_button)

        header = QHBoxLayout()
        header.addWidget(self.quote_label, 1)
        header.addWidget(self.requote_button)
        header.addWidget(self.auto_requote)

        quote = QGridLayout()
        quote.addWidget(self.sides["sell"], 0, 0)  # sell left, buy right, as FX tiles do
        quote.addWidget(self.sides["buy"], 0, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(form)
        layout.addWidget(self.override_check)
        layout.addLayout(header)
        layout.addLayout(quote)
        layout.addWidget(self.message)
        history = QLabel("Quotes this session", self)
        history.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        layout.addWidget(history)
        layout.addWidget(self.history_view, 1)

        order = [
            self.pair_box,
            self.size_edit,
            self.unit_button,
            self.request_button,
            self.override_check,
            self.sides["sell"].accept,
            self.sides["buy"].accept,
            self.requote_button,
            self.auto_requote,
            self.history_view,
        ]
        for first, second in itertools.pairwise(order):
            QWidget.setTabOrder(first, second)

    # -- F3 -------------------------------------------------------------------------------------

    def _attach_focus_shortcut(self) -> None:
        """Look for F3's owner once the docking in progress is done (next loop turn)."""
        QTimer.singleShot(0, self, self._install_focus_shortcut)

    def _install_focus_shortcut(self) -> None:
        """F3 belongs to the top-level window holding the panel, not to the panel: a widget's
        shortcuts stop working while it is hidden, and F3 must bring a closed dock back. If the
        window already binds F3 (the main window's Trade menu entry, which calls
        ``focus_entry``), the panel adds none: two bindings of one key would cancel each other
        out as ambiguous."""
        host: QWidget = self
        while (parent := host.parentWidget()) is not None:
            host = parent
        mine = self._f3 if self._f3 is not None and shiboken6.isValid(self._f3) else None
        if mine is not None and mine.parent() is host:
            return
        if mine is not None:
            mine.deleteLater()
        self._f3 = None
        if _binds(host, QKeySequence(FOCUS_KEY)):
            return
        self._f3 = QShortcut(QKeySequence(FOCUS_KEY), host)
        self._f3.setObjectName("rfqFocusShortcut")
        self._f3.setContext(Qt.ShortcutContext.ApplicationShortcut)
        self._f3.activated.connect(self.focus_ticket)
        if host is not self:
            self.destroyed.connect(self._f3.deleteLater)

    @property
    def focus_shortcut(self) -> QShortcut | None:
        """The panel's own F3 binding; None when the window binds F3 itself."""
        return self._f3 if self._f3 is not None and shiboken6.isValid(self._f3) else None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ParentChange:
            self._attach_focus_shortcut()
        return super().event(event)

    def focus_ticket(self) -> None:
        """F3: show and raise the ticket (its dock when docked), then select the size."""
        dock = self.parentWidget()
        if isinstance(dock, QDockWidget):
            dock.show()
            dock.raise_()
            if dock.isFloating():
                dock.activateWindow()
        else:
            self.show()
            self.raise_()
            if self.isWindow():
                self.activateWindow()
        self.focus_entry()

    def focus_entry(self) -> None:
        """The cursor in the size field with its text selected (MainWindow.go_to calls this
        after showing the dock)."""
        self.size_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.size_edit.selectAll()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Alt+B / Alt+S in a text field while the button is disabled: say why instead of
        typing the letter (an enabled button's mnemonic takes the key before this)."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            side = ACCEPT_KEYS.get(event.key())
            if side is not None and event.modifiers() == Qt.KeyboardModifier.AltModifier:
                self.accept(side)
                return True
        return super().eventFilter(watched, event)

    # -- pair and size --------------------------------------------------------------------------

    def _refresh_pairs(self, *_: object) -> None:
        available = tuple(self._bridge.available_pairs)
        if available == self._choices_from:
            return
        self._choices_from = available
        current = self.pair_box.currentText()
        blocked = self.pair_box.blockSignals(True)
        try:
            self.pair_box.clear()
            self.pair_box.addItems(list(available))
        finally:
            self.pair_box.blockSignals(blocked)
        if self._pair_pinned and current:
            self._show_pair(current)
        else:
            self._show_pair(self._bridge.selected_pair or current)

    def _on_selection(self, pair: str) -> None:
        self._refresh_pairs()
        if not self._pair_pinned:
            self._show_pair(pair)

    def _show_pair(self, pair: str | None) -> None:
        if not pair:
            self._update_unit()
            return
        index = self.pair_box.findText(pair)
        if index >= 0:
            self.pair_box.setCurrentIndex(index)
        self.pair_box.setEditText(pair)
        self._update_unit()

    def _pair_picked(self, *_: object) -> None:
        self._pair_pinned = True
        self._entry_changed()

    def _entry_changed(self, *_: object) -> None:
        """A new pair or size is a new request: an override given for the old one lapses (a
        quote already received keeps its own)."""
        self._entry_blocked = False
        if self.override_check.isChecked():
            self.override_check.setChecked(False)  # toggled: the checks run again
        else:
            self._refresh_checks()

    def _pair(self) -> AssetPair | None:
        try:
            return AssetPair.parse(self.pair_box.currentText().strip().upper(), "pair")
        except ParseError:
            return None

    def _update_unit(self, *_: object) -> None:
        pair = self._pair()
        in_quote = self.unit_button.isChecked()
        if pair is None:
            self.unit_button.setText("quote" if in_quote else "base")
        else:
            self.unit_button.setText(pair.quote if in_quote else pair.base)
        self.unit_button.setToolTip(
            "The size is in the pair's quote asset; click for the base asset"
            if in_quote
            else "The size is in the pair's base asset; click for the quote asset"
        )

    def _entered(self) -> tuple[str, Amount] | None:
        """The pair and size typed, or None after saying what is wrong (values stay)."""
        raw_pair = self.pair_box.currentText().strip()
        pair = self._pair()
        if pair is None:
            self._say("error", f"Choose a pair such as BTC/USD (got {raw_pair!r})")
            self.pair_box.setFocus()
            return None
        raw = self.size_edit.text()
        text = raw.strip().replace(",", "").replace("_", "")
        if not text:
            self._say("error", "Enter a size")
            self.size_edit.setFocus()
            return None
        try:
            value = parse_decimal(text, "size")
        except ParseError:
            self._say("error", f"The size must be a number such as 0.5 (got {raw.strip()!r})")
            self.size_edit.setFocus()
            return None
        if value <= 0:
            self._say("error", "The size must be greater than zero")
            self.size_edit.setFocus()
            return None
        asset = pair.quote if self.unit_button.isChecked() else pair.base
        return str(pair), Amount(value, asset)

    # -- requests -------------------------------------------------------------------------------

    @property
    def requesting(self) -> bool:
        return self._request_task is not None

    def request_quote(self) -> None:
        """Request a quote for the pair and size entered (Request, Enter in the size field),
        unless offline or the checks block it (then say why; nothing is sent)."""
        if self.requesting or self._accepting is not None:
            return
        entered = self._entered()
        if entered is None:
            return
        pair, size = entered
        offline = self._market.offline_reason()
        if offline is not None:
            self._say("warning", f"Not requested: {offline}. Requests resume when it is back.")
            return
        override = self.override_check.isChecked()
        precision = self._context.precision
        found = request_checks(pair, size, self._market, override=override, precision=precision)
        if found.blocks():
            self._entry_blocked = True
            self._refresh_checks()
            reason = request_block_text(size, found, self._market, precision)
            self._say("error", f"Not requested: {reason}. Tick “{OVERRIDE_TEXT}” to ask anyway.")
            return
        notes = [check.text for check in found.warnings()]
        self._start_request(
            self._desk.request(pair, size, override=override), f"{pair} {size_text(size)}", notes
        )

    def requote(self) -> None:
        """A fresh quote for the pair and size of the quote on screen."""
        live = self._live
        if self.requesting or self._accepting is not None or live is None:
            return
        offline = self._market.offline_reason()
        if offline is not None:
            self._say("warning", f"Not requested: {offline}. Requests resume when it is back.")
            return
        self._start_request(self._desk.requote(), f"{live.pair} {size_text(live.size)}")

    def _start_request(
        self, request: Coroutine[Any, Any, LiveQuote], what: str, notes: list[str] | None = None
    ) -> None:
        extra = "".join(f"\n{note}" for note in notes or [])
        self._say("warning" if notes else "info", f"Requesting a quote for {what}…{extra}")
        self._request_task = self._tasks.spawn(self._request(request, what), "RFQ request")
        self._update_controls()
        self._frame()

    async def _request(self, request: Coroutine[Any, Any, LiveQuote], what: str) -> None:
        # Cancelled only when the panel goes (TaskOwner): then no widget may be touched, so the
        # tidying below is not in a ``finally``.
        try:
            await request
        except ChecksBlock as exc:  # the desk's market moved past the limit since the panel's
            self._entry_blocked = True
            self._refresh_checks()
            self._say(
                "error", f"Not requested: {exc.reason}. Tick “{OVERRIDE_TEXT}” to ask anyway."
            )
        except AcceptClosed as exc:
            self._say("warning", f"No quote requested: {exc.reason}")
        except ParseError as exc:
            self._say("error", f"No quote for {what}: {exc}")
        except Exception as exc:  # the client's typed errors, and anything unforeseen
            log.info("RFQ request for %s failed", what, exc_info=exc)
            self._say("error", f"No quote for {what}: {describe(exc)}")
            self._bridge.log(LogLevel.WARNING, f"RFQ request for {what} failed: {describe(exc)}")
        self._request_task = None
        self._update_controls()
        self._frame()

    # -- the quote on screen --------------------------------------------------------------------

    @property
    def live_quote(self) -> LiveQuote | None:
        return self._live

    def _on_quote(self, live: LiveQuote) -> None:
        self._live = live
        self._entry_blocked = False
        self._totals = {side: live.deadlines[side] - live.received_monotonic for side in SIDES}
        precision = self._context.precision
        self.quote_label.setToolTip(f"Quote id {live.order_id}")
        for side, view in self.sides.items():
            view.show_quote(
                live.quote.side(side),
                live.pair,
                precision,
                pair_price(live, side),
                side_terms(live, side, precision),
            )
        self._show_markups()
        self._show_offline()
        self._say("", "")
        self._refresh_checks()
        if not self._frame_timer.isActive():
            self._frame_timer.start()

    def _on_top_of_book(self, books: dict[str, TopOfBook]) -> None:
        tops = {**self._market.top_of_book, **books}
        self._market = replace(self._market, top_of_book=tops)
        if self._live is not None and self._live.pair in books:
            self._show_markups()
            self._refresh_checks()

    def _on_balances(self, balances: Balances) -> None:
        self._market = replace(self._market, balances=balances)
        self._refresh_checks()

    def _on_health(self, health: HealthState) -> None:
        was = self._market.offline
        self._market = replace(self._market, health=health)
        if self._market.offline != was:
            self._show_offline()
            self._update_controls()
            self._frame()

    def _show_offline(self) -> None:
        """Offline: Request and the accepts say so, and a quote on screen is marked."""
        offline = self._market.offline_reason()
        self.request_button.setText("Request (offline)" if offline else "Request")
        self.request_button.setToolTip(
            f"Not now: {offline}; requests resume when it is back"
            if offline
            else "Ask for a two-way quote (Enter in the size field)"
        )
        for view in self.sides.values():
            view.set_offline(offline is not None)
        live = self._live
        if live is not None:
            text = f"Quote {live.order_id[:8]} · {live.pair} · {size_text(live.size)}"
            if offline is not None:
                text += " · OFFLINE: shown as received, accepting is off"
            self.quote_label.setText(text)

    def _override(self) -> bool:
        return self.override_check.isChecked() or (self._live is not None and self._live.override)

    def _override_toggled(self, _: bool) -> None:
        self._refresh_checks()

    def _refresh_checks(self) -> None:
        """The quote's checks again (new balances, book, limits or override): each side shows
        its findings, a blocked side's accept goes off; the override control shows while the
        size limit concerns the request or the quote."""
        live = self._live
        if live is not None and live.accepted_side is None:
            self._quote_checks = quote_checks(
                live, self._market, override=self._override(), precision=self._context.precision
            )
        else:
            self._quote_checks = RfqChecks()
        for side, view in self.sides.items():
            found = self._quote_checks.of(side)
            blocked = any(check.severity == "block" for check in found)
            view.show_checks([check.text for check in found], "error" if blocked else "warning")
        wanted = self._entry_blocked or self._quote_checks.size_limited
        self.override_check.setVisible(wanted)
        if not wanted and self.override_check.isChecked():
            blocked_signals = self.override_check.blockSignals(True)
            self.override_check.setChecked(False)
            self.override_check.blockSignals(blocked_signals)
        self._frame()

    def _show_markups(self) -> None:
        live = self._live
        if live is None:
            return
        top = self._market.top_of_book.get(live.pair)
        usable = top is not None and top.ask > 0 and top.bid > 0
        for side, view in self.sides.items():
            view.show_markup(live.markup_bps(side, top) if top is not None and usable else None)

    def _frame(self) -> None:
        """One countdown frame: time left from the monotonic deadlines, buttons from the desk's
        accept rule; the timer stops once both sides are over."""
        live = self._live
        if live is None:
            self._frame_timer.stop()
            for view in self.sides.values():
                view.accept.setEnabled(False)
            return
        now = live.deadlines["buy"] - live.remaining("buy")  # the desk's clock, read once
        busy = self._accepting is not None or self.requesting or self._market.offline
        counting = False
        for side, view in self.sides.items():
            over = self._side_over(live, side, now)
            left = live.remaining(side, now)
            if over is None or over == "expired":
                state = live.state(side, now)
                view.countdown.show_remaining(left, self._totals[side], state)
                counting = counting or state != "expired"
            else:
                view.countdown.show_word(over)
            allowed = live.accept_allowed(side, now) and self._quote_checks.reason(side) is None
            view.accept.setEnabled(not busy and allowed)
        if not counting:
            self._frame_timer.stop()

    def _side_over(self, live: LiveQuote, side: Side, now: float) -> str | None:
        if live.accepted_side is not None:
            if live.outcome_unknown:
                return "unknown"  # neither side claims what is not known
            return "accepted" if live.accepted_side == side else "not taken"
        if side in live.refused:
            return "refused"
        if live.remaining(side, now) <= 0:
            return "expired"
        return None

    @property
    def frame_timer_active(self) -> bool:
        return self._frame_timer.isActive()

    # -- accept ---------------------------------------------------------------------------------

    @property
    def accepting(self) -> Side | None:
        return self._accepting

    def accept(self, side: Side) -> None:
        """Accept ``side`` of the quote on screen (buttons, Alt+B / Alt+S). At most one accept
        at a time: both buttons are disabled before the accept is even sent."""
        if self._accepting is not None:
            self._say("warning", f"An accept ({self._accepting}) is already in flight")
            return
        if self.requesting:
            self._say("warning", "A new quote is on its way; accept that one")
            return
        if self._live is None or self._desk.current is not self._live:
            self._say("warning", "No quote to accept: request one first")
            return
        offline = self._market.offline_reason()
        if offline is not None:
            self._say("warning", f"Not sent: {offline}. Accepting resumes when it is back.")
            return
        self._refresh_checks()
        blocked = self._quote_checks.reason(side)
        if blocked is not None:
            self._say("warning", f"Not sent: {blocked}")
            return
        self._accepting = side
        self._frame()
        self._update_controls()
        self._tasks.spawn(self._accept(side), f"RFQ accept {side}")

    async def _accept(self, side: Side) -> None:
        live = self._live
        result: AcceptResult | None = None
        try:
            result = await self._desk.accept(side, override=self._override())
        except AcceptClosed as exc:
            self._say("warning", f"Not sent: {exc.reason}")
        except Exception as exc:
            log.warning("RFQ accept %s failed", side, exc_info=exc)
            self._say("error", f"The accept failed: {describe(exc)}")
        # As in _request: cancellation (the panel going) skips this.
        self._accepting = None
        self._update_controls()
        self._frame()
        if live is not None and result is not None:
            self._show_result(live, result)

    def _show_result(self, live: LiveQuote, result: AcceptResult) -> None:
        self.last_result = result
        if result.status == "filled":
            text = fill_text(live, result, self._context.precision)
            self._say("fill", text)
            self._context.notify(LogLevel.INFO, text)
        elif result.status == "refused":
            self._say("error", f"Refused by the service: {result.message}")
        elif result.status == "unknown":
            text = unknown_text(live, result.side)
            self._say("error", text)
            self.message.setToolTip(result.message)  # the details, for whoever looks into it
            self._context.notify(LogLevel.WARNING, text)
        else:
            name = side_name(live.pair, result.side)
            self._say("error", f"{name} did not go through: {result.message}")
        self._refresh_checks()

    # -- history and settings -------------------------------------------------------------------

    def _on_history(self, event: QuoteEvent) -> None:
        self.history_model.add(event)
        live = self._live
        if live is None or event.quote_id != live.order_id:
            return
        unknown = self.last_result is not None and self.last_result.status == "unknown"
        if event.kind == "refused":
            # Also a forced accept's refusal, which this panel did not send itself.
            self._say("error", f"Refused by the service: {event.message}")
        elif event.kind == "accepted" and unknown and event.side is not None:
            # The desk settled an accept whose answer was lost: the order was found.
            assert self.last_result is not None
            self.last_result = replace(self.last_result, status="filled", message=event.message)
            text = settled_text(live, event.side)
            self._say("fill", text)
            self._context.notify(LogLevel.INFO, text)
        self._frame()

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings: auto-requote (the box, the desk and the setting agree) and the pre-trade
        limits, for the panel's checks and the desk's alike, at once."""
        self.auto_requote.setChecked(prefs.auto_requote)
        self._market = replace(self._market, limits=prefs.check_limits())
        self._desk.limits = self._market.limits
        self._refresh_checks()

    def _auto_requote_toggled(self, on: bool) -> None:
        self._desk.auto_requote = on
        self._context.settings.setValue(SETTINGS_AUTO_REQUOTE, on)
        self._context.settings.sync()

    # -- state of the controls ------------------------------------------------------------------

    def _update_controls(self) -> None:
        idle = not self.requesting and self._accepting is None
        online = not self._market.offline
        self.request_button.setEnabled(idle and online)
        self.requote_button.setEnabled(idle and online and self._live is not None)

    def _say(self, level: str, text: str) -> None:
        """A message in the ticket itself: errors keep the entered values where they are."""
        self.message.setText(text)
        self.message.setToolTip("")
        self.message.setProperty("level", level)
        self.message.setStyleSheet(message_css(level, current_palette()))

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the message restyled for its level (the countdown bars and the
        history follow on their own)."""
        self.message.setStyleSheet(message_css(str(self.message.property("level")), palette))
