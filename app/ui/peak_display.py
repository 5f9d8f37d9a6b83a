"""What a live line plot draws: at most two points per pixel column, in storage allocated once.

A chart that hands pyqtgraph every stored sample makes it build arrays and paths the size of the
history on every frame (a copy of the window, finite masks, a ``QPainterPath`` per curve): about
0.75 KB per sample held between frames, so the process grew with the ring for as long as the ring
filled (20,000 samples: 33 minutes at 10 Hz), and the ever larger blocks fragmented the heap on top
(measured with heaptrack on ``tests/perf/bench_idle.py --soak``). Here the samples are cut into
``buckets`` equal spans of time (the plot's pixel columns) and each span is drawn as its lowest and
its highest value (peak downsampling: the line looks the same at that width), written into arrays
made once for ``max_buckets``; what pyqtgraph allocates per frame is then bounded by the plot's
width, not by the history. Up to two samples a bucket are drawn as they are.

Direction and the end: a span that ends below where it began is drawn high then low (a falling
column falls), one that ends at or above its start low then high; and the line always ends on
the last sample itself, one point more (a drop inside the last column once ended the line at
that column's high, as the latest price). Which of a span's extremes came first is not looked
for (it would take arrays the size of the history each frame): a span that dips, then recovers
to just under its start is drawn falling to its low, and the next span starts where it really
stood.

Pauses: where the time from one sample (or span) to the next is longer than ``gap`` seconds, a
NaN point (at the middle time, so the times stay sorted) breaks the line (``connect="finite"``),
so nothing is drawn where nobody quoted. Gaps are found between spans, never inside one: a span
is a pixel column wide, so a pause shorter than a pixel is not drawn as a break.

Row 0 is the time (sorted); a reduced span's time pair is its first and its last sample's time,
and the last point's time is the last sample's.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from app.ui.ring_buffer import FloatArray


class PeakDisplay:
    """Reusable storage for ``columns`` parallel series (row 0: time) drawn as at most
    ``2 * max_buckets + 1`` points each, plus the breaks between them."""

    def __init__(self, columns: int, max_buckets: int) -> None:
        if columns < 1 or max_buckets < 1:
            raise ValueError("a display needs at least one column and one bucket")
        self.max_buckets = max_buckets
        # Every page written now, so the memory is all taken at start (see RingBuffer).
        # Points, then the same with the breaks put in: up to one break after each point.
        self._points: FloatArray = np.zeros((columns, 2 * max_buckets), dtype=np.float64)
        # (and the last sample after them)
        self._out: FloatArray = np.zeros((columns, 4 * max_buckets + 1), dtype=np.float64)

    @property
    def capacity(self) -> int:
        """The most points (breaks included) a reduced series has."""
        return int(self._out.shape[1])

    def reduce(self, data: FloatArray, buckets: int, gap: float = np.inf) -> FloatArray:
        """``data`` (shape ``(columns, n)``, row 0 sorted times) as at most ``2 * buckets + 1``
        points a row, broken where more than ``gap`` seconds pass between them: a view into
        this display's storage, valid until the next call."""
        columns, n = data.shape
        if columns != self._out.shape[0]:
            raise ValueError(f"expected {self._out.shape[0]} rows, got {columns}")
        buckets = max(1, min(buckets, self.max_buckets))
        if n <= 2 * buckets:
            points = self._points[:, :n]
            np.copyto(points, data)
            return self._broken(points, 1, gap)
        times = data[0]
        first, last = float(times[0]), float(times[-1])
        edges = np.searchsorted(times, np.linspace(first, last, buckets + 1))
        edges[0], edges[-1] = 0, n
        starts = edges[:-1][edges[:-1] < edges[1:]]  # the spans that hold samples
        count = len(starts)
        low, high = self._points[:, 0 : 2 * count : 2], self._points[:, 1 : 2 * count : 2]
        np.minimum.reduceat(data, starts, axis=1, out=low)
        np.maximum.reduceat(data, starts, axis=1, out=high)
        ends = np.append(starts[1:], n) - 1
        falling = data[:, ends] < data[:, starts]  # (columns, count): never the time row
        if falling.any():
            lows = low[falling]  # a copy
            low[falling] = high[falling]
            high[falling] = lows
        lines = self._broken(self._points[:, : 2 * count], 2, gap)
        drawn = lines.shape[1]
        out: FloatArray = self._out[:, : drawn + 1]  # ``lines`` is its start
        out[:, drawn] = data[:, -1]
        return out

    def _broken(self, points: FloatArray, per_unit: int, gap: float) -> FloatArray:
        """``points`` (``per_unit`` points per sample or span) with a NaN point between two
        units more than ``gap`` seconds apart."""
        times = points[0]
        firsts, lasts = times[::per_unit], times[per_unit - 1 :: per_unit]
        breaks: npt.NDArray[np.bool_] = (firsts[1:] - lasts[:-1]) > gap
        total = points.shape[1] + int(np.count_nonzero(breaks))
        out: FloatArray = self._out[:, :total]
        if total == points.shape[1]:
            np.copyto(out, points)
            return out
        # Where each unit's first point goes: after its own and all earlier units' points and
        # the breaks before it.
        shift = np.concatenate(([0], np.cumsum(breaks)))
        where = per_unit * np.arange(len(firsts)) + shift
        for offset in range(per_unit):
            out[:, where + offset] = points[:, offset::per_unit]
        filler = where[1:][breaks] - 1
        out[:, filler] = np.nan
        out[0, filler] = (lasts[:-1][breaks] + firsts[1:][breaks]) / 2
        return out
