"""The order ticket's widget: pick a pair, **Buy** or **Sell** its base, an amount (in either
asset), market or limit; Enter sends, after a confirmation unless switched off; F2 jumps to
the amount.

Its truth is ``app.services.order_ticket.OrderTicket`` (no Qt): the fields, the one state, the
market it reads, the entry rules (an amount keeps its asset, a limit its pair, marketable
hit/lift) and one ``Preview`` per change. This widget forwards what the trader types, clicks
and presses, and renders each preview (``order_ticket_screen``); it holds no market and no
money logic. Alt+B / Alt+S pick the side while the focus is in the ticket (so the RFQ
ticket's own Alt+B / Alt+S keep working in its fields). A click on a price elsewhere arrives
as a ``TradeRequest`` (``app/ui/click_trade.py``) and prefills a limit; a double-click, Hit
bid (Ctrl+Shift+S) and Lift offer (Ctrl+Shift+B) send a marketable limit through the same
checks and confirmation as Enter. The choices behind each rule are in the user guide,
resources/manual/ticket.md.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMessageBox, QWidget

from app.domain.money import AssetPair
from app.domain.pair_terms import PairSide, Side
from app.services.algos.engine import AlgoRefused
from app.services.algos.specs import AlgoSpec
from app.services.log_events import LogLevel
from app.services.order_desk import OrderDesk, SubmitResult
from app.services.order_intent import Preview, TicketState
from app.services.order_ticket import OrderTicket, Step
from app.services.ticket import TicketError, TicketForm
from app.ui.bridge import QtTopic
from app.ui.click_trade import TradeRequest
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.order_confirm import confirm_order, update_confirmation
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.panels.base import PanelContext
from app.ui.panels.order_retry import ask_retry
from app.ui.panels.order_ticket_screen import TicketScreen, styled
from app.ui.panels.order_ticket_view import confirmation_text
from app.ui.preferences import Preferences

__all__ = ["HIT_BID_KEY", "LIFT_OFFER_KEY", "OrderTicketPanel"]

#: Alt+letter picks a side while the focus is in the ticket.
SIDE_KEYS: dict[int, Side] = {Qt.Key.Key_B: "buy", Qt.Key.Key_S: "sell"}
#: Hit the bid / lift the offer of the ticket's pair (Trade menu; no clash with F1-F3,
#: Ctrl+1..8, Ctrl+L, Ctrl+, or the tickets' Alt+B / Alt+S).
HIT_BID_KEY = "Ctrl+Shift+S"
LIFT_OFFER_KEY = "Ctrl+Shift+B"
#: How long a hit/lift order may wait for its fill before it expires (seconds): long enough
#: to read the confirmation, short enough that it never sits on the book.
MARKETABLE_SECONDS = 10.0
#: How a press of Send is answered on screen: (label, level) by the step's kind.
STEP_LOOK = {
    "cannot_send": ("outcome", "error"),
    "invalid": ("input", "error"),
    "blocked": ("input", "error"),
    "sending": ("outcome", "info"),
    "moved": ("outcome", "warning"),
    "not_sent": ("outcome", "info"),
}


class OrderTicketPanel(TicketScreen):
    #: The confirmation box, once one has been opened.
    confirmation: QMessageBox

    def __init__(
        self, context: PanelContext, desk: OrderDesk, parent: QWidget | None = None
    ) -> None:
        super().__init__(context.precision, parent)
        self._context = context
        self._bridge = context.bridge
        prefs = Preferences.load(context.settings)
        self.ticket = OrderTicket(
            desk,
            context.bridge.estimate_feed(),
            precision=context.precision,
            presets=prefs.presets(),
            resting_hours=float(prefs.resting_hours),
        )
        self.slippage_bps = prefs.slippage_bps
        ticket = self.ticket
        self.destroyed.connect(lambda *_: ticket.close())  # a closure: the panel is going
        self._shown: Preview | None = None  # the preview the confirmation shows
        self._connect_inputs()
        self.previews: QtTopic[Preview] = QtTopic(ticket.previews, self)
        self.results: QtTopic[SubmitResult] = QtTopic(ticket.results, self)
        self.failures: QtTopic[str] = QtTopic(ticket.failures, self)
        self.previews.connect(self._render)
        self.results.connect(self.show_result)
        self.results.connect(self._offer_retry)
        self.retry_button.clicked.connect(self.ask_credit_retry)
        self.failures.connect(self._failed)
        context.bridge.selectionChanged.connect(self.preset_pair)
        follow_palette(self.set_palette)
        self._fill_pairs()
        if self._bridge.selected_pair:
            self.preset_pair(self._bridge.selected_pair)
        self._render(ticket.preview)
        context.trade.requested.connect(self._on_trade_request)
        self.hit_bid_action = self._trade_action("&Hit bid", HIT_BID_KEY, "sell")
        self.lift_offer_action = self._trade_action("&Lift offer", LIFT_OFFER_KEY, "buy")

    def _connect_inputs(self) -> None:
        """Every input is forwarded to the ticket; its next preview is what the screen shows."""
        t = self.ticket
        self.pair_box.currentTextChanged.connect(lambda text: self._forward(t.set_pair(text)))
        self.buy_button.clicked.connect(lambda: self.set_side("buy"))
        self.sell_button.clicked.connect(lambda: self.set_side("sell"))
        self.size_edit.textChanged.connect(lambda text: self._forward(t.set_size(text)))
        self.units_button.clicked.connect(lambda: self._forward(t.toggle_units()))
        self.limit_edit.textChanged.connect(lambda text: self._forward(t.set_limit(text)))
        self.type_box.currentIndexChanged.connect(
            lambda _: self._forward(t.set_type(self.type_box.currentData()))
        )
        self.end_check.toggled.connect(lambda on: self._forward(t.set_end_enabled(on)))
        self.end_edit.dateTimeChanged.connect(
            lambda at: self._forward(t.set_end(datetime.fromtimestamp(at.toSecsSinceEpoch(), UTC)))
        )
        self.override_check.toggled.connect(lambda on: self._forward(t.set_override(on)))
        self.send_button.clicked.connect(self.submit)
        for child in self.findChildren(QWidget):
            child.installEventFilter(self)
        self.restyle(current_palette())
        self._fit_width()

    def _forward(self, taken: bool) -> None:
        if not taken:  # refused (a confirmation is up): the widgets show the ticket again
            self.show_preview(self.ticket.preview, again=True)

    # -- keys -----------------------------------------------------------------------------------

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
        """A theme switch: side buttons and messages restyled, the checks redrawn."""
        self.restyle(palette)
        if hasattr(self, "previews"):
            self.show_preview(self.ticket.preview, again=True)

    # -- pair and side --------------------------------------------------------------------------

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
        if self.pair_box.currentText() != self.ticket.fields.pair:
            self.ticket.set_pair(self.pair_box.currentText())

    @property
    def side(self) -> Side:
        return self.ticket.fields.side

    @property
    def pair_side(self) -> PairSide | None:
        """The pair and side on the ticket (None before the pairs are known)."""
        return self.ticket.fields.pair_side

    def form(self) -> TicketForm:
        return self.ticket.fields.form()

    def preset_pair(self, pair: str) -> None:
        """Follow the pair selected elsewhere, keeping the side."""
        if pair.count("/") != 1:
            return
        if self.pair_box.findText(pair) < 0:
            self._fill_pairs()  # quietly: the pair box may land on ``pair`` without a signal
        if self.pair_box.findText(pair) >= 0:
            self._forward(self.ticket.set_pair(pair))

    def set_side(self, side: Side) -> None:
        """Buy or Sell the pair's base (the buttons, Alt+B / Alt+S)."""
        self._forward(self.ticket.set_side(side))

    def focus_entry(self) -> None:
        """F2 (Trade menu): the cursor in the amount, selected."""
        self.size_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.size_edit.selectAll()

    # -- click-to-trade -------------------------------------------------------------------------

    def default_size(self, asset: str) -> Decimal | None:
        return self.ticket.default_size(asset)

    def prefill(
        self, pair: str, side: Side, limit_price: Decimal, amount: Decimal | None = None
    ) -> bool:
        """A limit order at a price from the book (``OrderTicket.prefill`` says which amount);
        False (nothing changed) while a confirmation is up or the pair is unknown."""
        if pair.count("/") != 1:
            return False
        if self.pair_box.findText(pair) < 0:
            self._fill_pairs()
        if self.pair_box.findText(pair) < 0 or not self.ticket.prefill(
            pair, side, limit_price, amount
        ):
            return False
        self._raise_dock()
        target = PairSide(AssetPair.parse(pair), side)
        price = f"{self._context.precision.price_text(limit_price, pair)} {target.pair.quote}"
        text = f"From the book: {target.verb.lower()} {target.pair.base} at {price}"
        note = self.ticket.preview.note
        if note is not None:
            text += f"; {note[1]}"
        if not self.ticket.fields.size.strip():
            text += f"; no size preset for {target.source} (Settings): type the amount"
        styled(self.outcome_label, "info", text)
        return True

    def send_now(self) -> None:
        """Send what the ticket holds, exactly as Enter does: checks, confirmation (if on)."""
        self.submit()

    def _on_trade_request(self, request: TradeRequest) -> None:
        """A click on a price (or a double-click, to send) in a panel sharing the context. A
        double-click trades now, as hit bid / lift offer do: a marketable limit at the touch
        plus the slippage collar that fills now or expires (a click is on a bid to sell or on
        an ask to buy: it is never meant to rest, whatever the book did since)."""
        filled = self.prefill(request.pair, request.side, request.price, request.amount)
        if filled and request.send:
            if not self.ticket.fields.size.strip():
                self.size_edit.setFocus()  # nothing to send yet: the amount is missing
                return
            if not self._make_marketable(request.side, None):
                return
            self.send_now()

    def _make_marketable(self, side: Side, amount: Decimal | None) -> bool:
        """The ticket as a marketable limit (touch plus the slippage collar, ending within
        seconds); False, said on the outcome line, when it cannot be."""
        refused = self.ticket.marketable(
            side, amount, collar_bps=self.slippage_bps, seconds=MARKETABLE_SECONDS
        )
        if refused is not None:
            styled(self.outcome_label, "error", refused)
            return False
        self._raise_dock()
        return True

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
        """Hit the bid (sell) or lift the offer (buy) of the ticket's pair with the default
        size, through the checks and confirmation: a limit at the touch plus the slippage
        collar (Settings) ending ``MARKETABLE_SECONDS`` from the key, so it fills now or
        expires and never rests. Without a default size for the asset sold the order is
        prefilled at the touch and nothing is sent."""
        pair_side = self.pair_side
        if pair_side is None:
            styled(self.outcome_label, "error", "Choose a pair to trade first.")
            return
        pair = str(pair_side.pair)
        price = self.ticket.touch(side)
        if price is None:
            what = "bid" if side == "sell" else "ask"
            styled(self.outcome_label, "error", f"No {what} for {pair} yet: nothing sent.")
            return
        source = PairSide(pair_side.pair, side).source
        default = self.ticket.default_size(source)
        if default is None:
            if self._make_marketable(side, None):
                self.ticket.set_size("")
                self.size_edit.setFocus()
                styled(
                    self.outcome_label,
                    "warning",
                    f"No default size for {source} (Settings › Size presets): nothing sent; "
                    f"type the amount, then Enter sends within {MARKETABLE_SECONDS:g} s of "
                    "the key (a limit at the touch plus the collar, never resting).",
                )
            return
        if self._make_marketable(side, default):
            self.send_now()

    def _raise_dock(self) -> None:
        """Bring the ticket's dock to the front (it may be tabbed behind the RFQ ticket)."""
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()

    # -- settings and quit ----------------------------------------------------------------------

    async def stop_feed(self) -> None:
        """The estimate feed stops before the connection closes (no request cut off at quit)."""
        await self.ticket.stop_estimates()

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings > trading: the pre-trade limits, the resting time and the size presets."""
        self.ticket.desk.limits = prefs.check_limits()
        self.slippage_bps = prefs.slippage_bps
        self._presets_for = None  # the presets may have changed: rebuild the buttons
        self.ticket.apply(prefs.presets(), float(prefs.resting_hours))

    # -- sending --------------------------------------------------------------------------------

    def submit(self) -> None:
        """Enter or the button: check, confirm (setting), send. Does nothing while an order
        is in flight or being confirmed; offline it says why nothing is sent."""
        value = self._context.settings.value(CONFIRM_KEY, True)
        self._after(self.ticket.submit(confirm=value not in (False, "false", "0", 0)))

    def _render(self, preview: Preview) -> None:
        """A preview on screen and in the confirmation while it is up. Send answers for the
        preview the box opened with (``_shown`` stays): a tick just before the click must not
        send terms the trader could not read; the box says when Send would refuse."""
        self.show_preview(preview)
        box = getattr(self, "confirmation", None)
        if preview.state is TicketState.CONFIRMING and box is not None and box.isVisible():
            self._show_confirmation(box, preview)

    def preset_amounts(self, asset: str) -> tuple[Decimal, ...]:
        return self.ticket.presets.get(asset, ())

    def use_preset(self, amount: Decimal) -> None:
        self.ticket.set_size(format(amount, "f"))

    def _after(self, step: Step) -> None:
        """What a press of Send did, on screen."""
        if step.kind == "confirming" and step.preview is not None:
            self._shown = step.preview
            self.confirmation = confirm_order(self, "", [], [], self._answered)
            self._show_confirmation(self.confirmation, step.preview)
            return
        where, level = STEP_LOOK.get(step.kind, ("", ""))
        if where == "outcome":
            styled(self.outcome_label, level, step.message)
        elif where == "input":
            styled(self.input_error, level, step.message)
        if step.kind == "invalid":
            target = {
                "limit": self.limit_edit,
                "end_at": self.end_edit,
                "destination": self.pair_box,
                "source": self.pair_box,
            }.get(step.field, self.size_edit)
            target.setFocus()
        elif step.kind == "blocked" and self.ticket.preview.fat_finger:
            self.override_check.setVisible(True)
            self.override_check.setFocus()
        elif step.kind == "blocked":
            self.limit_edit.setFocus()  # a limit kept through a switch: edit it
        elif step.kind == "not_sent":
            self.size_edit.setFocus()

    def _show_confirmation(self, box: QMessageBox, preview: Preview) -> None:
        summary, details, warnings, fresh = confirmation_text(
            preview, self._context.precision, self.stale_after
        )
        change = None if self._shown is None else preview.changes_from(self._shown)
        if change is not None:
            note = f"Changed since Enter: {change}. Send will not send it: Cancel, then Enter."
            warnings = [note, *warnings]
        update_confirmation(box, summary, details, warnings)
        if fresh:
            self.ticket.refresh_estimate()

    def _answered(self, send: bool) -> None:
        shown = self._shown or self.ticket.preview
        self._shown = None
        self._after(self.ticket.answer(send, shown))

    def _failed(self, message: str) -> None:
        styled(self.outcome_label, "error", message)
        self._context.notify(LogLevel.ERROR, message)

    # -- after a refusal for credit ----------------------------------------------------------

    def _offer_retry(self, _result: SubmitResult) -> None:
        self.retry_button.setVisible(self.ticket.credit_retry is not None)

    def ask_credit_retry(self) -> QMessageBox | None:
        """Ask, then queue the refused order for the credit window (``order_retry``)."""
        spec = self.ticket.credit_retry
        if spec is None:
            return None
        return ask_retry(self, spec, self._queue_retry)

    def _queue_retry(self, spec: AlgoSpec) -> None:
        try:
            parent = self._bridge.submit_algo(spec)
        except (AlgoRefused, TicketError) as exc:
            styled(self.outcome_label, "error", f"Not queued: {exc}")
            return
        self.retry_button.setVisible(False)
        styled(self.outcome_label, "info", f"Queued for the credit window ({parent.id})")
