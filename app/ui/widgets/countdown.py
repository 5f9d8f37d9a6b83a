"""A countdown bar with the seconds left written over it, for one side of an RFQ quote.

The widget only draws what it is told: its owner computes the time left from a monotonic
deadline on every frame and calls ``show_remaining`` (never counting timer ticks here). The bar
is blue while there is time, amber under ``AMBER_SECONDS`` (the owner passes the state), and an
empty grey track with a word ("expired", "accepted", ...) once the side is over. Track, fills
and text are the palette's (``track``, ``bar``, ``bar_warn``, ``bar_text``): the bar repaints
in the new theme's colours when it switches.
"""

from __future__ import annotations

import math
from typing import Literal

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.ui.palette import TradePalette, current_palette, follow_palette

BarState = Literal["idle", "live", "amber", "closing", "expired", "done"]
#: Room (px) between the bar's edge and its text.
PADDING = 3


def fill_colour(state: str, palette: TradePalette) -> QColor | None:
    """The filled part's colour in ``state``: the palette's bar while live, amber from the
    amber state on (closing keeps amber: the accept button tells the rest); none when over."""
    if state == "live":
        return palette.bar
    if state in ("amber", "closing"):
        return palette.bar_warn
    return None


def seconds_text(remaining: float) -> str:
    """``7.3 s``: tenths, rounded down so the display never promises time that is not left."""
    tenths = math.floor(max(0.0, remaining) * 10)
    return f"{tenths // 10}.{tenths % 10} s"


class CountdownBar(QWidget):
    """Bar plus seconds; ``fraction`` and ``text`` are what was last asked to be drawn."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._fraction = 0.0
        self._text = ""
        self._state: BarState = "idle"
        self._remaining: float | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self._palette = current_palette()
        follow_palette(self.set_palette)

    def set_palette(self, palette: TradePalette) -> None:
        """The theme switched: repaint in its colours."""
        if palette != self._palette:
            self._palette = palette
            self.update()

    @property
    def trade_palette(self) -> TradePalette:
        """The palette the bar paints with."""
        return self._palette

    # -- what to show -------------------------------------------------------------------------

    def show_remaining(self, remaining: float, total: float, state: BarState) -> None:
        """``remaining`` of ``total`` seconds left, drawn as a bar and as seconds."""
        fraction = 0.0 if total <= 0 else min(1.0, max(0.0, remaining / total))
        text = "expired" if state == "expired" else seconds_text(remaining)
        self._set(fraction, text, state, remaining)

    def show_word(self, text: str) -> None:
        """The side is over for another reason (accepted, refused): an empty bar and a word."""
        self._set(0.0, text, "done", None)

    def clear(self) -> None:
        self._set(0.0, "", "idle", None)

    def _set(self, fraction: float, text: str, state: BarState, remaining: float | None) -> None:
        self._remaining = remaining
        width = max(1, self.width() - 2 * PADDING)
        changed = (
            text != self._text
            or state != self._state
            or round(fraction * width) != round(self._fraction * width)
        )
        self._fraction, self._text, self._state = fraction, text, state
        if changed:
            self.update()

    @property
    def fraction(self) -> float:
        return self._fraction

    @property
    def text(self) -> str:
        return self._text

    @property
    def state(self) -> BarState:
        return self._state

    @property
    def remaining(self) -> float | None:
        """Seconds left as of the last ``show_remaining`` (None when not counting)."""
        return self._remaining

    # -- drawing ------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance("expired 00.0 s") + 4 * PADDING, self._height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance("00.0 s") + 2 * PADDING, self._height())

    def _height(self) -> int:
        return self.fontMetrics().height() + 2 * PADDING

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            colours = self._palette
            painter.fillRect(self.rect(), self.palette().window())
            track = self.rect().adjusted(0, 0, -1, -1)
            painter.fillRect(track, colours.track)
            colour = fill_colour(self._state, colours)
            if colour is not None and self._fraction > 0:
                filled = round(track.width() * self._fraction)
                painter.fillRect(QRect(track.left(), track.top(), filled, track.height()), colour)
            painter.setPen(colours.bar_text)
            painter.drawText(track, Qt.AlignmentFlag.AlignCenter, self._text)
        finally:
            painter.end()
