"""The crosshair's readout: time and price under the pointer (and the candle there), painted
over the top-left corner of the price plot.

Why an overlay: as a label in the chart's layout, its text (up to ~90 characters with a
candle's O/H/L/C) raised the chart's minimum width with every hover, the dock grew to fit, and
the docks beside it lost columns and values — and never got them back, since the label's
minimum stayed where the longest text had put it. This widget is a child of the plot view with
no layout around it: it is placed by hand over the plot, its size follows the plot and never
its text, so no text it shows can change any widget's size hint. A line too long for the plot
is cut with "…" at its end; the full text stays readable in ``text()``.

It passes the mouse through (``WA_TransparentForMouseEvents``): the plot under it keeps its
hover and the pointer never "leaves" the plot by entering the readout.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

#: Space between the text and the edge of its backdrop, and between the backdrop and the
#: plot's corner (pixels).
PAD = 3
#: The most lines painted (time and price; the candle's O/H/L/C, broken in two when narrow).
MAX_LINES = 3
#: Where a line may break: between fields, which the readout separates by two spaces or more.
FIELD_GAP = re.compile(r" {2,}")
#: Opacity (0–255) of the backdrop behind the text: the candles under it stay faintly seen.
BACKDROP_ALPHA = 215


class ChartReadout(QWidget):
    """Lines of text (``setText``, lines split on "\\n") over a corner of the plot."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("chartReadout")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._text = ""
        self._ink = QColor("#d7dce2")
        self._backdrop = QColor("#14171b")
        self._backdrop.setAlpha(BACKDROP_ALPHA)
        #: Times the text changed (tests: a hover that does not move the text repaints nothing).
        self.changes = 0

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        """Show ``text`` (repaint only: never a geometry change)."""
        if text != self._text:
            self._text = text
            self.changes += 1
            self.update()

    def clear(self) -> None:
        self.setText("")

    def set_colours(self, ink: QColor, backdrop: QColor) -> None:
        self._ink = QColor(ink)
        self._backdrop = QColor(backdrop)
        self._backdrop.setAlpha(BACKDROP_ALPHA)
        self.update()

    def place(self, plot: QRectF | QRect) -> None:
        """Cover the top of ``plot`` (a rectangle in the parent's coordinates): as wide as the
        plot, as high as the most lines shown, whatever the text."""
        rect = plot.toRect() if isinstance(plot, QRectF) else plot
        height = MAX_LINES * QFontMetrics(self.font()).height() + 2 * PAD
        wanted = QRect(rect.left() + 1, rect.top() + 1, max(0, rect.width() - 2), height)
        if wanted != self.geometry():
            self.setGeometry(wanted)

    def shown_lines(self) -> list[str]:
        """The lines as painted: a line wider than the readout breaks between its fields (at
        a run of two or more spaces) onto further lines, ``MAX_LINES`` at most, and what
        still does not fit is cut with "…" at its end."""
        if not self._text:
            return []
        metrics = QFontMetrics(self.font())
        room = max(0, self.width() - 2 * PAD)
        lines: list[str] = []
        for line in self._text.split("\n"):
            lines.extend(_wrapped(line, room, metrics))
        if len(lines) > MAX_LINES:
            lines = [*lines[: MAX_LINES - 1], "  ".join(lines[MAX_LINES - 1 :])]
        return [metrics.elidedText(line, Qt.TextElideMode.ElideRight, room) for line in lines]

    def paintEvent(self, event: QPaintEvent) -> None:
        lines = self.shown_lines()
        if not lines:
            return
        metrics = QFontMetrics(self.font())
        width = max(metrics.horizontalAdvance(line) for line in lines) + 2 * PAD
        height = len(lines) * metrics.height() + 2 * PAD
        painter = QPainter(self)
        try:
            painter.fillRect(QRect(0, 0, min(width, self.width()), height), self._backdrop)
            painter.setPen(self._ink)
            painter.setFont(self.font())
            for row, line in enumerate(lines):
                top = PAD + row * metrics.height()
                painter.drawText(
                    QRect(PAD, top, self.width() - 2 * PAD, metrics.height()),
                    int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                    line,
                )
        finally:
            painter.end()


def _wrapped(line: str, room: int, metrics: QFontMetrics) -> list[str]:
    """``line`` broken between fields into lines at most ``room`` pixels wide where it can
    be (a single field wider than ``room`` stays one line, cut when painted)."""
    if metrics.horizontalAdvance(line) <= room:
        return [line]
    fields = FIELD_GAP.split(line)
    gaps = FIELD_GAP.findall(line)
    out: list[str] = []
    current = fields[0]
    for gap, field in zip(gaps, fields[1:], strict=True):
        joined = f"{current}{gap}{field}"
        if metrics.horizontalAdvance(joined) <= room:
            current = joined
        else:
            out.append(current)
            current = field
    out.append(current)
    return out
