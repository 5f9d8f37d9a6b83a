"""Stopping the sandbox turns the state degraded, then offline, without freezing the window;
starting it again recovers by itself."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.services.connect import connect
from app.services.health import Health
from app.services.session import FeedIntervals
from app.ui.bridge import SessionBridge
from app.ui.main_window import Area, MainWindow, PanelSpec
from app.ui.panels.base import PanelContext
from app.ui.qt import QEventLoop
from tests.harness import SandboxProcess, free_port
from tests.ui.conftest import run


@pytest.mark.slow
def test_outage_degrades_then_goes_offline_and_recovers(
    qtbot: QtBot, qloop: QEventLoop, settings: QSettings, tmp_path: Path
) -> None:
    port, db = free_port(), str(tmp_path / "outage.db")
    first = SandboxProcess("--port", str(port), db=db).start()
    second: SandboxProcess | None = None
    session = run(
        qtbot,
        connect(
            first.url, "demo", "demo", "demo", sandbox=True, intervals=FeedIntervals(0.2, 0.6, 0.3)
        ),
    )
    bridge = SessionBridge(session)
    context = PanelContext(bridge, Precision(), settings, lambda *_: None)
    window = MainWindow(
        context, [PanelSpec("x", "X", Area.LeftDockWidgetArea, lambda _: QLabel("x"))], "test"
    )
    qtbot.addWidget(window)
    window.show()
    beats: list[float] = []
    heartbeat = QTimer(window)
    heartbeat.timeout.connect(lambda: beats.append(time.monotonic()))
    heartbeat.start(10)
    seen: list[Health] = []
    bridge.health.connect(lambda state: seen.append(state.health))
    kinds: list[str] = []
    bridge.logEvent.connect(lambda event: kinds.append(event.kind) if event.kind else None)
    elsewhere = QLabel("another application's window")  # the trader looks away
    qtbot.addWidget(elsewhere)
    try:
        run(qtbot, session.start())
        qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=10000)
        elsewhere.show()
        elsewhere.activateWindow()
        qtbot.waitUntil(lambda: not window.isActiveWindow())
        first.stop()
        qtbot.waitUntil(lambda: "OFFLINE" in window.status.state.text(), timeout=15000)
        after_live = seen[len(seen) - 1 - seen[::-1].index(Health.LIVE) :]
        assert after_live.index(Health.DEGRADED) < after_live.index(Health.OFFLINE)
        beats.clear()
        qtbot.waitUntil(lambda: len(beats) > 20, timeout=2000)  # the loop keeps answering
        gaps = [b - a for a, b in itertools.pairwise(beats)]
        assert max(gaps) < 0.5
        second = SandboxProcess("--port", str(port), db=db).start()
        qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=40000)
        assert kinds == ["offline", "online"]
        # the trader was away: both reached the desktop as well as the window
        assert [m.kind for m in window.notifier.shown_tray] == ["offline", "online"]
    finally:
        heartbeat.stop()
        run(qtbot, session.stop())
        run(qtbot, session.client.aclose())
        first.close()
        if second is not None:
            second.close()
