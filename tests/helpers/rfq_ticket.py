"""Steps on the RFQ ticket panel of a live session: open it, request a quote, read what the sandbox
was asked to accept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDockWidget, QLineEdit, QMainWindow
from pytestqt.qtbot import QtBot

from app.services.rfq_desk import LiveQuote, Side
from app.ui.panels.rfq_ticket import RfqTicketPanel
from tests.harness import ADMIN_TOKEN, SandboxProcess
from tests.helpers.live import Live

PAIR = "BTC/USD"


SIZE = "0.01"


KEYS: dict[Side, Qt.Key] = {"buy": Qt.Key.Key_B, "sell": Qt.Key.Key_S}


def open_ticket(qtbot: QtBot, live: Live) -> Ticket:
    """The panel in a dock of a shown, active main window, as the terminal docks it."""
    window = QMainWindow()
    qtbot.addWidget(window)
    elsewhere = QLineEdit(window)
    elsewhere.setObjectName("elsewhere")
    window.setCentralWidget(elsewhere)
    dock = QDockWidget("RFQ", window)
    dock.setObjectName("dock_rfqTicket")
    panel = RfqTicketPanel(live.context, live.desks.rfq)
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resize(1100, 700)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    elsewhere.setFocus()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    return Ticket(window, dock, panel, elsewhere, live)


def request(qtbot: QtBot, panel: RfqTicketPanel, size: str = SIZE, pair: str = PAIR) -> LiveQuote:
    """Enter pair and size and click Request; the quote the panel then shows."""
    before = panel.live_quote
    panel.pair_box.setEditText(pair)
    panel.size_edit.setText(size)
    QTest.mouseClick(panel.request_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live_quote is not None and panel.live_quote is not before)
    live = panel.live_quote
    assert live is not None
    return live


def accept_posts(sandbox: SandboxProcess, account: str) -> list[dict[str, Any]]:
    """The accept requests the sandbox received for ``account`` (logged while a rule is set)."""
    with sandbox.admin() as admin:
        response = admin.get(
            "/api/v1/sandbox/admin/faults", headers={"X-Sandbox-Admin": ADMIN_TOKEN}
        )
        assert response.status_code == 200, response.text
        logged: list[dict[str, Any]] = response.json()["requests"]
    return [
        r
        for r in logged
        if r["method"] == "POST" and account in r["path"] and r["path"].endswith("/accept")
    ]


@dataclass
class Ticket:
    window: QMainWindow
    dock: QDockWidget
    panel: RfqTicketPanel
    elsewhere: QLineEdit  # a widget outside the ticket that has the focus at first
    live: Live
