"""Status lines in the trader's terms: a failure's request URL is shown as the service's host."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.ui.level_text import show_level


def test_a_status_line_shows_the_service_not_the_request_url(qtbot: QtBot) -> None:
    """Every dock's status line goes through ``show_level``."""
    label = QLabel()
    qtbot.addWidget(label)
    show_level(
        label,
        "Orders not read: cannot reach http://127.0.0.1:4321/api/v1/routing/order/account/a: "
        "connection refused",
        "error",
    )
    assert label.text() == (
        "Orders not read: cannot reach the service at 127.0.0.1:4321: connection refused"
    )
