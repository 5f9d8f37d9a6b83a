"""One frame clock for every live view (design.md §9).

Why: each live view used to own its timers (a flush timer, a fade timer, an age timer, a
re-sort timer...), so an idle terminal woke many times a second and a busy one painted twice
per tick. Here views only *ask* for a frame — now, or after a delay (a fade's next step, the
next second of an age) — and one single-shot timer serves them all, at most ``FRAME_MS`` apart
(≤ 60 Hz). When nobody asked, the timer is stopped: an idle terminal does nothing at all.

Fresh data does not wait behind another view's frame: a view may ask ``soon`` when its own
last frame is at least ``FRAME_MS`` old (the watchlist does for new prices), so each view still
runs at most 60 frames a second while a price never queues behind a fade step.

A frame calls every subscriber with the frame's monotonic time; a subscriber does its work only
if something changed (it asked for this frame, or has pending data) and asks again if it wants
a later one. A subscriber that has more work than its slice (about ``SLICE_SECONDS`` of one
event-loop turn) asks for ``request(soon=True)``: the rest runs on the next turn, after Qt has
painted and handled input.

Subscribers are held weakly (a bound method of a widget goes with the widget); the shared
clock (``shared_frame_clock``) lives as long as the application.
"""

from __future__ import annotations

import heapq
import math
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer

#: The shortest time between two frames (ms): 60 frames a second at most.
FRAME_MS = 16
#: The work one subscriber should do in one event-loop turn before asking for more (s).
SLICE_SECONDS = 0.004

Clock = Callable[[], float]
FrameCallback = Callable[[float], None]


class FrameClock(QObject):
    """A per-frame tick, run only when asked for."""

    def __init__(self, parent: QObject | None = None, *, clock: Clock = time.monotonic) -> None:
        super().__init__(parent)
        self._clock = clock
        self._subscribers: list[Callable[[], FrameCallback | None]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.frame)
        self._last = -math.inf
        #: Times frames were asked for (a heap); the timer serves the earliest.
        self._wanted: list[float] = []
        self._due = math.inf
        #: Frames run so far (for tests and benchmarks).
        self.frames = 0

    def listen(self, callback: FrameCallback) -> None:
        """Call ``callback(now)`` on every frame. A bound method is held weakly, and a method
        of a QObject is dropped when that object is destroyed (its Python wrapper may outlive
        it, and a frame must not reach a deleted widget)."""
        reference: Callable[[], FrameCallback | None]
        owner = getattr(callback, "__self__", None)
        if owner is not None and hasattr(callback, "__func__"):
            reference = weakref.WeakMethod(callback)
        else:

            def reference(callback: FrameCallback = callback) -> FrameCallback | None:
                return callback

        self._subscribers.append(reference)

    def request(self, delay: float = 0.0, *, soon: bool = False) -> None:
        """A frame ``delay`` seconds from now (not sooner than ``FRAME_MS`` after the last
        one, unless ``soon``: the rest of a sliced job, on the next event-loop turn)."""
        now = self._clock()
        due = now + max(0.0, delay)
        if not soon:
            due = max(due, self._last + FRAME_MS / 1000)
        heapq.heappush(self._wanted, due)
        self._arm(now)

    def _arm(self, now: float) -> None:
        """The timer for the earliest frame asked for (stopped when none is)."""
        if not self._wanted:
            self._timer.stop()
            self._due = math.inf
            return
        due = self._wanted[0]
        if self._timer.isActive() and self._due <= due:
            return
        self._due = due
        self._timer.start(max(0, math.ceil((due - now) * 1000)))

    def now(self) -> float:
        """The clock's time (monotonic seconds)."""
        return self._clock()

    @property
    def active(self) -> bool:
        """A frame is scheduled."""
        return self._timer.isActive()

    def frame(self) -> None:
        """Run one frame now (the timer calls this; tests may too)."""
        self._timer.stop()
        self._due = math.inf
        now = self._clock()
        self._last = now
        self.frames += 1
        # Only what is due now is served: a view compares its own deadline with ``now``, so a
        # request dropped a hair early would leave that view waiting for a frame never asked
        # for (a chart that stops drawing, a freshness deadline that never turns stale).
        while self._wanted and self._wanted[0] <= now:
            heapq.heappop(self._wanted)
        alive = []
        for reference in list(self._subscribers):
            callback = reference()
            if callback is None:
                continue
            owner = getattr(callback, "__self__", None)
            if isinstance(owner, QObject) and not shiboken6.isValid(owner):
                continue  # its widget was deleted (the Python wrapper lingers)
            alive.append(reference)
            try:
                callback(now)
            except Exception:  # one broken view must not starve the others
                sys.excepthook(*sys.exc_info())
        if len(alive) != len(self._subscribers):
            self._subscribers = [ref for ref in self._subscribers if ref() is not None]
        self._arm(self._clock())


_shared: dict[str, Any] = {}


def shared_frame_clock() -> FrameClock:
    """The application's frame clock (one per QCoreApplication)."""
    app = QCoreApplication.instance()
    clock = _shared.get("clock")
    if clock is None or _shared.get("app") is not app:
        clock = FrameClock(app)
        _shared["clock"], _shared["app"] = clock, app
    assert isinstance(clock, FrameClock)
    return clock
