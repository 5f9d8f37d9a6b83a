"""The order ticket's screen: one ``Preview`` rendered on the ticket's widgets (the fields as
the ticket holds them, the input error, the wire details, the client id, the what-if, the
checks, the estimate with its age, Send's words) and an answer in words. Nothing here decides
anything: every number and verdict comes from the preview (``app.services.order_ticket``)."""

from __future__ import annotations

import html
from decimal import Decimal

from PySide6.QtCore import QDateTime, QTimeZone
from PySide6.QtWidgets import QLabel, QWidget

from app.domain.display import Precision
from app.services.order_desk import SubmitResult
from app.services.order_intent import Preview, TicketFields, TicketState
from app.services.order_words import action
from app.ui.level_text import show_level
from app.ui.palette import level_colour
from app.ui.panels.order_ticket_form import OrderTicketForm
from app.ui.panels.order_ticket_view import (
    STALE_AFTER,
    amount_words,
    checks_text,
    conversion_text,
    estimate_text,
    limit_fill_text,
    rest_text,
    what_if_rows,
    what_if_verdict,
    wire_text,
)
from app.ui.timers import make_timer

OUTCOME_LEVEL = {"filled": "success", "submitted": "success", "unknown": "warning"}


def styled(label: QLabel, level: str, text: str) -> None:
    """``text`` in the colour of ``level``, kept on the label for a theme switch."""
    show_level(label, text, level)


def _check_line(level: str, text: str) -> str:
    """One pre-trade check as rich text: ✗ for a block, ⚠ for a warning, in its colour."""
    colour = level_colour(level)
    line = f"{'✗' if level == 'error' else '⚠'} {html.escape(text, quote=False)}"
    return line if colour is None else f"<span style='color:{colour.name()}'>{line}</span>"


def _same_predictions(before: Preview, after: Preview) -> bool:
    """``after`` changed only the state, the health or the desk's business (the ticket keeps
    the very same prediction values then)."""
    return (
        after.fields is before.fields
        and after.snapshot is before.snapshot
        and after.intent is before.intent
        and after.estimate is before.estimate
        and after.checks is before.checks
        and after.what_if is before.what_if
    )


