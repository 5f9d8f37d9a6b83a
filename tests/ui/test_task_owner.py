"""Tasks owned by a widget: a failure reaches the widget's handler while the widget lives, and
only the log once it is gone (its handler would touch deleted Qt objects)."""

from __future__ import annotations

import logging

import pytest
import shiboken6
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot
from qasync import QEventLoop

from app.ui.tasks import TaskOwner


def test_a_failure_reaches_the_living_widget(qtbot: QtBot, qloop: QEventLoop) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    owner = TaskOwner(label, lambda what, exc: label.setText(f"{what}: {exc}"))

    async def fail() -> None:
        raise ValueError("no answer")

    task = owner.spawn(fail(), "reading")
    qtbot.waitUntil(lambda: label.text() != "")
    assert task.done() and label.text() == "reading: no answer"


def test_a_failure_after_the_widget_went_is_only_logged(
    qtbot: QtBot, qloop: QEventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    label = QLabel()
    told: list[str] = []

    def handler(what: str, exc: BaseException) -> None:
        told.append(what)
        label.setText(str(exc))  # raises RuntimeError on a deleted label

    owner = TaskOwner(label, handler)

    async def fail_as_the_widget_goes() -> None:
        shiboken6.delete(label)  # the widget is destroyed while its task is still running
        raise ValueError("late failure")

    with caplog.at_level(logging.ERROR, logger="tradeterm.ui"):
        task = owner.spawn(fail_as_the_widget_goes(), "reading")
        qtbot.waitUntil(lambda: task.done() and owner.running == 0)
    assert told == []
    assert [record.getMessage() for record in caplog.records] == ["reading failed"]
