"""Long pure-Python work on the event loop, in slices: a job is a generator that does a little
work per step (``yield`` between blocks of rows); ``sliced`` runs ``SLICE_S`` of steps per turn
of the loop and then lets Qt paint and run its timers, so 100,000 records never freeze the
terminal.

Why not a worker thread: the work is pure Python, so a thread runs it no sooner (the GIL), and
every Python call the GUI thread makes meanwhile — a table paint asks its model for data about
3,000 times — waits up to the interpreter's 5 ms switch interval for the GIL. Measured with
100,000 ledger rows, building a page's cells on a worker thread stalled the loop 0.5–0.7 s;
slices stay near the slice length.

While a job runs, the cyclic garbage collector is paused: a job builds lists and dicts of
100,000 items, which each automatic pass would walk again (passes of 5–170 ms measured in the
middle of a load). When the last job ends after more than one slice, what survived it (rows,
cells, indexes: long-lived and free of cycles) is frozen out of the collector's passes
(``gc.freeze``) before collection resumes — else the first pass walks it all (40–70 ms
measured) and every full pass after (0.1–0.75 s at 100,000 rows). Reference counting still
frees frozen objects that are dropped; only cyclic garbage made while such a job ran is never
collected (a few objects per job).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")
Steps = Generator[None, None, T]

#: Work per turn of the event loop (s): a quarter of a 60 Hz frame.
SLICE_S = 0.002

_running = 0  # sliced jobs under way
_paused_gc = False  # whether the first of them turned automatic collection off
_long = False  # whether one of them took more than a slice (big data: worth freezing)


def _step(steps: Steps[T]) -> list[T]:
    """One step of ``steps``: ``[its result]`` once it has ended, else ``[]`` (both runners')."""
    try:
        next(steps)
    except StopIteration as done:
        return [done.value]
    return []


async def sliced(steps: Steps[T]) -> T:
    """Run a generator job on the event loop, ``SLICE_S`` of steps per turn; its result."""
    global _running, _paused_gc, _long
    if _running == 0 and gc.isenabled():
        gc.disable()
        _paused_gc = True
    _running += 1
    try:
        deadline = time.perf_counter() + SLICE_S
        while not (result := _step(steps)):
            if time.perf_counter() >= deadline:
                _long = True
                await asyncio.sleep(0)
                deadline = time.perf_counter() + SLICE_S
        return result[0]
    finally:
        _running -= 1
        if _running == 0 and _paused_gc:
            if _long:  # a small job (one slice) made too little to be worth freezing
                gc.freeze()
            _paused_gc = _long = False
            gc.enable()


def run_now(steps: Steps[T]) -> T:
    """Run a generator job to its end at once (small inputs, tests)."""
    while not (result := _step(steps)):
        pass
    return result[0]