class TicketScreen(OrderTicketForm):
    """The ticket's widgets showing one preview at a time (``show_preview``)."""

    def __init__(self, precision: Precision, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._precision = precision
        #: An estimate older than this (seconds) is not presented as the current price.
        self.stale_after = STALE_AFTER
        self._preview: Preview | None = None
        self._form_shown: tuple[TicketFields, str] | None = None
        self._age_timer = make_timer(self, 1000, self._show_estimate)

    def preset_amounts(self, asset: str) -> tuple[Decimal, ...]:
        """The size presets of ``asset`` (the panel knows them)."""
        return ()

    def use_preset(self, amount: Decimal) -> None:
        """A preset button was clicked (the panel forwards it)."""

    def show_preview(self, preview: Preview, *, again: bool = False) -> None:
        """One preview on screen: the fields, the form's own lines (on an edit only), the
        predictions (unless only the state changed: a send's first steps stay light), the
        estimate and Send. ``again``: everything, as after a theme switch or a refused edit."""
        last, self._preview = self._preview, preview
        if last is not None and last.fields != preview.fields:
            # One outcome line per ticket: an edit replaces the last answer or note with
            # what this edit did (a conversion, a re-seeded limit), or nothing.
            level, text = preview.note or ("info", "")
            styled(self.outcome_label, level, text)
        if again or last is None or not _same_predictions(last, preview):
            self._show_fields(preview.fields)
            request = preview.request
            shown = (preview.fields, "" if request is None else request.client_order_id)
            if shown != self._form_shown:
                self._form_shown = shown
                self._show_form(preview)
            self._show_predictions(preview)
        self._show_estimate()
        self._show_send(preview)

    def _show_fields(self, fields: TicketFields) -> None:
        """The widgets show the ticket's fields (quietly: this is not the trader typing)."""
        widgets: list[QWidget] = [self.pair_box, self.size_edit, self.limit_edit, self.type_box]
        widgets += [self.end_check, self.end_edit, self.override_check]
        for widget in widgets:
            widget.blockSignals(True)
        if self.pair_box.currentText() != fields.pair and self.pair_box.findText(fields.pair) >= 0:
            self.pair_box.setCurrentText(fields.pair)
        (self.buy_button if fields.side == "buy" else self.sell_button).setChecked(True)
        for edit, text in ((self.size_edit, fields.size), (self.limit_edit, fields.limit)):
            if edit.text() != text:
                edit.setText(text)
        self.type_box.setCurrentIndex(self.type_box.findData(fields.order_type))
        self.end_check.setChecked(fields.end_enabled)
        if fields.end_at is not None:
            when = QDateTime.fromSecsSinceEpoch(int(fields.end_at.timestamp()), QTimeZone.utc())
            if self.end_edit.dateTime() != when:
                self.end_edit.setDateTime(when)
        self.override_check.setChecked(fields.override)
        for widget in widgets:
            widget.blockSignals(False)
        limit = fields.order_type == "limit"
        self.limit_edit.setEnabled(limit)
        self.end_check.setEnabled(limit)
        self.end_edit.setEnabled(limit and fields.end_enabled)
        pair_side = fields.pair_side
        asset = fields.amount_in or None  # the presets are amounts of the amount's asset
        self.show_presets(asset, self.preset_amounts(asset or ""), self.use_preset)
        self.units_button.setEnabled(pair_side is not None)
        if pair_side is not None:
            pair = pair_side.pair
            self.size_unit.setText(
                f"{fields.amount_in} {amount_words(pair_side, fields.amount_in)}"
            )
            other = pair.quote if fields.amount_in == pair.base else pair.base
            self.units_button.setText(f"in {other}")
            self.units_button.setToolTip(
                f"Enter the amount in {other} instead (a typed amount is converted at the mid)"
            )
            self.limit_unit.setText(f"{pair.quote} per {pair.base}")

    def _show_form(self, preview: Preview) -> None:
        """The input error, the wire details and the client id: on an edit only (a check's
        block said on Enter stays until the trader changes something)."""
        ticket, request = preview.ticket, preview.request
        if ticket is None or request is None:
            blank = not preview.fields.size.strip()  # nothing typed yet: nothing to fault
            error = "" if blank or preview.error is None else preview.error.message
            styled(self.input_error, "error", error)
            self.wire_label.clear()
            self._form.setRowVisible(self.wire_label, False)
            self.client_id_label.setText("—")
            return
        styled(self.input_error, "info", "")
        wire = wire_text(ticket, preview.snapshot.pair_info)
        lines = [f"details: {wire}"] if wire else []
        pair_side = preview.fields.pair_side
        if preview.conversion is not None and pair_side is not None:
            lines.insert(0, conversion_text(preview.conversion, pair_side, self._precision))
        self.wire_label.setText("\n".join(lines))
        self._form.setRowVisible(self.wire_label, bool(lines))
        self.client_id_label.setText(request.client_order_id)

    def _show_predictions(self, preview: Preview) -> None:
        what, precision = preview.what_if, self._precision
        rows = what_if_rows(what, precision) if what is not None else []
        for cells, row in zip(self.what_if_cells, rows, strict=False):
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
            styled(self.verdict_label, *what_if_verdict(what, precision))
        ticket = preview.ticket
        if ticket is None:
            self.rest_label.clear()
        else:
            pairs = preview.snapshot.pair_info
            text = rest_text(ticket, preview.fills, pairs, preview.tops, precision)
            if preview.fields.marketable and preview.rests:
                # hit/lift: the book moved past the collar; it ends within seconds
                text = "Does not reach the touch now: it expires within seconds unless it fills."
            styled(self.rest_label, "warning" if preview.rests else "info", text)
        self.override_check.setVisible(preview.fat_finger)
        lines = checks_text(list(preview.checks))
        self.checks_label.setText("<br>".join(_check_line(level, text) for level, text in lines))

    def _show_estimate(self) -> None:
        """The estimate with its age (the timer calls this every second); past
        ``stale_after`` it says it is stale. A limit order that rests shows what it gets at
        its limit, not the market's price."""
        preview = self._preview
        if preview is None:
            return
        ticket, estimate = preview.ticket, preview.estimate
        precision, pairs = self._precision, preview.snapshot.pair_info
        if ticket is None:
            self.estimate_label.clear()
            self._age_timer.stop()
        elif preview.rests:
            styled(self.estimate_label, "info", limit_fill_text(ticket, pairs, precision))
        elif estimate is None:
            self.estimate_label.setText("≈ …")
            self._age_timer.stop()
        else:
            age = estimate.age()
            text = estimate_text(estimate, pairs, precision, age)
            level = "info" if estimate.ok else "warning"
            if estimate.ok and age > self.stale_after:
                level = "warning"
                text += " (stale: waiting for a fresh price)"
            styled(self.estimate_label, level, text)
            if not self._age_timer.isActive():
                self._age_timer.start()

    def _show_send(self, preview: Preview) -> None:
        self.send_button.setEnabled(preview.sendable)
        ticket = preview.ticket
        confirming = preview.state is TicketState.CONFIRMING
        if not confirming and (preview.state is TicketState.SENDING or preview.busy):
            text = "Sending…"
        elif preview.blocked is not None:
            text = f"{preview.blocked} — cannot send"
        elif ticket is not None:
            text = action(ticket, preview.snapshot.pair_info, self._precision)
        else:
            pair_side = preview.fields.pair_side
            text = "Send" if pair_side is None else f"{pair_side.verb} {pair_side.pair.base}"
        self.send_button.setText(text)

    def show_result(self, result: SubmitResult) -> None:
        """The answer to the last send, in words and in its level's colour."""
        level = OUTCOME_LEVEL.get(result.status, "error")
        if result.status in ("filled", "submitted"):
            text = result.message  # "Bought … · order …" / "Resting: … · order …"
        elif result.status == "unknown":
            text = f"Outcome unknown: {result.message}. Looking the order up…"
        elif result.status == "failed":
            text = f"Failed: {result.message}"
        else:
            text = f"Refused by the service: {result.message}"
        styled(self.outcome_label, level, text)
