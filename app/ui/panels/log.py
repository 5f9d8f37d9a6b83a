"""Every error and notable event, with its time: the terminal's own journal on screen."""

from __future__ import annotations

import html

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from app.services.session import LogEvent

MAX_LINES = 5000
COLOURS = {"error": "#e5534b", "warning": "#d4a72c", "success": "#2e9d57", "info": ""}


class LogPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setMaximumBlockCount(MAX_LINES)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.lines: list[str] = []  # plain text of what was shown, newest last (for tests)

    def add(self, event: LogEvent) -> None:
        stamp = event.at.astimezone().strftime("%H:%M:%S.%f")[:-3]
        text = f"{stamp}  {event.level.upper():<7}  {event.message}"
        self.lines = [*self.lines[-MAX_LINES + 1 :], text]
        colour = COLOURS.get(event.level, "")
        escaped = html.escape(text)
        self.view.appendHtml(
            f'<span style="color:{colour}">{escaped}</span>' if colour else escaped
        )
