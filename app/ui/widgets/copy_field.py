"""A read-only value with a Copy button: addresses, hashes and wire fields are copied, never
retyped. The button puts the exact value on the clipboard and says "Copied" for a moment."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QWidget

from app.ui.fonts import number_font
from app.ui.timers import make_timer

#: How long the button says "Copied" (ms).
COPIED_MS = 1500


def copy_text(text: str) -> None:
    """Put ``text`` on the system clipboard, exactly."""
    QGuiApplication.clipboard().setText(text)


class CopyField(QWidget):
    """``label`` names the value in the button's tooltip and accessible name ("Copy address")."""

    copied = Signal(str)

    def __init__(
        self,
        value: str,
        label: str,
        *,
        monospace: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._value = value
        self.edit = QLineEdit(value, self)
        self.edit.setReadOnly(True)
        self.edit.setCursorPosition(0)
        self.edit.setAccessibleName(label)
        self.edit.setToolTip(value)
        if monospace:
            self.edit.setFont(number_font())
        self.button = QPushButton("Copy", self)
        self.button.setToolTip(f"Copy the {label.lower()} to the clipboard")
        self.button.setAccessibleName(f"Copy {label}")
        self.button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.button.clicked.connect(self.copy)
        self._reset = make_timer(
            self, COPIED_MS, lambda: self.button.setText("Copy"), single_shot=True
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.button)
        self.setFocusProxy(self.edit)

    @property
    def value(self) -> str:
        return self._value

    def copy(self) -> None:
        copy_text(self._value)
        self.button.setText("Copied")
        self._reset.start()
        self.copied.emit(self._value)
