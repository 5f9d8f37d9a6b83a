"""Short, non-blocking notices in a corner of the main window (no modal boxes for errors)."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

SHOW_MS = {"info": 3000, "success": 5000, "warning": 5000, "error": 7000}
STYLES = {
    "info": "background:#2d333b; color:#e6edf3; border:1px solid #444c56;",
    "success": "background:#0f2d1c; color:#8ddb8c; border:1px solid #2e9d57;",
    "warning": "background:#3b2f0b; color:#f2cc60; border:1px solid #d4a72c;",
    "error": "background:#3d1214; color:#ffb3ad; border:1px solid #e5534b;",
}
MAX_VISIBLE = 3


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

    def show_notice(self, level: str, message: str) -> QLabel:
        label = QLabel(message, self)
        label.setWordWrap(True)
        label.setMaximumWidth(420)
        label.setStyleSheet(
            f"QLabel {{ {STYLES.get(level, STYLES['info'])} border-radius:4px; padding:6px 10px; }}"
        )
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
