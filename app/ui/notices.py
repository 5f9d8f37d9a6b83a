"""Short, non-blocking notices in a corner of the main window (no modal boxes for errors).

A notice is the theme's text on its table background tinted with the level's colour (error,
warning, success; info in the neutral grey), framed in that colour: all from the palette in
force, and restyled when the theme switches while notices are showing. A notice is in words
(``app.api.errors.in_words``): no raw URL (the log keeps the full message), no word twice.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.domain.words import in_words
from app.ui.palette import TradePalette, current_palette, follow_palette, level_colour

SHOW_MS = {"info": 3000, "success": 5000, "warning": 5000, "error": 7000}
MAX_VISIBLE = 3
#: How much of the level's colour tints the notice's background (0–1).
TINT = 0.16


def notice_colours(level: str, palette: TradePalette) -> tuple[QColor, QColor, QColor]:
    """(background, text, border) of a notice of ``level``: the level's colour (the neutral
    grey for info) blended into the theme's background, the theme's text, a frame in the
    level's colour."""
    accent = level_colour(level, palette) or palette.stale
    base = palette.background
    background = QColor.fromRgbF(
        *(
            TINT * a + (1 - TINT) * b
            for a, b in zip(
                (accent.redF(), accent.greenF(), accent.blueF()),
                (base.redF(), base.greenF(), base.blueF()),
                strict=True,
            )
        )
    )
    return background, palette.text, accent


def notice_css(level: str, palette: TradePalette) -> str:
    background, text, border = notice_colours(level, palette)
    return (
        f"QLabel {{ background:{background.name()}; color:{text.name()};"
        f" border:1px solid {border.name()}; border-radius:4px; padding:6px 10px; }}"
    )


class NoticeArea(QWidget):
    """Stacked notices at the bottom right of ``host``; each hides itself after a while."""

    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._host = host
        self.hide()
        follow_palette(self.set_palette)

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the notices still showing in its colours."""
        for label in self.findChildren(QLabel):
            label.setStyleSheet(notice_css(str(label.property("level")), palette))

    def show_notice(self, level: str, message: str) -> QLabel:
        """Show ``message`` in words (see the module); it is plain text, never rich text."""
        label = QLabel(in_words(message), self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setMaximumWidth(420)
        label.setStyleSheet(notice_css(level, current_palette()))
        label.setProperty("level", level)
        self._layout.addWidget(label)
        while self._layout.count() > MAX_VISIBLE:
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        QTimer.singleShot(SHOW_MS.get(level, 4000), label, lambda: self._expire(label))
        self.place()
        self.show()
        self.raise_()
        return label

    def visible_messages(self) -> list[str]:
        return [w.text() for w in self.findChildren(QLabel) if not w.isHidden()]

    def _expire(self, label: QLabel) -> None:
        label.hide()
        label.deleteLater()
        if not any(not w.isHidden() and w is not label for w in self.findChildren(QLabel)):
            self.hide()

    def place(self) -> None:
        """Bottom right of the host, clear of the status bar. The host calls this on resize
        (an event filter here could run on a half-destroyed wrapper at shutdown)."""
        self.adjustSize()
        margin = 16
        bar = 28  # keep clear of the status bar
        x = self._host.width() - self.width() - margin
        y = self._host.height() - self.height() - margin - bar
        self.move(max(0, x), max(0, y))
