"""Labels whose text changes on every tick without relaying the window out.

Why: ``QLabel.setText`` calls ``updateGeometry``, which invalidates the parent's layout, and a
layout that activates calls ``updateGeometry`` on its widget in turn — up through the dock to
the main window. A price in the chart title or the balances total changing each tick then
relaid the whole window out each tick (issue 16: 122 layout requests in 30 s idle). Qt stops
that walk at a parent without a layout: ``TextHost`` is such a parent. It holds one label,
places it over its whole area by hand, and has a size hint of its own that no text changes.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class TextHost(QWidget):
    """A layout-less home for ``label``: as wide as its layout gives it (``sample`` is the
    text its size hint is measured on), one line high."""

    def __init__(self, label: QLabel, sample: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{label.objectName()}Host")
        self.label = label
        label.setParent(self)
        shown = label.text()
        label.setText(sample)
        self._hint = label.sizeHint()
        label.setText(shown)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._hint.height())

    def sizeHint(self) -> QSize:
        return self._hint

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self._hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
