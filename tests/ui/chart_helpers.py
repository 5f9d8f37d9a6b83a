"""Helpers shared by the chart tests (the mid chart and the depth chart's price plots)."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QPoint
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.ui.panels.chart import ChartPanel


def hover(qtbot: QtBot, panel: ChartPanel, point: QPoint, word: str) -> QPoint:
    """Move the mouse to ``point`` until the readout names ``word``; the point the move was
    taken at. pyqtgraph drops a move that comes within 10 ms of the last (its mouse rate limit)
    and Qt a move to the same point: move again, a pixel apart, until one is taken (the first
    move alone was flaky)."""
    nudges = itertools.count()
    last = [point]

    def taken() -> bool:
        if word in panel.readout.text():
            return True
        last[0] = point + QPoint(next(nudges) % 2, 0)
        QTest.mouseMove(panel.plots.viewport(), last[0])
        return False

    qtbot.waitUntil(taken)
    return last[0]
