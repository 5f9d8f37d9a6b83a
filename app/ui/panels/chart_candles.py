"""Candles of the mid for the chart: the timeframes offered at the feed's poll rate, the
open/high/low/close of each bucket, and the item that paints them.

Colours: a candle that closed at or above its open is a rise, one that closed below a fall.
Rises are drawn in the palette's ``up`` and falls in its ``down`` (green-teal and magenta:
apart for every kind of colour blindness, and never the bid's blue or the ask's orange, which
mean a side). Colour is not the only cue: a rise is hollow (an outline), a fall filled, so a
grey print or a stale chart (both in the stale grey) still tells them apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QPicture

from app.ui.palette import DEFAULT_PALETTE
from app.ui.ring_buffer import FloatArray
from app.ui.widgets.plot_axes import cosmetic_pen

#: Every view the chart knows: label and candle length in seconds (0: a line of every tick).
#: Which of them are offered depends on the poll interval (``offered_timeframes``).
TIMEFRAMES: dict[str, int] = {
    "Line": 0,
    "1 s": 1,
    "5 s": 5,
    "15 s": 15,
    "1 min": 60,
    "5 min": 300,
    "15 min": 900,
    "1 h": 3600,
}
#: The fewest polls of the top of book a candle must span to be offered.
POLLS_PER_CANDLE = 4


def offered_timeframes(poll_interval: float) -> dict[str, int]:
    """The views worth offering when the top of book is polled every ``poll_interval``
    seconds: the line always, and each candle timeframe at least ``POLLS_PER_CANDLE`` polls
    long.

    Why four: a candle is four numbers, and it tells something only when they can come from
    different ticks. At the sandbox's default 0.5 s poll a 1 s candle holds two ticks, so its
    open is its low or high and its close the other: a row of bodies that only repeat the
    line. Four polls is the least that can show an open, a high, a low and a close apart, so
    at 0.5 s the shortest candle is 5 s (2 s would do, none is offered between 1 s and 5 s);
    at 0.2 s, 1 s candles come back; at a 2 s poll, 15 s is the shortest."""
    shortest = POLLS_PER_CANDLE * max(0.0, poll_interval)
    return {
        label: seconds
        for label, seconds in TIMEFRAMES.items()
        if seconds == 0 or seconds >= shortest - 1e-9
    }


def nearest_offered(seconds: int, offered: dict[str, int]) -> str:
    """The label of the view to show for a wanted ``seconds`` (a saved choice, or the one in
    force when the poll interval changed): itself if offered, else the shortest offered candle
    at least as long, else the longest offered one; the line stays the line."""
    if seconds == 0:
        return next(label for label, length in offered.items() if length == 0)
    candles = sorted((length, label) for label, length in offered.items() if length > 0)
    if not candles:
        return next(iter(offered))
    for length, label in candles:
        if length >= seconds:
            return label
    return candles[-1][1]


@dataclass(frozen=True)
class Candles:
    """Open, high, low, close of the mid per bucket; ``start`` is each bucket's first second."""

    seconds: int
    start: FloatArray
    open: FloatArray
    high: FloatArray
    low: FloatArray
    close: FloatArray

    def __len__(self) -> int:
        return len(self.start)

    def rises(self, i: int) -> bool:
        """Whether candle ``i`` closed at or above its open (a rise; else a fall)."""
        return bool(self.close[i] >= self.open[i])

    def at(self, x: float) -> int | None:
        """The index of the candle whose bucket holds time ``x``, None between or outside."""
        i = int(np.searchsorted(self.start, x, side="right")) - 1
        if 0 <= i < len(self) and x < self.start[i] + self.seconds:
            return i
        return None


