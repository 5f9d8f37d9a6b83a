"""Qt steps the UI tests share: running a coroutine on the Qt loop, showing a widget, real mouse
presses and event counters."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import (
    QEvent,
    QObject,
    QPoint,
    Qt,
)
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.ui.panels.record_parts import RecordTable

T = TypeVar("T")


W = TypeVar("W", bound=QWidget)


def shown(qtbot: QtBot, widget: W, width: int, height: int) -> W:
    """``widget`` at ``width`` x ``height``, shown and closed with the test: how a dock test
    opens its panel."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    return widget


def run(qtbot: QtBot, coro: Coroutine[Any, Any, T], timeout: float = 15.0) -> T:
    """Run ``coro`` on the Qt loop, waiting with qtbot (Qt and asyncio both keep running)."""
    task = asyncio.get_event_loop().create_task(coro)
    qtbot.waitUntil(task.done, timeout=int(timeout * 1000))
    return task.result()


def right_click(widget: QWidget, where: QPoint) -> None:
    """A right click: the press and release, then the context menu event the platform sends
    for it (QTest's synthetic press does not make one)."""
    QTest.mouseClick(widget, Qt.MouseButton.RightButton, pos=where)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, where, widget.mapToGlobal(where))
    QApplication.sendEvent(widget, event)


class _Counter(QObject):
    def __init__(self, found: list[int], kind: QEvent.Type) -> None:
        super().__init__()
        self.found, self.kind = found, kind

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == self.kind:
            self.found.append(1)
        return False


_filters: list[_Counter] = []


def filter_of(found: list[int], kind: QEvent.Type) -> _Counter:
    counter = _Counter(found, kind)
    _filters.append(counter)  # kept alive for the test
    return counter


def click_header(table: RecordTable, column: int) -> None:
    header = table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))


def type_into(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    edit.clear()
    QTest.keyClicks(edit, text)
