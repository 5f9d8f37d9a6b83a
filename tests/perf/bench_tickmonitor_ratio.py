"""Watchlist updates per second next to vn.py's ``TickMonitor`` (a ``QTableWidget``).

Run: ``.venv/bin/python -m tests.perf.bench_tickmonitor_ratio [--rows 1000] [--ticks 50000]
[--vnpy-python PATH] [--runs 1]``.

Ours: a real ``TopOfBookPanel`` (1400×900, offscreen) watching ``--rows`` pairs, all filled
first; then one pair's new top of book per update (``model.update``, the cost a tick has in
the model: raw values, flash, format and signal when in view), with the event loop run (and
the table painted) every 50 ticks. The ticks are made before timing (Decimal random walks).

vn.py: the same number of rows and ticks through ``TickMonitor.process_event`` (its cell-by-cell
``QTableWidget`` update with sorting on), painted every 50 ticks, run by ``--vnpy-python`` (an
interpreter where ``vnpy`` imports); ``null`` when none is given or it fails. Prints figures and
ends with one JSON line ``{"ours", "vnpy", "ratio", ...}``; asserts nothing. With ``--runs N``
each side runs N times (ours all first, in one process, then vn.py's) and the line gives the
medians, their ratio, every run's figure and the load average when the runs began (the
machine is shared: read the ratio with the load).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.domain.records import TopOfBook
from tests.perf.bench_watchlist import RandomWalks, ShownWatchlist
from tests.perf.qt_runner import run_qt

PAINT_EVERY = 50

VNPY_SCRIPT = r"""
import json, os, sys, time, random
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from datetime import datetime
from vnpy.event import EventEngine, Event
from vnpy.trader.engine import MainEngine
from vnpy.trader.event import EVENT_TICK
from vnpy.trader.object import TickData
from vnpy.trader.constant import Exchange
from vnpy.trader.ui import create_qapp
from vnpy.trader.ui.widget import TickMonitor
rows, ticks, every = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
app = create_qapp()
events = EventEngine()
engine = MainEngine(events)
monitor = TickMonitor(engine, events)
monitor.resize(1400, 900)
monitor.show()
rng = random.Random(7)
now = datetime.now()
def tick(i, price):
    return TickData(gateway_name="BENCH", symbol=f"S{i:04d}", exchange=Exchange.LOCAL,
        datetime=now, last_price=price, volume=1, bid_price_1=price - 0.01,
        ask_price_1=price + 0.01, bid_volume_1=1, ask_volume_1=1)
for i in range(rows):
    monitor.process_event(Event(EVENT_TICK, tick(i, 100.0)))
app.processEvents()
made = [tick(n % rows, 100 + rng.randint(-500, 500) / 100) for n in range(ticks)]
started = time.perf_counter()
for n, item in enumerate(made):
    monitor.process_event(Event(EVENT_TICK, item))
    if n % every == 0:
        app.processEvents()
app.processEvents()
print(json.dumps({"updates_per_s": ticks / (time.perf_counter() - started)}))
engine.close()
"""


def run_vnpy(python: str | None, rows: int, ticks: int) -> float | None:
    if not python:
        return None
    try:
        done = subprocess.run(
            [python, "-c", VNPY_SCRIPT, str(rows), str(ticks), str(PAINT_EVERY)],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        value = json.loads(done.stdout.strip().splitlines()[-1])["updates_per_s"]
        return float(value)
    except (OSError, ValueError, KeyError, IndexError, subprocess.TimeoutExpired) as exc:
        print(f"vn.py run failed: {exc}", file=sys.stderr)
        return None


async def ours_runs(
    app: QApplication, rows: int, ticks: int, runs: int, config: Path
) -> list[float]:
    """``runs`` runs of ours, each on a fresh panel."""
    return [await ours(app, rows, ticks, config) for _ in range(runs)]


async def ours(app: QApplication, rows: int, ticks: int, config: Path) -> float:
    walks = RandomWalks(rows)
    shown = ShownWatchlist(walks, config)
    panel = shown.panel
    shown.session.top_of_book.data.publish(walks.snapshot())
    await asyncio.sleep(0.5)
    made: list[dict[str, TopOfBook]] = []
    while len(made) < ticks:
        made.extend({pair: book} for pair, book in walks.snapshot().items())
    made = made[:ticks]
    model = panel.model
    started = time.perf_counter()
    for number, one in enumerate(made):
        model.update(one)
        if number % PAINT_EVERY == 0:
            app.processEvents()
    app.processEvents()
    rate = ticks / (time.perf_counter() - started)
    await shown.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=50_000)
    parser.add_argument("--vnpy-python", default=None, help="an interpreter with vnpy")
    parser.add_argument("--runs", type=int, default=1, help="runs of each side (medians)")
    options = parser.parse_args()
    load = os.getloadavg()[0]
    rates = run_qt(
        lambda app, config: ours_runs(app, options.rows, options.ticks, options.runs, config)
    )
    vnpys = [
        run_vnpy(options.vnpy_python, options.rows, options.ticks) for _ in range(options.runs)
    ]
    done = [value for value in vnpys if value is not None]
    rate = statistics.median(rates)
    vnpy = statistics.median(done) if done else None
    print(f"watchlist, {options.rows} rows, {options.ticks} ticks, paint every {PAINT_EVERY}")
    print(f"load average (1 min) at the start: {load:.2f}")
    print(f"ours  {rate:,.0f} updates/s (runs: {', '.join(f'{r:,.0f}' for r in rates)})")
    print(f"vn.py {'not run' if vnpy is None else f'{vnpy:,.0f} updates/s'}")
    ratio = None if vnpy is None else round(rate / vnpy, 1)
    summary: dict[str, object] = {
        "ours": round(rate),
        "vnpy": None if vnpy is None else round(vnpy),
        "ratio": ratio,
    }
    if options.runs > 1:
        summary["ours_runs"] = [round(value) for value in rates]
        summary["vnpy_runs"] = [round(value) for value in done]
    summary["load1"] = round(load, 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
