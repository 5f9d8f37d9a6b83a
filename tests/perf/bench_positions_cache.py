"""The positions cache written at many ledger entries: how long its longest step holds the loop.

Run: ``.venv/bin/python -m tests.perf.bench_positions_cache [--entries 100000]``.
A ``PositionsCache`` on a file in a scratch folder (WAL, as the terminal opens it) takes
``--entries`` synthetic ledger entries (trade legs) three ways, each step timed as ``sliced``
would run it: added to an empty cache (a first refresh), replaced (a rebuild after the cache
disagreed with the service), and its first marks written; then the WAL is checkpointed (what
the service does on a worker thread after a refresh). The cyclic collector is off, as it is
while a sliced job runs. Prints figures and ends with one JSON line; asserts nothing.
"""

from __future__ import annotations

import gc
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from app.domain.positions import MarkKey
from app.domain.records import LedgerEntry
from app.services.positions import FirstMark, PositionsCache
from app.services.slices import Steps
from tests.perf.options import bench_parser


def entries_of(count: int) -> list[LedgerEntry]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        LedgerEntry(
            n // 2,
            "bench",
            f"tx-{n // 2:08d}",
            "BTC" if n % 2 else "USD",
            Decimal("1.2345") * (n % 7 + 1),
            "trade",
            "source" if n % 2 else "destination",
            start + timedelta(seconds=n),
        )
        for n in range(count)
    ]


def timed(steps: Steps[None]) -> dict[str, float]:
    """Run ``steps`` to the end; the longest step and the whole, in ms, and the step count."""
    longest, count, started = 0.0, 0, time.perf_counter()
    while True:
        begun = time.perf_counter()
        try:
            next(steps)
        except StopIteration:
            break
        finally:
            longest = max(longest, time.perf_counter() - begun)
            count += 1
    return {
        "longest_step_ms": round(longest * 1000, 2),
        "total_ms": round((time.perf_counter() - started) * 1000, 1),
        "steps": count,
    }


def main() -> None:
    options = bench_parser(__doc__, entries=100_000).parse_args()
    entries = entries_of(options.entries)
    seen = datetime(2026, 6, 1, tzinfo=UTC)
    marks = {
        MarkKey(e.ordering, e.transaction_id, e.asset, e.event_time): FirstMark(
            Decimal("91234.5"), seen
        )
        for e in entries
        if e.asset == "BTC"
    }
    gc.disable()
    with tempfile.TemporaryDirectory() as folder:
        cache = PositionsCache(Path(folder) / "positions.db")
        results = {
            "add": timed(cache.add_entry_steps("svc", "bench", entries)),
            "replace": timed(cache.replace_entry_steps("svc", "bench", entries)),
            "first marks": timed(cache.record_mark_steps("svc", "bench", "USD", marks)),
        }
        started = time.perf_counter()
        cache.checkpoint()
        checkpoint_ms = round((time.perf_counter() - started) * 1000, 1)
        cache.close()
    gc.enable()
    print(f"positions cache, {len(entries):,} entries, {len(marks):,} first marks")
    for name, figures in results.items():
        print(
            f"{name:<12} longest step {figures['longest_step_ms']:6.2f} ms, "
            f"{figures['steps']:4.0f} steps, {figures['total_ms']:7.1f} ms in all"
        )
    print(f"checkpoint (worker thread in the terminal) {checkpoint_ms} ms")
    print(json.dumps({"bench": "positions_cache", **results, "checkpoint_ms": checkpoint_ms}))


if __name__ == "__main__":
    main()
