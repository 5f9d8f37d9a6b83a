"""The RFQ ticket: ask for a two-way quote, watch both sides count down, accept one.

The truth is ``app.services.rfq_ticket.RfqTicket`` (no Qt): the entry, the state, the quote's
checks, markup and what-if, and what an accept sends. This panel renders each ``RfqPreview`` it
publishes and forwards the trader's input; it keeps no market and decides nothing about money.

Keyboard: F3 (``rfq_form``) puts the cursor in the size field; Enter there requests; Alt+B
accepts the buy side and Alt+S the sell side (button mnemonics; pressed in a text field of the
ticket while the side is closed, they say why instead of typing the letter). The pair box starts
on the terminal's selected pair and follows the selection until the trader picks or types a
pair in it; the size is in the pair's base asset unless the unit button beside it is switched
to the quote asset (a size already typed is then converted at the mid, or cleared).

Countdown: every frame (~30 fps, ``FRAME_MS``) asks the latest preview what each side shows at
the desk's monotonic now (``RfqPreview.clock``: a deadline already corrected for the server
clock and the round trip), never counting timer ticks. The frame timer runs only while a side
can still be accepted or is still counting down.

Offline (every feed failing): Request and both accepts are disabled and say "offline"; a quote on
screen is marked. (Disabled rather than an "accept anyway" confirmation: a modal question under
a countdown of a few seconds is a worse choice than waiting for the connection.) The message
under the quote is coloured by its level from the palette in force, and restyled on a theme
switch.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QWidget

from app.services.rfq_desk import AcceptResult, LiveQuote, QuoteEvent, RfqDesk, Side
from app.services.rfq_ticket import (
    OVERRIDE_TEXT,
    Message,
    RfqPreview,
    RfqTicket,
    unit_words,
)
from app.ui.bridge import QtTopic
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.panels.base import PanelContext
from app.ui.panels.rfq_form import REQUEST_TIP, RfqTicketForm, message_css
from app.ui.preferences import Preferences
from app.ui.tasks import TaskOwner
from app.ui.timers import make_timer

__all__ = ["FRAME_MS", "OVERRIDE_TEXT", "SETTINGS_AUTO_REQUOTE", "RfqTicketPanel"]

SETTINGS_AUTO_REQUOTE = "rfq/autoRequote"
#: One countdown frame every this many milliseconds (~30 fps).
FRAME_MS = 33
#: Keys that accept a side with Alt held (the buttons' mnemonics).
ACCEPT_KEYS: dict[int, Side] = {int(Qt.Key.Key_B): "buy", int(Qt.Key.Key_S): "sell"}


class RfqTicketPanel(RfqTicketForm):
    def __init__(self, context: PanelContext, desk: RfqDesk, parent: QWidget | None = None) -> None:
        super().__init__(context.precision, parent)
        self._context = context
        self._bridge = context.bridge
        self._desk = desk
        desk.limits = Preferences.load(context.settings).check_limits()
        self.ticket = ticket = RfqTicket(desk, context.precision)
        self._tasks = TaskOwner(self, ticket.failed)
        self.destroyed.connect(lambda *_: ticket.close())
        self._preview: RfqPreview = ticket.preview
        self._quote_shown: LiveQuote | None = None
        self._message_shown = Message()
        self._choices_from: tuple[str, ...] | None = None
        self._frame_timer = make_timer(self, FRAME_MS, self._frame)

        self.previews: QtTopic[RfqPreview] = QtTopic(ticket.previews, self)
        self.previews.connect(self._render)
        self.history: QtTopic[QuoteEvent] = QtTopic(desk.history, self)
        self.history.connect(self.history_model.add)
        self._bridge.selectionChanged.connect(self._on_selection)
        self._bridge.watchlistChanged.connect(self._refresh_pairs)
        self._wire_inputs()

        auto = bool(context.settings.value(SETTINGS_AUTO_REQUOTE, False, type=bool))
        self.auto_requote.setChecked(auto)
        self._desk.auto_requote = auto
        self.auto_requote.toggled.connect(self._auto_requote_toggled)

        self._refresh_pairs()
        self.history_model.extend(desk.events)
        self._render(ticket.preview)
        self._attach_focus_shortcut()
        follow_palette(self.set_palette)

    def _wire_inputs(self) -> None:
        """The trader's input goes to the ticket (or, for the pair list, stays in the view)."""
        self.pair_box.activated.connect(self._pair_picked)
        line = self.pair_box.lineEdit()
        assert line is not None  # editable
        line.textEdited.connect(self._pair_picked)
        line.installEventFilter(self)
        self.pair_box.currentTextChanged.connect(self._update_unit)
        self.size_edit.returnPressed.connect(self.request_quote)
        self.size_edit.textEdited.connect(lambda *_: self.ticket.entry_changed())
        self.size_edit.installEventFilter(self)
        self.unit_button.toggled.connect(self._units_toggled)
        self.request_button.clicked.connect(self.request_quote)
        self.requote_button.clicked.connect(self.requote)
        self.override_check.toggled.connect(self.ticket.set_override)
        for side, box in self.sides.items():
            box.accept.clicked.connect(lambda _=False, s=side: self.accept(s))

    # -- what tests and the window read ---------------------------------------------------------

    @property
    def live_quote(self) -> LiveQuote | None:
        return self.ticket.live

    @property
    def last_result(self) -> AcceptResult | None:
        """The last accept's answer (for the trader's eyes in ``message``)."""
        return self.ticket.last_result

    @property
    def requesting(self) -> bool:
        return self.ticket.requesting

    @property
    def accepting(self) -> Side | None:
        return self.ticket.accepting

    @property
    def frame_timer_active(self) -> bool:
        return self._frame_timer.isActive()

    # -- input ----------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Alt+B / Alt+S in a text field while the button is disabled: say why instead of
        typing the letter (an enabled button's mnemonic takes the key before this)."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            side = ACCEPT_KEYS.get(event.key())
            if side is not None and event.modifiers() == Qt.KeyboardModifier.AltModifier:
                self.accept(side)
                return True
        return super().eventFilter(watched, event)

    def request_quote(self) -> None:
        """Request a quote for the pair and size entered (Request, Enter in the size field)."""
        work = self.ticket.start_request(self.pair_box.currentText(), self.size_edit.text())
        self._spawn(work, "RFQ request")

    def requote(self) -> None:
        """A fresh quote for the pair and size of the quote on screen."""
        self._spawn(self.ticket.start_requote(), "RFQ requote")

    def accept(self, side: Side) -> None:
        """Accept ``side`` of the quote on screen (buttons, Alt+B / Alt+S): the ticket sends
        at most one accept at a time, exactly as its preview shows it."""
        self._spawn(self.ticket.start_accept(side), f"RFQ accept {side}")

    def _spawn(self, work: Coroutine[Any, Any, None] | None, what: str) -> None:
        # Cancelled only when the panel goes (TaskOwner), with the ticket closed first.
        if work is not None:
            self._tasks.spawn(work, what)

    def _units_toggled(self, in_quote: bool) -> None:
        size = self.size_edit.text()
        text = self.ticket.set_units(in_quote, self.pair_box.currentText(), size)
        if text != size:
            self.size_edit.setText(text)
        self._update_unit()

    def _update_unit(self, *_: object) -> None:
        text, tip = unit_words(self.pair_box.currentText(), self.unit_button.isChecked())
        self.unit_button.setText(text)
        self.unit_button.setToolTip(tip)

    # -- the pair list --------------------------------------------------------------------------

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
        if not self.ticket.follows_selection and current:
            self._show_pair(current)
        else:
            self._show_pair(self._bridge.selected_pair or current)

    def _on_selection(self, pair: str) -> None:
        self._refresh_pairs()
        if self.ticket.follows_selection:
            self._show_pair(pair)

    def _show_pair(self, pair: str | None) -> None:
        if pair:
            index = self.pair_box.findText(pair)
            if index >= 0:
                self.pair_box.setCurrentIndex(index)
            self.pair_box.setEditText(pair)
        self._update_unit()

    def _pair_picked(self, *_: object) -> None:
        self.ticket.pick_pair()

    # -- rendering ------------------------------------------------------------------------------

    def _render(self, preview: RfqPreview) -> None:
        """Show one preview: the quote's sides, checks and markup, the message, the controls."""
        self._preview = preview
        live = preview.live
        if live is not None and live is not self._quote_shown:
            self._quote_shown = live
            self.quote_label.setToolTip(f"Quote id {live.order_id}")
            for side, view in self.sides.items():
                shown = preview.sides[side]
                quoted = live.quote.side(side)
                precision = self._context.precision
                view.show_quote(quoted, live.pair, precision, shown.price, shown.terms)
            if not self._frame_timer.isActive():
                self._frame_timer.start()
        offline = preview.offline is not None
        for side, view in self.sides.items():
            shown_side = preview.sides.get(side)
            if shown_side is None:
                view.show_checks([], "warning")
            else:
                view.show_markup(shown_side.markup_bps, shown_side.markup_moment)
                lines = [check.text for check in shown_side.checks]
                view.show_checks(lines, "error" if shown_side.blocked else "warning")
            view.set_offline(offline)
        if preview.quote_label:
            self.quote_label.setText(preview.quote_label)
        self.request_button.setText("Request (offline)" if offline else "Request")
        self.request_button.setToolTip(
            f"Not now: {preview.offline}; requests resume when it is back"
            if offline
            else REQUEST_TIP
        )
        self.request_button.setEnabled(preview.can_request)
        self.requote_button.setEnabled(preview.can_requote)
        self.override_check.setVisible(preview.override_shown)
        if self.override_check.isChecked() != preview.override:
            blocked = self.override_check.blockSignals(True)
            self.override_check.setChecked(preview.override)
            self.override_check.blockSignals(blocked)
        self._show_message(preview.message)
        if preview.focus == "pair":
            self.pair_box.setFocus()
        elif preview.focus == "size":
            self.size_edit.setFocus()
        self._frame()

    def _frame(self) -> None:
        """One countdown frame: each side as the preview says it is at the desk's now; the
        timer stops once both sides are over."""
        preview = self._preview
        if preview.live is None:
            self._frame_timer.stop()
            for view in self.sides.values():
                view.accept.setEnabled(False)
            return
        now = self.ticket.now()
        counting = False
        for side, view in self.sides.items():
            clock = preview.clock(side, now)
            if clock.word is None:
                view.countdown.show_remaining(clock.remaining, clock.total, clock.state)
                counting = counting or clock.state != "expired"
            else:
                view.countdown.show_word(clock.word)
            view.accept.setEnabled(clock.can_accept)
        if not counting:
            self._frame_timer.stop()

    def _show_message(self, message: Message) -> None:
        if message == self._message_shown:
            return
        self._message_shown = message
        self.message.setText(message.text)
        self.message.setToolTip(message.detail)
        self.message.setProperty("level", message.level)
        self.message.setStyleSheet(message_css(message.level, current_palette()))

    # -- settings -------------------------------------------------------------------------------

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings: auto-requote (the box, the desk and the setting agree) and the pre-trade
        limits, for the ticket's checks and the desk's alike, at once."""
        self.auto_requote.setChecked(prefs.auto_requote)
        self._desk.limits = prefs.check_limits()
        self.ticket.refresh()

    def _auto_requote_toggled(self, on: bool) -> None:
        self._desk.auto_requote = on
        self._context.settings.setValue(SETTINGS_AUTO_REQUOTE, on)
        self._context.settings.sync()

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the message restyled for its level (the countdown bars and the
        history follow on their own)."""
        self.message.setStyleSheet(message_css(str(self.message.property("level")), palette))
