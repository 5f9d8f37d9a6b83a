"""The watchlist panel under load: 200 pairs, a full snapshot every 250 ms, event-loop stalls.

Run: ``.venv/bin/python -m tests.perf.bench_top_of_book [--pairs 200] [--seconds 20]``.
Offscreen, on the app's qasync loop, a window shows a real ``TopOfBookPanel`` (model, sort proxy,
table view) whose session is never started: each snapshot of synthetic TopOfBook values (Decimal
random walks) is published on the session's top-of-book topic, so it takes the panel's own path:
topic -> ``SessionBridge.topOfBook`` -> the panel's conflating slot -> ``model.update`` -> view.
The table is sorted by spread (bp), so the slow re-sort runs too. A 5 ms heartbeat timer measures
the gaps between its shots: the longest gap is the longest event-loop stall. Prints figures and
asserts nothing; not collected by pytest.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import asyncio
import itertools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

from app.api import ClientSettings, ServiceClient
from app.domain.money import AssetPair
from app.domain.records import TopOfBook
from app.services.session import Environment, TerminalSession
from app.ui.bridge import SessionBridge
from app.ui.formatting import Precision
from app.ui.panels.base import PanelContext
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.qt import QEventLoop
from app.ui.settings import open_settings

HEARTBEAT_MS = 5
FEED_MS = 250


class RandomWalks:
    """Top of book for ``count`` synthetic pairs, one Decimal random-walk step per snapshot."""

    def __init__(self, count: int, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.pairs: list[AssetPair] = []
        self.mids: list[Decimal] = []
        self.ticks: list[Decimal] = []
        for number in range(count):
            if number % 4 == 3:  # a quarter quoted in BTC, small prices with 8 decimals
                pair = AssetPair(f"S{number:03d}", "BTC")
                tick = Decimal("0.00000001")
                mid = Decimal(self.rng.randint(1_000, 5_000_000)) * tick
            else:
                pair = AssetPair(f"S{number:03d}", "USD")
                tick = Decimal("0.01")
                mid = Decimal(self.rng.randint(50, 9_000_000)) * tick
            self.pairs.append(pair)
            self.mids.append(mid)
            self.ticks.append(tick)

    def names(self) -> list[str]:
        return [str(pair) for pair in self.pairs]

    def snapshot(self) -> dict[str, TopOfBook]:
        rng = self.rng
        books: dict[str, TopOfBook] = {}
        for number, pair in enumerate(self.pairs):
            tick = self.ticks[number]
            step = self.mids[number] * Decimal(rng.randint(-5, 5)) / Decimal(10_000)
            mid = max(tick * 10, (self.mids[number] + step).quantize(tick))
            self.mids[number] = mid
            half = tick * rng.randint(1, 5)
            bid, ask = mid - half, mid + half
            books[str(pair)] = TopOfBook(
                pair,
                bid,
                Decimal(rng.randint(1, 500_000)) / 100,
                ask,
                Decimal(rng.randint(1, 500_000)) / 100,
                ask - bid,
            )
        return books


class Spans:
    """Wall-clock spans of the instrumented steps, to tell what filled the longest stalls."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, float, float]] = []

    def wrap(self, label: str, function: Callable[..., None]) -> Callable[..., None]:
        def wrapper(*args: object) -> None:
            started = time.perf_counter()
            function(*args)
            self.spans.append((label, started, time.perf_counter()))

        return wrapper

    def durations(self, label: str) -> list[float]:
        return [end - start for name, start, end in self.spans if name == label]

    def inside(self, start: float, end: float) -> dict[str, float]:
        """Seconds of each step that overlap ``start``..``end``."""
        found: dict[str, float] = {}
        for name, begun, ended in self.spans:
            overlap = min(end, ended) - max(start, begun)
            if overlap > 0:
                found[name] = found.get(name, 0.0) + overlap
        return found


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(name: str, seconds: list[float]) -> None:
    if not seconds:
        print(f"{name:<30} none")
        return
    ms = [s * 1000 for s in seconds]
    print(
        f"{name:<30} n={len(ms):5d}  median {statistics.median(ms):7.2f} ms  "
        f"p99 {percentile(ms, 0.99):7.2f} ms  max {max(ms):7.2f} ms"
    )


