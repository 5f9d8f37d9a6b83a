"""One parent worked in the foreground: a line (or a JSON object) per change until it ends, and
Ctrl-C as a safe pause.

Ctrl-C pauses the parent through the engine (no new child; a child already sent is never
cancelled — the service has no cancel — and is still followed), then waits for the children
out to be answered, at most until the latest one's end time plus ``GRACE`` seconds; a second
Ctrl-C stops waiting. The parent stays in the store, paused, for ``tradeterm algo resume``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from app.cli.algo_progress import Progress
from app.domain.display import Precision
from app.services.algos.engine import ExecutionEngine
from app.services.algos.parents import Parent

#: Seconds past the latest child's end time to wait for its answer after Ctrl-C (the server
#: ends it at that time; the engine looks it up every few seconds).
GRACE = 5.0
#: However quiet the parent, its figures are looked at again this often.
LOOK_AGAIN = 1.0
INTERRUPT_NOTE = "paused by Ctrl-C"


class Exit(IntEnum):
    """The exit codes of ``tradeterm algo`` (documented in its ``--help``)."""

    FILLED = 0
    FAILED = 1
    USAGE = 2
    NETWORK = 3
    UNFILLED = 4
    PAUSED = 5
    INTERRUPTED = 130


@dataclass(frozen=True)
class Ending:
    """How the foreground run ended: the code, and a word for it in the summary."""

    code: Exit
    outcome: str  # filled, unfilled, stopped, paused, interrupted


def ending_of(parent: Parent, interrupted: bool) -> Ending:
    """A finished parent by its figures; an unfinished one by who paused it."""
    if parent.state == "done":
        if parent.filled >= parent.target:
            return Ending(Exit.FILLED, "filled")
        return Ending(Exit.UNFILLED, "unfilled")
    if parent.state == "stopped":
        return Ending(Exit.UNFILLED, "stopped")
    if interrupted:
        return Ending(Exit.INTERRUPTED, "interrupted")
    return Ending(Exit.PAUSED, "paused")


class Foreground:
    """Watches one parent of ``engine``; ``show`` gets each new ``Progress``, ``notice`` the
    words for a person (stderr) while Ctrl-C waits."""

    def __init__(
        self,
        engine: ExecutionEngine,
        parent: Parent,
        precision: Precision,
        show: Callable[[Progress], None],
        notice: Callable[[str], None],
        *,
        grace: float = GRACE,
    ) -> None:
        self.engine = engine
        self.parent = parent
        self.precision = precision
        self.show = show
        self.notice = notice
        self.grace = grace
        self.interrupts = 0
        self._changed = asyncio.Event()
        self._shown: Progress | None = None

    def interrupt(self) -> None:
        """Ctrl-C (a signal handler on the loop: nothing awaits between it and the pause)."""
        self.interrupts += 1
        if self.interrupts == 1 and self.parent.live:
            self.engine.pause(self.parent.id, INTERRUPT_NOTE)
        self._changed.set()

    async def run(self) -> Ending:
        unsubscribe = self.engine.changed.subscribe(self._on_change)
        try:
            self._refresh()
            while self.parent.live and not self.interrupts:
                await self._next_change()
            await self._children_answered()
            self._refresh()
        finally:
            unsubscribe()
        interrupted = self.interrupts > 0 and self.parent.note.startswith(INTERRUPT_NOTE)
        return ending_of(self.parent, interrupted)

    def _on_change(self, parent_id: str) -> None:
        if parent_id == self.parent.id:
            self._refresh()
            self._changed.set()

    def _refresh(self) -> None:
        progress = Progress.of(self.parent, self.precision)
        if progress != self._shown:
            self._shown = progress
            self.show(progress)

    async def _next_change(self) -> None:
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), LOOK_AGAIN)
        self._refresh()

    async def _children_answered(self) -> None:
        """Until no child is out, its end time plus the grace has passed, or Ctrl-C (again,
        when a Ctrl-C is what paused the parent: two in quick succession are both counted
        before this starts)."""
        stop_at = 2 if self.interrupts else 1
        told = False
        while self.parent.busy and self.interrupts < stop_at:
            left = self._seconds_left()
            if left <= 0:
                return
            if not told:
                told = True
                self.notice(
                    f"waiting up to {left:.0f} s for the children out: "
                    f"{self.parent.in_flight_words()} (Ctrl-C again to stop waiting)"
                )
            await self._next_change()

    def _seconds_left(self) -> float:
        ends = [child.end_at for child in self.parent.children if child.open and child.end_at]
        if not ends:
            return self.grace
        latest = max(ends)
        return (latest - self.engine.server_now()).total_seconds() + self.grace
