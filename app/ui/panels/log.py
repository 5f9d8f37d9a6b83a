"""Every error and notable event, with its time: the terminal's own journal on screen.

Errors, warnings and successes are in the palette's colours for them; a theme switch recolours
the lines already shown (one pass over the document, at most ``MAX_LINES`` blocks).

The view follows new lines (confirmations such as "Exported …" appear here) unless the trader
scrolled up to read: then it stays put, and follows again once scrolled back to the bottom.
Lines are in the shipped fixed-pitch font, so the columns of time and level line up.
"""

from __future__ import annotations

import html

from PySide6.QtGui import QBrush, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from app.services.log_events import LogEvent
from app.ui.fonts import number_font
from app.ui.palette import TradePalette, follow_palette, level_colour

MAX_LINES = 5000


class LogPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setMaximumBlockCount(MAX_LINES)
        self.view.setFont(number_font())
        #: Whether the view keeps the newest line in sight (the scroll bar is at its end).
        self.following = True
        bar = self.view.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._grew)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.lines: list[str] = []  # plain text of what was shown, newest last (for tests)
        self.levels: list[str] = []  # the level of each line in ``lines``
        follow_palette(self.set_palette)

    def add(self, event: LogEvent) -> None:
        stamp = event.at.astimezone().strftime("%H:%M:%S.%f")[:-3]
        text = f"{stamp}  {event.level.upper():<7}  {event.message}"
        self.lines = [*self.lines[-MAX_LINES + 1 :], text]
        self.levels = [*self.levels[-MAX_LINES + 1 :], event.level]
        colour = level_colour(event.level)
        escaped = html.escape(text)
        self.view.appendHtml(
            f'<span style="color:{colour.name()}">{escaped}</span>' if colour else escaped
        )
        if self.following:
            self._to_bottom()

    def _scrolled(self, value: int) -> None:
        """The trader (or the view) moved: follow again exactly when at the bottom."""
        self.following = value >= self.view.verticalScrollBar().maximum()

    def _grew(self, _minimum: int, _maximum: int) -> None:
        if self.following:
            self._to_bottom()

    def _to_bottom(self) -> None:
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.maximum())

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: each shown line in its level's new colour (info lines keep the
        view's own text colour, which the theme sets)."""
        document = self.view.document()
        block = document.firstBlock()
        # The document holds the last ``blockCount`` lines (the view drops the oldest).
        levels = self.levels[len(self.levels) - document.blockCount() :]
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        for level in levels:
            if not block.isValid():
                break
            colour = level_colour(level, palette)
            if colour is not None:
                cursor.setPosition(block.position())
                end = block.position() + block.length() - 1
                cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
                char = QTextCharFormat()
                char.setForeground(QBrush(colour))
                cursor.mergeCharFormat(char)
            block = block.next()
        cursor.endEditBlock()

    def colour_of_line(self, row: int) -> str | None:
        """The colour (``#rrggbb``) line ``row`` of the view is drawn in; None for the view's
        own text colour."""
        block = self.view.document().findBlockByNumber(row)
        fragment = block.begin().fragment() if block.isValid() else None
        if fragment is None or not fragment.isValid():
            return None
        char = fragment.charFormat()
        if not char.hasProperty(QTextFormat.Property.ForegroundBrush):
            return None
        return char.foreground().color().name()
