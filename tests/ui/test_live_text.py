"""``TextHost``: a label whose text changes keeps the window's layout still; a word-wrapped one
changes its height (one relayout) only when its number of lines changes."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.ui.widgets.live_text import TextHost
from tests.helpers.qt import filter_of


def hosted(qtbot: QtBot, wrap: bool) -> tuple[QWidget, TextHost, QLabel]:
    window = QWidget()
    qtbot.addWidget(window)
    label = QLabel("updated 10:15:00")
    label.setWordWrap(wrap)
    layout = QVBoxLayout(window)
    host = TextHost(label, "20 deposits, newest first · updated 00:00:00", window)
    layout.addWidget(host)
    layout.addWidget(QLabel("below", window), 1)
    window.resize(400, 200)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)  # the show's own layout requests are handled
    return window, host, label


def test_a_new_time_on_a_wrapped_status_line_does_not_relayout_the_window(qtbot: QtBot) -> None:
    window, host, label = hosted(qtbot, wrap=True)
    one_line = host.height()
    requests: list[int] = []
    window.installEventFilter(filter_of(requests, QEvent.Type.LayoutRequest))
    for second in range(10, 20):
        label.setText(f"updated 10:15:{second}")
        qtbot.wait(10)
    assert requests == []
    assert host.height() == one_line


def test_a_wrapped_label_grows_to_its_lines_and_back(qtbot: QtBot) -> None:
    _window, host, label = hosted(qtbot, wrap=True)
    one_line = host.height()
    label.setText("could not reach the service; retrying " * 12)
    qtbot.waitUntil(lambda: host.height() > 2 * one_line)
    assert host.height() >= label.heightForWidth(host.width())
    label.setText("updated 10:15:15")
    qtbot.waitUntil(lambda: host.height() == one_line)


def test_a_one_line_host_keeps_its_height_whatever_the_text(qtbot: QtBot) -> None:
    window, host, label = hosted(qtbot, wrap=False)
    height = host.height()
    requests: list[int] = []
    window.installEventFilter(filter_of(requests, QEvent.Type.LayoutRequest))
    label.setText("Total: 1,234,567,890.12 USD and a much longer text than the sample " * 3)
    qtbot.wait(20)
    assert requests == []
    assert host.height() == height
