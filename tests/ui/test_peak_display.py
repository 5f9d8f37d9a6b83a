"""The lines' storage: spans of time reduced to their lowest and highest value, in
arrays made once, broken over pauses; a chart's memory does not grow with its history."""

from __future__ import annotations

import numpy as np
import pytest

from app.ui.peak_display import PeakDisplay
from app.ui.ring_buffer import FloatArray, RingBuffer


def series(times: FloatArray) -> FloatArray:
    """These times and a saw-tooth value (0..6) with one spike (100) and one dip (-100)."""
    values = np.arange(len(times)) % 7.0
    values[len(times) // 3] = 100.0
    values[2 * len(times) // 3] = -100.0
    return np.vstack([times, values])


def peaks(data: FloatArray, spans: list[tuple[int, int]]) -> list[float]:
    """Each span's lowest and highest value, high first when the span ends below its start."""
    found: list[float] = []
    for a, b in spans:
        low, high = float(data[1, a:b].min()), float(data[1, a:b].max())
        found += [high, low] if data[1, b - 1] < data[1, a] else [low, high]
    return found


def test_spans_become_their_first_and_last_time_and_lowest_and_highest_value() -> None:
    display = PeakDisplay(2, max_buckets=4)
    data = series(np.arange(20.0))  # 4 spans of 5 samples
    out = display.reduce(data, buckets=4)
    assert out[0].tolist() == [0, 4, 5, 9, 10, 14, 15, 19, 19]  # and the last sample
    assert out[1].tolist() == [*peaks(data, [(0, 5), (5, 10), (10, 15), (15, 20)]), data[1, -1]]
    # Spans are of time: 18 samples over 17 s in 4 spans of 4.25 s.
    data = series(np.arange(18.0))
    out = display.reduce(data, buckets=4)
    assert out[0].tolist() == [0, 4, 5, 8, 9, 12, 13, 17, 17]
    assert out[1].tolist() == [*peaks(data, [(0, 5), (5, 9), (9, 13), (13, 18)]), data[1, -1]]
    # Up to two samples a bucket: drawn as they are.
    few = series(np.arange(8.0))
    assert display.reduce(few, buckets=4).tolist() == few.tolist()


def test_a_pause_breaks_the_line_at_its_middle_time() -> None:
    display = PeakDisplay(2, max_buckets=10)
    few = display.reduce(series(np.array([0.0, 1, 2, 10, 11])), buckets=10, gap=5)
    assert few[0].tolist() == [0, 1, 2, 6, 10, 11]
    assert np.isnan(few[1, 3]) and np.isfinite(np.delete(few[1], 3)).all()
    # Reduced: 100 samples, a pause of 100 s, 100 more, in 10 spans of 29.9 s (empty ones
    # skipped); the break is between spans, the times stay sorted.
    data = series(np.concatenate([np.arange(100.0), np.arange(200.0, 300.0)]))
    out = display.reduce(data, buckets=10, gap=5)
    assert out[0].tolist() == [
        *(0, 29, 30, 59, 60, 89, 90, 99),
        149.5,
        *(200, 209, 210, 239, 240, 269, 270, 299),
        299,
    ]
    assert np.isnan(out[1, 8])
    assert np.delete(out[1], 8).tolist() == [
        *peaks(data, [(0, 30), (30, 60), (60, 90), (90, 100), (100, 110), (110, 140)]),
        *peaks(data, [(140, 170), (170, 200)]),
        data[1, -1],
    ]
    # No pause longer than the gap: no break.
    assert np.isfinite(display.reduce(data, buckets=10, gap=200)[1]).all()


def test_the_storage_is_made_once_and_never_outgrown() -> None:
    display = PeakDisplay(2, max_buckets=64)
    first = display.reduce(series(np.arange(10.0)), buckets=64)
    for n in (100, 1_000, 100_000):
        out = display.reduce(series(np.arange(float(n))), buckets=64)
        assert out.shape[1] <= 2 * 64 + 1
        assert np.shares_memory(out, first)  # the same arrays, whatever the history's length
        assert out[1].max() == 100 and out[1].min() == -100  # no peak is lost
    # More buckets than it was made for, every sample a pause: still within its storage.
    spread = series(np.arange(100_000.0) * 10)
    assert display.reduce(spread, buckets=10_000, gap=5).shape[1] <= display.capacity


def test_a_wrapped_ring_window_is_reduced_in_order() -> None:
    ring = RingBuffer(50, 2)
    data = series(np.arange(130.0))
    ring.extend(data)  # the ring wrapped twice: its window starts mid-storage
    out = PeakDisplay(2, max_buckets=5).reduce(ring.window(), buckets=5)
    assert out[0].tolist() == [80, 89, 90, 99, 100, 109, 110, 119, 120, 129, 129]
    spans = [(i, i + 10) for i in range(80, 130, 10)]
    assert out[1].tolist() == pytest.approx([*peaks(data, spans), data[1, -1]])


def test_a_display_needs_a_column_and_a_bucket() -> None:
    with pytest.raises(ValueError, match="one column and one bucket"):
        PeakDisplay(0, 4)
    with pytest.raises(ValueError, match="one column and one bucket"):
        PeakDisplay(2, 0)
    with pytest.raises(ValueError, match="expected 2 rows, got 3"):
        PeakDisplay(2, 4).reduce(np.zeros((3, 4)), 4)


def test_a_falling_column_falls_and_the_line_ends_on_the_last_sample() -> None:
    """Each column was once drawn low then high whatever the prices did, so a
    fall inside the last column ended the line at that column's high, shown as the latest."""
    display = PeakDisplay(2, max_buckets=1000)
    falling = np.stack([np.arange(10_000.0), 100 - np.arange(10_000.0) / 1000])
    out = display.reduce(falling, buckets=1000)
    assert out[0, -1] == 9_999 and out[1, -1] == falling[1, -1] == 90.001
    pairs = out[1, :-1].reshape(-1, 2)
    assert (pairs[:, 0] > pairs[:, 1]).all()  # every column drawn high, then low
    assert np.all(np.diff(out[0]) >= 0)  # times stay sorted
    # A column that ends above its start is drawn low then high.
    rising = np.stack([np.arange(100.0), np.array([5.0, 1, 9, 6] * 25)])
    pairs = display.reduce(rising, buckets=25)[1, :-1].reshape(-1, 2)
    assert pairs.tolist() == [[1, 9]] * 25
