"""The ledger dock against the stand-in service (tests/standin), whose ``max`` counts entries
and whose pages run oldest first: clicking Load more reads every entry once, trades whole, the
status line says which way Load more reads; a service that ignores ``startAtOrdering`` ends the
paging with a note on the status line instead of reading the same page for ever."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.services.ledger_pages import STALLED_NOTE, entry_key
from app.services.session import Environment, TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.ledger import LedgerPanel
from app.ui.qt import QEventLoop
from tests.helpers.qt import run
from tests.standin.server import URL, Standin, StandinConfig

WAIT_MS = 10_000
PanelFor = Callable[[Standin], LedgerPanel]


@pytest.fixture
def panel_for(qtbot: QtBot, qloop: QEventLoop, settings: QSettings) -> Iterator[PanelFor]:
    """``panel_for(standin)``: a ledger dock over a logged-in client of ``standin`` (a session
    never started: only the dock reads)."""
    opened: list[tuple[ServiceClient, SessionBridge]] = []

    def make(standin: Standin) -> LedgerPanel:
        client = ServiceClient(ClientSettings(URL), transport=standin.transport())
        run(qtbot, client.login("trader", "secret", standin.config.account))
        environment = Environment(URL, "trader", standin.config.account, sandbox=False)
        bridge = SessionBridge(Terminal(TerminalSession(client, environment)))
        opened.append((client, bridge))
        context = PanelContext(bridge, Precision(), settings, lambda level, text: None)
        panel = LedgerPanel(context)
        qtbot.addWidget(panel)
        panel.resize(1500, 400)
        panel.show()
        qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not None, timeout=WAIT_MS)
        return panel

    yield make
    for client, bridge in opened:
        run(qtbot, client.aclose())
        bridge.deleteLater()


def click_load_more(qtbot: QtBot, panel: LedgerPanel) -> None:
    before = panel.snapshot
    QTest.mouseClick(panel.load_more_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not before, timeout=WAIT_MS)


def test_load_more_reads_all_300_entries_with_trades_whole(
    qtbot: QtBot, panel_for: PanelFor
) -> None:
    standin = Standin(StandinConfig(max_counts="entries", order="ascending"))
    panel = panel_for(standin)
    assert panel.model.rowCount() == 100
    assert panel.load_more_button.isEnabled()
    assert "newer ones: Load more" in panel.status_label.text()
    clicks = 0
    while panel.load_more_button.isEnabled():
        clicks += 1
        assert clicks < 10
        click_load_more(qtbot, panel)
    assert panel.model.rowCount() == 300
    rows = [panel.model.ledger_row(row) for row in range(300)]
    assert len({entry_key(row.entry) for row in rows}) == 300
    assert [row.entry.ordering for row in rows] == sorted(
        (entry.ordering for entry in standin.ledger), reverse=True
    )
    assert all(row.size == 2 for row in rows if row.entry.event_type == "trade")
    assert "Load more" not in panel.status_label.text()
    assert STALLED_NOTE not in panel.status_label.text()


def test_a_service_that_ignores_the_start_ends_with_a_note(
    qtbot: QtBot, panel_for: PanelFor
) -> None:
    standin = Standin(StandinConfig(max_counts="entries", order="descending"))
    standin.config.honours_start = False
    panel = panel_for(standin)
    assert panel.load_more_button.isEnabled()
    assert "older ones: Load more" in panel.status_label.text()
    asked = len(standin.ledger_queries)
    click_load_more(qtbot, panel)
    assert not panel.load_more_button.isEnabled()
    assert STALLED_NOTE in panel.status_label.text()
    assert panel.model.rowCount() == 100
    assert len(standin.ledger_queries) - asked <= 2
