"""Plot axes that read as the terminal writes numbers and times, shared by the mid chart and
the P&L chart: ``GroupedAxis`` for values (grouped thousands, never scientific notation, never a
hidden SI scale: 3,858,000 rather than 3.858e+06, 0.48 rather than 480 and a ×0.001) and
``ClockAxis`` for epoch seconds as local clock time. Both place at most one label per label's
worth of room, so labels never stack however small the dock."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen

#: Nice tick spacings of the time axis, in seconds.
CLOCK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600)


def cosmetic_pen(colour: QColor) -> QPen:
    """1 px, cosmetic (same width at any zoom): wider pens draw 7–9× slower."""
    pen = QPen(colour)
    pen.setWidth(1)
    pen.setCosmetic(True)
    return pen


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 5 × 10^k at least ``raw``."""
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= raw * (1 - 1e-9):
            return factor * power
    return 10.0 * power


def _nice_floor(raw: float) -> float:
    """The largest of 1, 2, 5 × 10^k at most ``raw``."""
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (5.0, 2.0, 1.0):
        if factor * power <= raw * (1 + 1e-9):
            return factor * power
    return power


class GroupedAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """A value axis written as the terminal writes numbers (``90,995``; pyqtgraph's own:
    ``90995``, ``9.1e+04``, or ``480`` with a hidden ×0.001), with one tick level spaced two
    text heights apart at least, so labels never stack however short the plot."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        #: Axes stacked with this one: all take the widest one's width, so the plots' time
        #: axes line up.
        self.partners: list[GroupedAxis] = []
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)

    def _updateWidth(self) -> None:
        """pyqtgraph's width, from the widest labels of this axis and its partners."""
        if not self.isVisible() or not self.style["showValues"]:
            super()._updateWidth()
            return
        widest = max([self.textWidth, *(p.textWidth for p in self.partners)])
        width = widest + self.style["tickTextOffset"][0] + max(0, self.style["tickLength"])
        titles = [axis.label for axis in (self, *self.partners) if axis.label.isVisible()]
        if titles:  # room for the title beside the labels (pyqtgraph's own estimate)
            width += max(title.boundingRect().height() for title in titles) * 0.8
        if width != self.minimumWidth():
            self.setMaximumWidth(width)
            self.setMinimumWidth(width)
            self.picture = None
            for partner in self.partners:
                partner._updateWidth()

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        if self.logMode or not math.isfinite(span) or span <= 0 or size <= 0:
            return list(super().tickSpacing(minVal, maxVal, size))
        slots = max(1, int(size // (2 * _text_height(self))))
        step = _nice_step(span / slots)
        if step > span:  # one slot: the largest nice step that still puts a tick in view
            step = _nice_floor(span)
        return [(step, 0.0)]

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        """pyqtgraph's values, thinned to labels at least 1.5 text heights apart."""
        levels = list(super().tickValues(minVal, maxVal, size))
        span = abs(maxVal - minVal)
        if not levels or span <= 0 or size <= 0:
            return levels
        step, values = levels[0]
        height = _text_height(self) * span / size  # value units per text height
        low, high = min(minVal, maxVal) + 0.6 * height, max(minVal, maxVal) - 0.6 * height
        kept: list[float] = []
        for value in sorted(values):
            if low <= value <= high and (not kept or value - kept[-1] >= 1.5 * height):
                kept.append(value)
        if not kept and low < high:
            # A very short plot: one label, the roundest value that fits whole.
            step = _nice_floor(span)
            for _ in range(40):
                value = round((low + high) / 2 / step) * step
                if low <= value <= high:
                    return [(step, [value])]
                step = _nice_floor(step * 0.99)
        return [(step, kept)]

    def updateAutoSIPrefix(self) -> None:
        """Never scale the values (pyqtgraph would show 480 and a ×0.001 for 0.48)."""
        self.autoSIPrefixScale = 1.0
        self.labelUnitPrefix = ""
        self._updateLabel()

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        if self.logMode or spacing * scale <= 0:
            return list(super().tickStrings(values, scale, spacing))
        places = max(0, math.ceil(-math.log10(spacing * scale) - 1e-9))
        return [f"{value * scale:,.{places}f}" for value in values]


def _text_height(axis: pg.AxisItem) -> float:
    """The height of one tick label of ``axis`` in pixels."""
    return float(QFontMetricsF(axis.style.get("tickFont") or QFont()).height())


def _text_width(axis: pg.AxisItem, text: str) -> float:
    """The width of ``text`` as a tick label of ``axis`` in pixels."""
    return float(QFontMetricsF(axis.style.get("tickFont") or QFont()).horizontalAdvance(text))


class ClockAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """Epoch seconds as clock time: ``HH:MM:SS``, or ``HH:MM`` from one-minute spacing, one
    tick level at least a label and a gap apart."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        if not math.isfinite(span) or span <= 0 or size <= 0:
            return []
        label = _text_width(self, "00:00:00") * 1.6
        slots = max(1.0, size / label)
        raw = span / slots
        step = next((s for s in CLOCK_STEPS if s >= raw), None)
        if step is None:
            step = CLOCK_STEPS[-1] * math.ceil(raw / CLOCK_STEPS[-1])
        # Ticks on local clock boundaries (whole minutes, hours): local = epoch + the zone's
        # offset, so a tick sits where (value + offset) is a multiple of the step.
        try:
            zone = datetime.fromtimestamp(minVal).astimezone().utcoffset()
        except (OverflowError, OSError, ValueError):
            zone = None
        shift = zone.total_seconds() if zone is not None else 0.0
        return [(float(step), float(-shift % step))]

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        levels = []
        for step, offset in self.tickSpacing(minVal, maxVal, size):
            first = math.ceil((minVal - offset) / step) * step + offset
            count = int((maxVal - first) // step) + 1
            levels.append((step, [first + i * step for i in range(max(0, count))]))
        return levels

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        shape = "%H:%M" if spacing >= 60 else "%H:%M:%S"
        texts = []
        for value in values:
            try:
                texts.append(datetime.fromtimestamp(value).strftime(shape))
            except (OverflowError, OSError, ValueError):
                texts.append("")
        return texts
