"""The watchlist under load: tick-to-paint latency, event-loop stalls, CPU and paints.

Run: ``.venv/bin/python -m tests.perf.bench_watchlist [--pairs 500] [--hz 4] [--seconds 20]``.

Offscreen, on the app's qasync loop, a 1400×900 window shows a real ``TopOfBookPanel`` whose
session is never started: each snapshot of synthetic ``TopOfBook`` values (Decimal random walks,
every pair moves) is published on the session's top-of-book topic, the way the poller publishes
it, so it takes the panel's own path: topic -> ``SessionBridge.topOfBook`` -> the panel -> the
model -> the view. Two phases of ``--seconds`` each: watchlist order, then sorted by spread (bp)
descending (so re-sorting runs too).

Tick-to-paint: from the publish of a snapshot to the end of the first paint of the table's
viewport that starts after the model took it in (``model.flush_staged``: a frame applying the
ticks staged in the model's buffer). A 5 ms heartbeat timer
measures the event loop's stalls (the longest gap between its shots, minus nothing: the beat is
part of the figure). CPU is the process's own time over wall time. Prints figures and ends with
one JSON line; asserts nothing and is not collected by pytest.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import itertools
import json
import random
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.domain.money import AssetPair
from app.domain.records import TopOfBook
from app.services.session import Environment, TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.settings import open_settings
from tests.perf.options import bench_parser
from tests.perf.qt_runner import run_qt

HEARTBEAT_MS = 5


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


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Latency:
    """Publish times waiting for the model, then for the next paint that ends after it."""

    def __init__(self) -> None:
        self.published: list[float] = []
        self.taken: list[float] = []
        self.taken_at: float = 0.0
        self.latencies: list[float] = []
        self.paints = 0
        self.paint_seconds: list[float] = []
        self.on = False

    def publish(self, moment: float) -> None:
        if self.on:
            self.published.append(moment)

    def took(self) -> None:
        self.taken.extend(self.published)
        self.published.clear()
        self.taken_at = time.perf_counter()

    def painted(self, started: float, ended: float) -> None:
        if not self.on:
            return
        self.paints += 1
        self.paint_seconds.append(ended - started)
        if self.taken and started >= self.taken_at:
            self.latencies.extend(ended - moment for moment in self.taken)
            self.taken.clear()


def wrap(before: Callable[[], None], function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: object) -> Any:
        result = function(*args)
        before()
        return result

    return wrapper


async def phase(
    panel: TopOfBookPanel,
    publish: Callable[[], None],
    latency: Latency,
    hz: float,
    seconds: float,
) -> dict[str, float]:
    beats: list[float] = []
    feeder = QTimer()
    feeder.setTimerType(Qt.TimerType.PreciseTimer)
    feeder.setInterval(round(1000 / hz))
    feeder.timeout.connect(publish)
    pulse = QTimer()
    pulse.setTimerType(Qt.TimerType.PreciseTimer)
    pulse.setInterval(HEARTBEAT_MS)
    pulse.timeout.connect(lambda: beats.append(time.perf_counter()))
    publish()
    await asyncio.sleep(1.0)  # warm-up: not measured
    latency.latencies.clear()
    latency.paint_seconds.clear()
    latency.paints = 0
    # a publish of the phase before (or of the warm-up) still waiting for a paint is not this
    # phase's: it measured the pause between the phases (1.3–1.5 s "p99" in a sorted phase)
    latency.published.clear()
    latency.taken.clear()
    latency.on = True
    feeder.start()
    pulse.start()
    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.sleep(seconds)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    latency.on = False
    pulse.stop()
    feeder.stop()
    await asyncio.sleep(0.3)
    gaps = [later - earlier for earlier, later in itertools.pairwise(beats)]
    ms = [value * 1000 for value in latency.latencies] or [float("nan")]
    paint_ms = [value * 1000 for value in latency.paint_seconds] or [float("nan")]
    return {
        "p50_ms": round(percentile(ms, 0.5), 2),
        "p99_ms": round(percentile(ms, 0.99), 2),
        "max_stall_ms": round(max(gaps, default=0.0) * 1000, 2),
        "cpu_pct": round(100 * cpu / elapsed, 1),
        "paints": latency.paints,
        "ticks": round(elapsed * hz),
        "paint_p50_ms": round(percentile(paint_ms, 0.5), 2),
        "paint_max_ms": round(max(paint_ms), 2),
        "latencies": len(latency.latencies),
    }


class ShownWatchlist:
    """A real ``TopOfBookPanel`` in a 1400×900 window over a session that is never started
    (its client is never called): ticks published on the session's topic take the app's path."""

    def __init__(self, walks: RandomWalks, config: Path) -> None:
        self.client = ServiceClient(ClientSettings("http://127.0.0.1:9"))  # never called
        self.session = TerminalSession(
            self.client, Environment("http://127.0.0.1:9", "bench", "bench")
        )
        self.session.available_pairs = walks.names()
        self.session.set_watchlist(walks.names())
        self.bridge = SessionBridge(Terminal(self.session))
        settings = open_settings(config)
        context = PanelContext(self.bridge, Precision(), settings, lambda _l, _m: None)
        self.window = QMainWindow()
        self.panel = TopOfBookPanel(context)
        self.window.setCentralWidget(self.panel)
        self.window.resize(1400, 900)
        self.window.show()

    async def close(self) -> None:
        self.window.close()
        self.panel.deleteLater()
        self.bridge.detach()
        await self.client.aclose()


async def bench(app: QApplication, pairs: int, hz: float, seconds: float, config: Path) -> None:
    walks = RandomWalks(pairs)
    shown = ShownWatchlist(walks, config)
    session, panel = shown.session, shown.panel

    latency = Latency()
    model, table = panel.model, panel.table
    model.flush_staged = wrap(latency.took, model.flush_staged)  # type: ignore[method-assign]
    paint = table.paintEvent

    def timed_paint(event: object) -> None:
        started = time.perf_counter()
        paint(event)  # type: ignore[arg-type]
        latency.painted(started, time.perf_counter())

    table.paintEvent = timed_paint  # type: ignore[method-assign]

    def publish() -> None:
        books = walks.snapshot()
        latency.publish(time.perf_counter())
        session.top_of_book.data.publish(books)  # the poller's own publication path

    results: dict[str, dict[str, float]] = {}
    results["unsorted"] = await phase(panel, publish, latency, hz, seconds)
    table.sortByColumn(model.column("spread_bps"), Qt.SortOrder.DescendingOrder)
    results["sorted"] = await phase(panel, publish, latency, hz, seconds)

    print(
        f"watchlist, {model.rowCount()} pairs at {hz:g} Hz, {seconds:g} s per phase, "
        f"viewport {table.viewport().width()}x{table.viewport().height()} px, "
        f"platform {QApplication.platformName()}"
    )
    for name, figures in results.items():
        print(f"{name:<9} " + "  ".join(f"{key} {value}" for key, value in figures.items()))
    keys = ("p50_ms", "p99_ms", "max_stall_ms", "cpu_pct", "paints")
    summary: dict[str, Any] = {
        "p50_ms": max(results[name]["p50_ms"] for name in results),
        "p99_ms": max(results[name]["p99_ms"] for name in results),
        "max_stall_ms": max(results[name]["max_stall_ms"] for name in results),
        "cpu_pct": max(results[name]["cpu_pct"] for name in results),
        "paints": sum(int(results[name]["paints"]) for name in results),
    }
    for name, figures in results.items():
        summary[name] = {key: figures[key] for key in keys}
    await shown.close()
    app.processEvents()
    print(json.dumps(summary))


def main() -> None:
    options = bench_parser(__doc__, pairs=500, hz=4.0, seconds=20.0).parse_args()
    run_qt(lambda app, config: bench(app, options.pairs, options.hz, options.seconds, config))


if __name__ == "__main__":
    main()
