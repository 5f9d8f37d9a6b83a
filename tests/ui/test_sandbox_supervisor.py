"""The embedded sandbox killed under the window: the trader is told at once, Restart in the
status bar (a real click) brings it back on the same database and URL."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.services.log_events import LogLevel
from app.services.sandbox_child import SandboxChild
from app.ui.sandbox_supervisor import SandboxSupervisor
from app.ui.status_bar import StatusBar
from app.ui.tasks import TaskOwner
from tests.helpers.live import Live
from tests.helpers.qt import run


@pytest.mark.slow
def test_a_killed_sandbox_is_named_and_restarted_from_the_status_bar(
    qtbot: QtBot, live: Live, tmp_path: Path
) -> None:
    child = SandboxChild(str(tmp_path / "embedded.db"))
    url = run(qtbot, child.start(), timeout=30)
    status = StatusBar(live.bridge, "9.9.9")
    qtbot.addWidget(status)
    status.resize(1280, 30)
    status.show()
    width = status.sizeHint().width()
    notices: list[tuple[LogLevel, str]] = []
    SandboxSupervisor(
        child, status, lambda level, text: notices.append((level, text)), TaskOwner(status)
    )
    try:
        assert child._process is not None
        os.kill(child._process.pid, signal.SIGKILL)
        qtbot.waitUntil(lambda: status.restart_sandbox.isVisible(), timeout=5_000)
        assert notices == [
            (
                LogLevel.ERROR,
                "The embedded sandbox stopped: killed by signal 9 (SIGKILL). Restart it from "
                "the status bar (same database).",
            )
        ]
        assert status.sizeHint().width() == width  # its room was kept: nothing moved
        QTest.mouseClick(status.restart_sandbox, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not status.restart_sandbox.isVisible(), timeout=30_000)
        assert child.running and child.url == url
        assert notices[-1] == (
            LogLevel.SUCCESS,
            "The embedded sandbox is running again (same database)",
        )
    finally:
        run(qtbot, child.stop(), timeout=20)
