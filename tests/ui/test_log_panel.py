"""The log panel follows new lines (the "Exported …" confirmations appear there) unless the
trader scrolled up to read; back at the bottom, it follows again. Real key events scroll."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.domain import utc_now
from app.services.log_events import LogEvent, LogLevel
from app.ui.panels.log import LogPanel


def line(number: int) -> LogEvent:
    return LogEvent(utc_now(), LogLevel.INFO, f"line {number}")


def at_bottom(panel: LogPanel) -> bool:
    bar = panel.view.verticalScrollBar()
    return bar.maximum() > 0 and bar.value() == bar.maximum()


def following(panel: LogPanel) -> bool:
    return panel.following


def test_the_log_follows_new_lines_unless_scrolled_up(qtbot: QtBot, app: QApplication) -> None:
    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.resize(500, 160)
    panel.show()
    qtbot.waitExposed(panel)
    for number in range(60):
        panel.add(line(number))
    qtbot.waitUntil(lambda: at_bottom(panel))
    assert panel.following

    panel.view.setFocus()
    QTest.keyClick(panel.view, Qt.Key.Key_Home)  # a read-only view scrolls to the top
    qtbot.waitUntil(lambda: panel.view.verticalScrollBar().value() == 0)
    assert not following(panel)
    panel.add(line(60))
    panel.add(line(61))
    QApplication.processEvents()
    assert panel.view.verticalScrollBar().value() == 0  # left where the trader reads

    QTest.keyClick(panel.view, Qt.Key.Key_End)
    qtbot.waitUntil(lambda: at_bottom(panel))
    assert panel.following
    maximum = panel.view.verticalScrollBar().maximum()
    panel.add(line(62))
    qtbot.waitUntil(lambda: panel.view.verticalScrollBar().maximum() > maximum)
    qtbot.waitUntil(lambda: at_bottom(panel))
    last = panel.view.document().lastBlock().text()
    assert last.endswith("line 62")


def test_lines_that_came_while_hidden_are_in_sight_when_shown(
    qtbot: QtBot, app: QApplication
) -> None:
    """The log dock is often tabbed behind another: the lines (an "Exported …" among them)
    come while it is hidden, and the newest is what the trader sees on opening it."""
    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.resize(500, 160)
    for number in range(60):
        panel.add(line(number))
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: at_bottom(panel))
    assert panel.view.document().lastBlock().text().endswith("line 59")
