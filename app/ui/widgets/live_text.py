"""Labels whose text changes on every tick without relaying the window out.

Why: ``QLabel.setText`` calls ``updateGeometry``, which invalidates the parent's layout, and a
layout that activates calls ``updateGeometry`` on its widget in turn — up through the dock to
the main window. A price in the chart title or the balances total changing each tick then
relaid the whole window out each tick (122 layout requests in 30 s of an idle terminal). Qt stops
that walk at a parent without a layout: ``TextHost`` is such a parent. It holds one label,
places it over its whole area by hand, and has a size hint of its own that no text changes.

A word-wrapped label (a status line that may need two lines for an error) keeps that: its host
is as high as the text needs at the host's width, and changes height — relaying the window out
once — only when the number of lines changes, never because "updated 10:15:00" became
"updated 10:15:15" (the deposits list refreshes every 15 s).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class TextHost(QWidget):
    """A layout-less home for ``label``: as wide as its layout gives it (``sample`` is the
    text its size hint is measured on), one line high, or as many lines as a word-wrapped
    ``label`` needs at that width."""

    def __init__(self, label: QLabel, sample: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{label.objectName()}Host")
        self.label = label
        label.setParent(self)
        shown = label.text()
        label.setText(sample)
        self._hint = label.sizeHint()
        label.setText(shown)
        self._line = self._hint.height() if not label.wordWrap() else self._one_line()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._line)

    def _one_line(self) -> int:
        margins = self.label.contentsMargins()
        return self.label.fontMetrics().height() + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        return QSize(self._hint.width(), self.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.height())

    def event(self, event: QEvent) -> bool:
        # The label's setText posts its layout request here (a parent without a layout).
        if event.type() == QEvent.Type.LayoutRequest:
            self._fit_height()
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
        self._fit_height()

    def _fit_height(self) -> None:
        """A wrapped label's lines at this width; a change of line count is the one relayout."""
        if not self.label.wordWrap() or self.width() <= 0:
            return
        needed = max(self._line, self.label.heightForWidth(self.width()))
        if needed != self.height():
            self.setFixedHeight(needed)