def candles(times: FloatArray, mids: FloatArray, seconds: int) -> Candles:
    """The ticks (``times`` ascending, epoch seconds) grouped into ``seconds``-long buckets."""
    empty = np.zeros(0)
    if len(times) == 0:
        return Candles(seconds, empty, empty, empty, empty, empty)
    buckets = np.floor(times / seconds)
    firsts = np.flatnonzero(np.diff(buckets)) + 1
    starts = np.concatenate([[0], firsts]).astype(np.intp)
    ends = np.concatenate([firsts, [len(times)]]).astype(np.intp) - 1
    return Candles(
        seconds,
        buckets[starts] * seconds,
        mids[starts],
        np.maximum.reduceat(mids, starts),
        np.minimum.reduceat(mids, starts),
        mids[ends],
    )


class CandleItem(pg.GraphicsObject):  # type: ignore[misc]  # pyqtgraph is untyped
    """Candles drawn from a ``QPicture`` of the finished buckets, re-recorded only when one of
    them changes; the open (last) bucket is painted on its own each frame."""

    def __init__(self) -> None:
        super().__init__()
        self._candles: Candles | None = None
        self._picture = QPicture()
        self._up = cosmetic_pen(DEFAULT_PALETTE.up)
        self._down = cosmetic_pen(DEFAULT_PALETTE.down)
        self.pictures = 0  # how many times the finished candles were recorded

    def set_colours(self, up: QColor, down: QColor) -> None:
        """Rises in ``up``, falls in ``down`` (both the stale grey while the feed is stale)."""
        self._up, self._down = cosmetic_pen(up), cosmetic_pen(down)
        self._record()
        self.update()

    def style(self, rises: bool) -> tuple[QPen, QBrush]:
        """The pen (wick and outline) and the body's brush of a rise or a fall: a rise hollow,
        a fall filled."""
        if rises:
            return self._up, QBrush(Qt.BrushStyle.NoBrush)
        return self._down, QBrush(self._down.color())

    def set_candles(self, new: Candles) -> None:
        old = self._candles
        self._candles = new
        same_finished = (
            old is not None
            and old.seconds == new.seconds
            and len(old) >= 1
            and len(new) >= 1
            and len(old) - 1 == len(new) - 1
            and all(
                np.array_equal(getattr(old, name)[:-1], getattr(new, name)[:-1])
                for name in ("start", "open", "high", "low", "close")
            )
        )
        if not same_finished:
            self.prepareGeometryChange()
            self._record()
        self.update()

    def _record(self) -> None:
        self._picture = QPicture()
        candles = self._candles
        if candles is None or len(candles) < 2:
            return
        painter = QPainter(self._picture)
        try:
            for i in range(len(candles) - 1):
                self._draw(painter, candles, i)
        finally:
            painter.end()
        self.pictures += 1

    def _draw(self, painter: QPainter, c: Candles, i: int) -> None:
        width = c.seconds * 0.7
        centre = float(c.start[i]) + c.seconds / 2
        low, high = float(c.low[i]), float(c.high[i])
        opened, closed = float(c.open[i]), float(c.close[i])
        pen, brush = self.style(c.rises(i))
        painter.setPen(pen)
        bottom, top = min(opened, closed), max(opened, closed)
        # the wicks stop at the body: a hollow rise shows no line through it
        if low < bottom:
            painter.drawLine(QPointF(centre, low), QPointF(centre, bottom))
        if high > top:
            painter.drawLine(QPointF(centre, top), QPointF(centre, high))
        body = QRectF(centre - width / 2, bottom, width, top - bottom)
        painter.setBrush(brush)
        painter.drawRect(body)

    def paint(self, painter: QPainter, *_: Any) -> None:
        painter.drawPicture(0, 0, self._picture)
        if self._candles is not None and len(self._candles) > 0:
            self._draw(painter, self._candles, len(self._candles) - 1)

    def boundingRect(self) -> QRectF:
        c = self._candles
        if c is None or len(c) == 0:
            return QRectF()
        low, high = float(np.min(c.low)), float(np.max(c.high))
        if not (math.isfinite(low) and math.isfinite(high)):
            return QRectF()
        return QRectF(
            float(c.start[0]), low, float(c.start[-1] + c.seconds - c.start[0]), high - low
        )