async def bench(app: QApplication, pair_count: int, seconds: float, config: Path) -> None:
    walks = RandomWalks(pair_count)
    client = ServiceClient(ClientSettings("http://127.0.0.1:9"))  # never called
    session = TerminalSession(client, Environment("http://127.0.0.1:9", "bench", "bench"))
    session.available_pairs = walks.names()
    session.set_watchlist(walks.names())
    bridge = SessionBridge(session)
    context = PanelContext(bridge, Precision(), open_settings(config), lambda _l, _m: None)

    window = QMainWindow()
    panel = TopOfBookPanel(context)
    window.setCentralWidget(panel)
    window.resize(1400, 1000)
    window.show()
    panel.table.sortByColumn(panel.model.column("spread_bps"), Qt.SortOrder.DescendingOrder)

    # Instance attributes shadow the methods the panel calls by name (connections made at
    # construction, e.g. the model's own timers, keep the originals).
    spans = Spans()
    model, proxy, table = panel.model, panel.proxy, panel.table
    model.update = spans.wrap("model.update", model.update)  # type: ignore[method-assign]
    proxy.resort = spans.wrap("proxy re-sort", proxy.resort)  # type: ignore[method-assign]
    table.paintEvent = spans.wrap("table paint", table.paintEvent)  # type: ignore[method-assign]

    def feed() -> None:
        books = walks.snapshot()
        session.top_of_book.data.publish(books)  # the poller's own publication path

    beats: list[float] = []
    feeder = QTimer()
    feeder.setTimerType(Qt.TimerType.PreciseTimer)
    feeder.setInterval(FEED_MS)
    feeder.timeout.connect(spans.wrap("snapshot + publish", feed))
    pulse = QTimer()
    pulse.setTimerType(Qt.TimerType.PreciseTimer)
    pulse.setInterval(HEARTBEAT_MS)
    pulse.timeout.connect(lambda: beats.append(time.perf_counter()))

    feed()
    await asyncio.sleep(1.0)  # first data, column fit, first paints: not measured
    spans.spans.clear()
    feeder.start()
    pulse.start()
    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.sleep(seconds)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    pulse.stop()
    feeder.stop()

    rows = model.rowCount()
    print(
        f"top-of-book panel, {rows} pairs, all of them new every {FEED_MS} ms (random walks), "
        f"sorted by spread (bp), {table.viewport().width()}x{table.viewport().height()} px "
        f"viewport, platform {QApplication.platformName()}, {elapsed:.1f} s"
    )
    print(f"process CPU {cpu:.1f} s = {100 * cpu / elapsed:.0f} % of one core")
    updates = spans.durations("model.update")
    report("snapshot + publish (+slot)", spans.durations("snapshot + publish"))
    report("model.update, 200 rows", updates)
    if updates:
        per_row = statistics.median(updates) / max(1, rows) * 1e6
        print(f"{'model.update per row':<30} median {per_row:7.1f} µs")
    report("proxy re-sort", spans.durations("proxy re-sort"))
    report("table paint", spans.durations("table paint"))

    gaps = [(later - earlier, earlier, later) for earlier, later in itertools.pairwise(beats)]
    report(f"heartbeat gap ({HEARTBEAT_MS} ms timer)", [gap for gap, _, _ in gaps])
    if not gaps:
        return
    longest = sorted(gaps, reverse=True)
    print(f"longest event-loop stall      {longest[0][0] * 1000:7.2f} ms")
    for limit in (16, 33, 50):
        count = sum(1 for gap, _, _ in gaps if gap * 1000 > HEARTBEAT_MS + limit)
        print(f"stalls > {limit} ms beyond the beat  {count:5d}")
    print("the five longest gaps and what ran in them:")
    for gap, earlier, later in longest[:5]:
        parts = spans.inside(earlier, later)
        known = sum(parts.values())
        detail = ", ".join(f"{name} {value * 1000:.1f}" for name, value in parts.items())
        print(f"  {gap * 1000:6.1f} ms: {detail or '-'}; other {max(0.0, gap - known) * 1000:.1f}")

    window.close()
    panel.deleteLater()
    bridge.detach()
    await client.aclose()
    app.processEvents()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    options = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    with (
        tempfile.TemporaryDirectory() as config,
        asyncio.Runner(loop_factory=lambda: QEventLoop(app)) as runner,
    ):
        runner.run(bench(app, options.pairs, options.seconds, Path(config)))


if __name__ == "__main__":
    main()
