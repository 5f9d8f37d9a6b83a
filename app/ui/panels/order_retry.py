"""The order ticket's offer after a refusal for credit outside business hours: the same order,
queued as a parent that is sent when the credit window opens (``app.services.algos``). Asked
first, in words; never started without the trader."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from app.domain import format_timestamp
from app.services.algos.specs import AlgoSpec


def retry_words(spec: AlgoSpec) -> str:
    """The queued order in the trader's terms: what, at what price, when, until when."""
    verb = spec.pair_side.verb
    price = (
        f"at a limit of {spec.limit_price} {spec.pair_side.pair.quote}"
        if spec.limit_price is not None
        else f"marketable (the touch ± {spec.collar_bps} bps)"
    )
    when = (
        f"when the credit window opens ({spec.window})"
        if spec.window
        else (f"trying again every {spec.retry_seconds // 60} minutes until credit is granted")
    )
    until = format_timestamp(spec.deadline) if spec.deadline else "—"
    return (
        f"{verb} {spec.pair_side.pair.base} on {spec.pair} with {spec.amount} {spec.source}, "
        f"{price}, {when}; given up at {until} (server time) if still refused.\n\n"
        "Held in this terminal: it is sent only while the terminal runs."
    )


def ask_retry(parent: QWidget, spec: AlgoSpec, start: Callable[[AlgoSpec], None]) -> QMessageBox:
    """The confirmation; Queue starts exactly ``spec`` (``start``), Cancel nothing."""
    box = QMessageBox(parent)
    box.setObjectName("creditRetryConfirmation")
    box.setWindowTitle("Send when credit opens?")
    box.setIcon(QMessageBox.Icon.Question)
    box.setText("Queue this order for the credit window?")
    box.setInformativeText(retry_words(spec))
    queue = box.addButton("Queue it", QMessageBox.ButtonRole.AcceptRole)
    queue.setObjectName("creditRetryQueue")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.buttonClicked.connect(lambda button: start(spec) if button is queue else None)
    box.finished.connect(lambda _: box.deleteLater())
    box.open()
    return box
