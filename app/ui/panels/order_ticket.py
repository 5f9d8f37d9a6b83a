"""Order ticket: sell a size of one asset for another, market or limit, with the live
indicative price, what-if balances and pre-trade checks; Enter sends (after a confirmation
unless switched off), F2 jumps to the size.

Choices where the issue is silent (README "Order ticket"):
- the assets follow the pair selected elsewhere (top of book, depth), keeping the ticket's
  direction (buying or selling the pair's base); a new ticket buys the base;
- the size is in the asset sold (the order's ``source``), as the service takes it;
- a bare limit number is read in the pair's QUOTE per BASE ("90,000" = 90,000 USD per BTC);
  a number with units (``0.0000111 USD/BTC``) is taken as typed, either direction;
- the end time is entered and shown in UTC;
- the clientOrderId shown is the one the next send carries; it changes only after a settled
  answer or an edit, so sending an unsettled ticket again cannot place a second order.

Messages are coloured by level (error, warning, success) from the palette in force; a theme
switch restyles every message on screen.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime

from PySide6.QtCore import QDateTime, Qt, QTimeZone
from PySide6.QtGui import QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.domain.records import TopOfBook
from app.services.estimates import EstimateResult
from app.services.limit_prices import pair_base
from app.services.log_events import LogLevel
from app.services.order_desk import AlreadySending, OrderDesk, SubmitResult
from app.services.pretrade import Check, checks, what_if
from app.services.session import Balances
from app.services.ticket import OrderType, TicketError, TicketForm, TicketInput
from app.ui.bridge import QtTopic
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.order_confirm import confirm_order
from app.ui.palette import TradePalette, follow_palette, level_colour, level_css
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket_view import (
    checks_text,
    estimate_text,
    limit_unit,
    what_if_rows,
    what_if_verdict,
    wire_text,
)
from app.ui.preferences import Preferences
from app.ui.tasks import TaskOwner

OUTCOME_LEVEL = {
    "filled": "success",
    "submitted": "success",
    "rejected": "error",
    "failed": "error",
    "unknown": "warning",
}


def _styled(label: QLabel, level: str, text: str) -> None:
    """``text`` in the colour of ``level``; the level stays on the label (property "level")
    so a theme switch can restyle it."""
    label.setText(text)
    label.setProperty("level", level)
    label.setStyleSheet(level_css(level))


def _check_line(level: str, text: str) -> str:
    """One pre-trade check as rich text: ⛔ for a block, ⚠ for a warning, in its colour."""
    colour = level_colour(level)
    line = f"{'⛔' if level == 'error' else '⚠'} {html.escape(text, quote=False)}"
    return line if colour is None else f"<span style='color:{colour.name()}'>{line}</span>"


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
        self._desk_sending = desk.sending
        self._ticket: TicketInput | None = None
        self._estimate: EstimateResult | None = None
        self._in_flight = False
        self._confirming = False
        self._last_sent: str | None = None  # clientOrderId of the last send (its outcome shown)
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
        follow_palette(self.set_palette)
        self._fill_assets()
        if self._bridge.selected_pair:
            self.preset_pair(self._bridge.selected_pair)
        self._update()

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.source_box = QComboBox(self)
        self.source_box.setObjectName("orderSource")
        self.source_box.setToolTip("Asset you sell (the order's source)")
        self.destination_box = QComboBox(self)
        self.destination_box.setObjectName("orderDestination")
        self.destination_box.setToolTip("Asset you receive (the order's destination)")
        self.swap_button = QPushButton("⇄", self)
        self.swap_button.setObjectName("orderSwap")
        self.swap_button.setToolTip("Swap: sell what you would receive")
        self.swap_button.setFixedWidth(36)
        assets = QHBoxLayout()
        assets.addWidget(QLabel("Sell", self))
        assets.addWidget(self.source_box, 1)
        assets.addWidget(self.swap_button)
        assets.addWidget(QLabel("for", self))
        assets.addWidget(self.destination_box, 1)

        self.size_edit = QLineEdit(self)
        self.size_edit.setObjectName("orderSize")
        self.size_edit.setPlaceholderText("size")
        self.size_edit.setFont(mono)
        self.size_unit = QLabel(self)
        self.size_unit.setObjectName("orderSizeUnit")
        size_row = QHBoxLayout()
        size_row.addWidget(self.size_edit, 1)
        size_row.addWidget(self.size_unit)

        self.type_box = QComboBox(self)
        self.type_box.setObjectName("orderType")
        self.type_box.addItem("Market", "market")
        self.type_box.addItem("Limit", "limit")

        self.limit_edit = QLineEdit(self)
        self.limit_edit.setObjectName("orderLimit")
        self.limit_edit.setPlaceholderText("limit price")
        self.limit_edit.setFont(mono)
        self.limit_unit = QLabel(self)
        self.limit_unit.setObjectName("orderLimitUnit")
        limit_row = QHBoxLayout()
        limit_row.addWidget(self.limit_edit, 1)
        limit_row.addWidget(self.limit_unit)
        self.wire_label = QLabel(self)
        self.wire_label.setObjectName("orderWireLimit")
        self.wire_label.setWordWrap(True)
        self.wire_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.end_check = QCheckBox("Good until (UTC)", self)
        self.end_check.setObjectName("orderEndEnabled")
        self.end_edit = QDateTimeEdit(self)
        self.end_edit.setObjectName("orderEndAt")
        self.end_edit.setTimeZone(QTimeZone.utc())
        self.end_edit.setDisplayFormat("yyyy-MM-dd HH:mm:ss 'UTC'")
        self.end_edit.setCalendarPopup(True)
        self.end_edit.setDateTime(QDateTime.currentDateTimeUtc().addSecs(24 * 3600))
        end_row = QHBoxLayout()
        end_row.addWidget(self.end_check)
        end_row.addWidget(self.end_edit, 1)

        self.client_id_label = QLabel(self)
        self.client_id_label.setObjectName("orderClientId")
        self.client_id_label.setFont(mono)
        self.client_id_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        form = QFormLayout()
        form.addRow("Assets", assets)
        form.addRow(self._buddy("Si&ze", self.size_edit), size_row)
        form.addRow("T&ype", self.type_box)
        form.addRow(self._buddy("Li&mit", self.limit_edit), limit_row)
        form.addRow("", self.wire_label)
        form.addRow(self._buddy("E&nd", self.end_check), end_row)
        form.addRow("Client id", self.client_id_label)

        self.input_error = QLabel(self)
        self.input_error.setObjectName("orderInputError")
        self.input_error.setWordWrap(True)
        self.estimate_label = QLabel(self)
        self.estimate_label.setObjectName("orderEstimate")
        self.estimate_label.setWordWrap(True)
        self.what_if_grid = QGridLayout()
        self.what_if_cells: list[list[QLabel]] = []
        self.what_if_headers: list[QLabel] = []
        for column, title in enumerate(("After the trade", "free", "credit")):
            header = QLabel(f"<b>{title}</b>", self)
            self.what_if_grid.addWidget(header, 0, column)
            self.what_if_headers.append(header)
        for row in (1, 2):
            cells = [QLabel(self) for _ in range(3)]
            for column, cell in enumerate(cells):
                cell.setObjectName(f"orderWhatIf{row}{column}")
                self.what_if_grid.addWidget(cell, row, column)
            self.what_if_cells.append(cells)
        self.verdict_label = QLabel(self)
        self.verdict_label.setObjectName("orderVerdict")
        self.verdict_label.setWordWrap(True)
        self.checks_label = QLabel(self)
        self.checks_label.setObjectName("orderChecks")
        self.checks_label.setWordWrap(True)
        self.override_check = QCheckBox("Override the size &limit for this order", self)
        self.override_check.setObjectName("orderOverride")
        self.override_check.setVisible(False)

        self.send_button = QPushButton("Send order  (Enter)", self)
        self.send_button.setObjectName("orderSend")
        self.send_button.setDefault(True)
        self.outcome_label = QLabel(self)
        self.outcome_label.setObjectName("orderOutcome")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.input_error)
        layout.addWidget(self.estimate_label)
        layout.addLayout(self.what_if_grid)
        layout.addWidget(self.verdict_label)
        layout.addWidget(self.checks_label)
        layout.addWidget(self.override_check)
        layout.addWidget(self.send_button)
        layout.addWidget(self.outcome_label)
        layout.addStretch(1)

        self.source_box.currentTextChanged.connect(self._source_changed)
        self.destination_box.currentTextChanged.connect(lambda _: self._update())
        self.swap_button.clicked.connect(self.swap)
        self.size_edit.textChanged.connect(lambda _: self._update())
        self.limit_edit.textChanged.connect(lambda _: self._update())
        self.type_box.currentIndexChanged.connect(lambda _: self._update())
        self.end_check.toggled.connect(lambda _: self._update())
        self.end_edit.dateTimeChanged.connect(lambda _: self._update())
        self.override_check.toggled.connect(lambda _: self._refresh_predictions())
        self.send_button.clicked.connect(self.submit)
        QWidget.setTabOrder(self.source_box, self.swap_button)
        QWidget.setTabOrder(self.swap_button, self.destination_box)
        QWidget.setTabOrder(self.destination_box, self.size_edit)
        QWidget.setTabOrder(self.size_edit, self.type_box)
        QWidget.setTabOrder(self.type_box, self.limit_edit)
        QWidget.setTabOrder(self.limit_edit, self.end_check)
        QWidget.setTabOrder(self.end_check, self.end_edit)
        QWidget.setTabOrder(self.end_edit, self.override_check)
        QWidget.setTabOrder(self.override_check, self.send_button)

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

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: every message label restyled for its level, the checks redrawn."""
        for label in self.findChildren(QLabel):
            level = label.property("level")
            if isinstance(level, str):
                label.setStyleSheet(level_css(level, palette))
        self._refresh_predictions()

    # -- assets ------------------------------------------------------------------------------

    def _pairs(self) -> list[tuple[str, str]]:
        names = self._bridge.available_pairs or list(self._bridge.pair_info)
        return [(n.split("/")[0], n.split("/")[1]) for n in names if n.count("/") == 1]

    def _fill_assets(self) -> None:
        assets = sorted({asset for pair in self._pairs() for asset in pair})
        current = self.source_box.currentText()
        self.source_box.blockSignals(True)
        self.source_box.clear()
        self.source_box.addItems(assets)
        if current in assets:
            self.source_box.setCurrentText(current)
        self.source_box.blockSignals(False)
        self._fill_destinations()

    def _fill_destinations(self, wanted: str | None = None) -> None:
        """Only assets that trade against the source (one pair, either direction)."""
        source = self.source_box.currentText()
        choices = sorted(
            {b if a == source else a for a, b in self._pairs() if source in (a, b)} - {source}
        )
        keep = wanted or self.destination_box.currentText()
        self.destination_box.blockSignals(True)
        self.destination_box.clear()
        self.destination_box.addItems(choices)
        if keep in choices:
            self.destination_box.setCurrentText(keep)
        self.destination_box.blockSignals(False)

    def _source_changed(self, _: str) -> None:
        self._fill_destinations()
        self._update()

    def preset_pair(self, pair: str) -> None:
        """Follow the pair selected elsewhere, keeping the ticket's direction."""
        if pair.count("/") != 1:
            return
        if not self._pairs():
            self._fill_assets()
        base, quote = pair.split("/")
        selling_base = (
            self.source_box.currentText() != ""
            and self.source_box.currentText()
            == pair_base(
                self.source_box.currentText(),
                self.destination_box.currentText(),
                self._bridge.pair_info,
            )
        )
        source, destination = (base, quote) if selling_base else (quote, base)
        self.set_assets(source, destination)

    def set_assets(self, source: str, destination: str) -> None:
        if self.source_box.findText(source) < 0:
            self._fill_assets()
        self.source_box.blockSignals(True)
        self.source_box.setCurrentText(source)
        self.source_box.blockSignals(False)
        self._fill_destinations(destination)
        self._update()

    def swap(self) -> None:
        self.set_assets(self.destination_box.currentText(), self.source_box.currentText())

    def focus_entry(self) -> None:
        """F2 (Trade menu): the cursor in the size, selected."""
        self.size_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.size_edit.selectAll()

    # -- the ticket as typed ------------------------------------------------------------------

    def form(self) -> TicketForm:
        order_type: OrderType = "limit" if self.type_box.currentData() == "limit" else "market"
        end_at: datetime | None = None
        if order_type == "limit" and self.end_check.isChecked():
            seconds = self.end_edit.dateTime().toSecsSinceEpoch()
            end_at = datetime.fromtimestamp(seconds, UTC)
        source, destination = self.source_box.currentText(), self.destination_box.currentText()
        return TicketForm(
            source,
            destination,
            self.size_edit.text(),
            order_type,
            self.limit_edit.text(),
            end_at,
            pair_base(source, destination, self._bridge.pair_info) if source else "",
        )

    def _update(self) -> None:
        """Inputs changed: enable what applies, read the ticket, ask for a fresh estimate."""
        source, destination = self.source_box.currentText(), self.destination_box.currentText()
        limit = self.type_box.currentData() == "limit"
        self.limit_edit.setEnabled(limit)
        self.end_check.setEnabled(limit)
        self.end_edit.setEnabled(limit and self.end_check.isChecked())
        self.size_unit.setText(source)
        self.limit_unit.setText(
            limit_unit(source, destination, self._bridge.pair_info) if source else ""
        )
        try:
            ticket = self.form().build()
        except TicketError as exc:
            self._ticket = None
            blank = not self.size_edit.text().strip() and exc.field == "size"
            _styled(self.input_error, "error", "" if blank else exc.message)
            self.wire_label.clear()
            self.estimate_label.clear()
            self.client_id_label.setText("—")
            self._refresh_predictions()
            return
        _styled(self.input_error, "info", "")
        self.wire_label.setText(wire_text(ticket, self._bridge.pair_info))
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
        level = "info" if result.ok else "warning"
        _styled(self.estimate_label, level, estimate_text(result, self._context.precision))
        self._refresh_predictions()

    def _on_balances(self, balances: Balances) -> None:
        self._balances = balances
        self._refresh_predictions()

    def _on_top_of_book(self, books: dict[str, TopOfBook]) -> None:
        self._tops = books
        self._refresh_predictions()

    def _on_sending(self, sending: bool) -> None:
        self._desk_sending = sending
        self._sync_send()

    def _checks(self, ticket: TicketInput, override: bool) -> list[Check]:
        """The pre-trade checks on the market this panel was last told about."""
        return checks(ticket, self._balances, self._tops, self._desk.limits, override=override)

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings > checks: the pre-trade limits, at once."""
        self._desk.limits = prefs.check_limits()
        self._refresh_predictions()

    def _refresh_predictions(self) -> None:
        ticket = self._ticket
        estimate = None
        if ticket is not None and self._estimate is not None and self._estimate.ticket == ticket:
            estimate = self._estimate.estimate
        balances = self._balances
        what = None
        if ticket is not None and balances is not None:
            what = what_if(ticket, balances, estimate)
        for cells, row in zip(
            self.what_if_cells,
            what_if_rows(what, self._context.precision) if what is not None else [],
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
            _styled(self.verdict_label, *what_if_verdict(what))
        found = self._checks(ticket, self.override_check.isChecked()) if ticket is not None else []
        blocked = any(check.code == "fat_finger" for check in found)
        self.override_check.setVisible(blocked)
        if not blocked:
            self.override_check.setChecked(False)
        lines = checks_text(found)
        self.checks_label.setText("<br>".join(_check_line(level, text) for level, text in lines))
        self._sync_send()

    def _sync_send(self) -> None:
        busy = self._in_flight or self._confirming or self._desk_sending
        self.send_button.setEnabled(not busy)
        self.send_button.setText(
            "Sending…" if busy and not self._confirming else "Send order  (Enter)"
        )

    # -- sending ------------------------------------------------------------------------------

    def submit(self) -> None:
        """Enter or the button: check, confirm (setting), send. Does nothing while an order
        is in flight or being confirmed."""
        if self._in_flight or self._confirming or self._desk_sending:
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
            self._sync_send()
            details = []
            if self._estimate is not None and self._estimate.ticket == ticket:
                details.append(estimate_text(self._estimate, self._context.precision))
            details.append(f"client id {self._desk.client_order_id_for(ticket)}")
            self.confirmation = confirm_order(
                self,
                self._desk.describe(ticket),
                details,
                [check.message for check in found],
                lambda send: self._confirmed(send, ticket, override),
            )
            return
        self._send(ticket, override)

    def _confirm_wanted(self) -> bool:
        value = self._context.settings.value(CONFIRM_KEY, True)
        return value not in (False, "false", "0", 0)

    def _confirmed(self, send: bool, ticket: TicketInput, override: bool) -> None:
        self._confirming = False
        if send:
            self._send(ticket, override)
        else:
            self._sync_send()
            _styled(self.outcome_label, "info", "Not sent.")
            self.size_edit.setFocus()

    def _send(self, ticket: TicketInput, override: bool) -> None:
        self._in_flight = True
        self._last_sent = self._desk.client_order_id_for(ticket)
        self._sync_send()
        _styled(self.outcome_label, "info", f"Sending {self._desk.describe(ticket)} …")
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
        order = result.order
        if result.status == "filled" and order is not None:
            price = order.result.price
            total = order.result.total
            text = (
                f"Filled: sold {order.size}"
                + (f" for {total}" if total is not None else "")
                + (f" at {price}" if price is not None else "")
                + f" · order {order.order_id}"
            )
        elif result.status == "submitted" and order is not None:
            text = f"Resting: {result.message} · order {order.order_id}"
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
            "destination": self.destination_box,
            "source": self.source_box,
        }.get(exc.field, self.size_edit)
        target.setFocus()

    def _task_failed(self, what: str, exc: BaseException) -> None:
        self._in_flight = False
        self._sync_send()
        _styled(self.outcome_label, "error", f"{what} failed: {exc}")
        self._context.notify(LogLevel.ERROR, f"{what} failed: {exc}")
