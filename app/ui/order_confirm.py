"""The confirmation before an order leaves: the trade in words, its indicative result and the
warnings, with Send as the default button (Enter) and Cancel on Escape. Window-modal and
opened with ``open()``: the event loop keeps running while it is up (qt-asyncio-notes.md). The
warnings are in the warning colour of the theme in force when it opens (being modal, no theme
switch happens while it is up)."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

from app.ui.palette import current_palette

SETTINGS_KEY = "orders/confirm"  # on by default; Edit > Settings switches it


def update_confirmation(
    box: QMessageBox, summary: str, details: list[str], warnings: list[str]
) -> None:
    """The box's text, again: the ticket refreshes it while it is up (a fresher estimate)."""
    lines = [f"<b>{html.escape(summary)}</b>"]
    lines += [html.escape(line) for line in details if line]
    colour = current_palette().warning.name()
    lines += [f"<span style='color:{colour}'>⚠ {html.escape(w)}</span>" for w in warnings]
    box.setText("<br>".join(lines))


def confirm_order(
    parent: QWidget,
    summary: str,
    details: list[str],
    warnings: list[str],
    answer: Callable[[bool], None],
) -> QMessageBox:
    """A confirmation box, already open; ``answer(True)`` once on Send, ``answer(False)`` on
    Cancel, Escape or close."""
    box = QMessageBox(parent)
    box.setObjectName("orderConfirmation")
    box.setWindowTitle("Send this order?")
    box.setIcon(QMessageBox.Icon.Question)
    box.setTextFormat(Qt.TextFormat.RichText)
    update_confirmation(box, summary, details, warnings)
    send = box.addButton("&Send", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(send)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    answered: list[bool] = []

    def settle(send_it: bool) -> None:
        if not answered:
            answered.append(send_it)
            answer(send_it)

    def clicked(button: QAbstractButton) -> None:
        settle(button is send)

    box.buttonClicked.connect(clicked)
    box.finished.connect(lambda _: settle(False))  # closed without a click: not sent
    box.open()
    return box
