"""A fixed-capacity ring of float samples whose latest window is always one contiguous slice.

Each sample is written twice, at ``i`` and ``i + capacity``, into arrays twice the capacity
long; the newest ``capacity`` samples are then ``data[:, start:start + capacity]`` in order,
oldest first, without copying or ``np.roll`` (~3 µs per sample at any capacity, see
../shared/qt-asyncio-notes.md). Values are plot coordinates (float64), never money.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


class RingBuffer:
    """``columns`` parallel series (e.g. time, bid, ask) of at most ``capacity`` samples."""

    def __init__(self, capacity: int, columns: int) -> None:
        if capacity < 1 or columns < 1:
            raise ValueError("a ring buffer needs a positive capacity and at least one column")
        self.capacity = capacity
        self.columns = columns
        # One row per column, so each series' window is contiguous in memory.
        # Every page written now (np.zeros would leave them to the first write): the memory is
        # all taken at start, so the process's size stays flat as the ring fills.
        self._data: FloatArray = np.empty((columns, 2 * capacity), dtype=np.float64)
        self._data.fill(0.0)
        self._count = 0  # samples ever appended since the last clear

    def __len__(self) -> int:
        return min(self._count, self.capacity)

    @property
    def appended(self) -> int:
        """Samples appended since the last ``clear()``, including those overwritten since."""
        return self._count

    def append(self, sample: Sequence[float]) -> None:
        if len(sample) != self.columns:
            raise ValueError(f"expected {self.columns} values, got {len(sample)}")
        i = self._count % self.capacity
        self._data[:, i] = sample
        self._data[:, i + self.capacity] = sample
        self._count += 1

    def extend(self, block: FloatArray) -> None:
        """Append ``block`` (shape ``(columns, n)``, oldest first) in one write: what a stored
        history of tens of thousands of samples needs (a loop of ``append`` took ~60 ms)."""
        if block.ndim != 2 or block.shape[0] != self.columns:
            raise ValueError(f"expected a block of {self.columns} rows, got {block.shape}")
        count = block.shape[1]
        if count > self.capacity:
            block = block[:, -self.capacity :]
            self._count += count - self.capacity
        where = (self._count + np.arange(block.shape[1])) % self.capacity
        self._data[:, where] = block
        self._data[:, where + self.capacity] = block
        self._count += block.shape[1]

    def clear(self) -> None:
        self._count = 0

    def window(self) -> FloatArray:
        """The latest samples, oldest first: shape ``(columns, len(self))``, a view (no copy)."""
        if self._count <= self.capacity:
            return self._data[:, : self._count]
        start = self._count % self.capacity
        return self._data[:, start : start + self.capacity]

    def column(self, index: int) -> FloatArray:
        """One series of ``window()``: contiguous, oldest first."""
        series: FloatArray = self.window()[index]
        return series

    def last(self) -> FloatArray | None:
        """The newest sample (one value per column), or None when empty."""
        if self._count == 0:
            return None
        return self._data[:, (self._count - 1) % self.capacity].copy()
