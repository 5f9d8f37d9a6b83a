"""The frame clock: frames only when asked for, at most one per ``FRAME_MS``, and dead
subscribers dropped."""

from __future__ import annotations

import sys
import time

import shiboken6
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from app.ui.frame_clock import FRAME_MS, FrameClock


class Counter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def on_frame(self, now: float) -> None:
        self.times.append(now)


def test_no_frame_runs_until_one_is_asked_for_and_a_burst_of_asks_is_one_frame(
    qtbot: QtBot,
) -> None:
    clock = FrameClock()
    counter = Counter()
    clock.listen(counter.on_frame)
    assert not clock.active
    qtbot.wait(60)
    assert counter.times == []  # idle: the timer is stopped
    for _ in range(50):
        clock.request()
    qtbot.waitUntil(lambda: len(counter.times) == 1)
    qtbot.wait(60)
    assert len(counter.times) == 1 and not clock.active


def test_frames_are_at_least_a_frame_apart_and_a_delay_is_kept(qtbot: QtBot) -> None:
    clock = FrameClock()
    counter = Counter()
    clock.listen(counter.on_frame)
    clock.frame()
    clock.request()  # right after a frame: waits for the next frame slot
    qtbot.waitUntil(lambda: len(counter.times) == 2)
    assert counter.times[1] - counter.times[0] >= FRAME_MS / 1000 - 0.002
    asked = time.monotonic()
    clock.request(0.1)
    clock.request(0.02)  # an earlier ask does not lose the later one
    qtbot.waitUntil(lambda: len(counter.times) == 4, timeout=2000)
    assert counter.times[3] - asked >= 0.1 - 0.002
    assert counter.times[2] - asked < 0.09


def test_a_destroyed_subscriber_is_dropped_and_a_failing_one_does_not_starve_others(
    qtbot: QtBot,
) -> None:
    clock = FrameClock()
    gone, kept = Counter(), Counter()
    clock.listen(gone.on_frame)

    def broken(_: float) -> None:
        raise RuntimeError("a broken view")

    clock.listen(broken)
    clock.listen(kept.on_frame)
    gone.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(gone))  # its Python wrapper lingers
    errors: list[BaseException] = []

    hook = sys.excepthook
    sys.excepthook = lambda _t, value, _tb: errors.append(value)
    try:
        clock.frame()
    finally:
        sys.excepthook = hook
    assert len(kept.times) == 1 and len(errors) == 1
    assert gone.times == []  # a deleted widget is never called


def test_a_frame_that_comes_a_hair_early_keeps_the_later_request(qtbot: QtBot) -> None:
    """Another view's frame just before a deadline must not swallow the deadline's frame:
    a view that checks ``now >= due`` would otherwise wait forever."""
    now = [10.0]
    clock = FrameClock(clock=lambda: now[0])
    counter = Counter()
    clock.listen(counter.on_frame)
    clock.request(0.250)  # due at 10.250
    now[0] = 10.2495  # half a millisecond early (another view's frame)
    clock.frame()
    still_asked = clock.active  # the deadline's frame is still asked for
    now[0] = 10.250
    clock.frame()
    assert (still_asked, clock.active) == (True, False)
    assert counter.times == [10.2495, 10.250]
