"""The ledger dock at many rows: load, sort, a filter keystroke and CSV export, each timed with
the longest event-loop stall it caused.

Run: ``.venv/bin/python -m tests.perf.bench_records [--rows 100000] [--page 10000]``.
Offscreen, on the app's qasync loop, a window shows a real ``LedgerPanel`` (browser, model, sort
proxy, table view). The session is never started: its client's ``ledger`` answers from a
synthetic ledger (trades of two legs and single deposits, Decimal amounts) with the service's
paging (``max`` transactions, ``startAtOrdering``), so the rows take the panel's own path:
``LedgerBrowser`` (grouping, trades in pair terms) -> panel -> model -> proxy -> view.

- load: Search, then Load more until every row is shown (pages of ``--page`` transactions);
- sort: a click on the Amount header, until the view shows the sorted order;
- filter keystroke: one key typed into the search box, until the view shows the matches
  (each key of ``--text`` typed in turn; the worst one is reported);
- CSV export: the search cleared, the export dialog opened, then from its file chosen until
  the "Exported" notice (every row, in the sorted order);
- repaint: one ``viewport().repaint()`` of the loaded table, timed ``REPAINTS`` times (median
  and quickest): what the last step of a sort or filter shares a frame with.

A heartbeat ``QTimer`` (``--beat-ms``, 1 ms; it was 5) stamps each shot: the longest gap during
an action is its longest event-loop stall, plus at most one beat (a stall that starts just
before a shot is due shows up to a beat longer: with 5 ms, a 10 ms paint read as up to 15 ms).
Prints a table, then exactly one JSON line. Asserts nothing; not collected.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import asyncio
import gc
import itertools
import json
import random
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QWidget

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.domain.records import LedgerEntry
from app.services.log_events import LogLevel
from app.services.session import Environment, TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.ledger import LedgerPanel
from app.ui.settings import open_settings
from tests.perf.qt_runner import run_qt

HEARTBEAT_MS = 1
REPAINTS = 20
PAIRS = (("USD", "BTC"), ("BTC", "USD"), ("USD", "ETH"), ("ETH", "USD"), ("USDT", "SOL"))


def synthetic_ledger(rows: int, seed: int = 11) -> list[LedgerEntry]:
    """About ``rows`` entries, newest first: mostly trades (two legs, one ordering), some
    single deposits."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    entries: list[LedgerEntry] = []
    ordering = 0
    while len(entries) < rows:
        ordering += 1
        moment = start + timedelta(seconds=ordering * 7, microseconds=rng.randint(0, 999_999))
        if rng.random() < 0.1 or len(entries) == rows - 1:
            asset = rng.choice(("USD", "BTC", "ETH", "SOL", "USDT"))
            amount = Decimal(rng.randint(1, 10_000_000)) / 1000
            entries.append(
                LedgerEntry(
                    ordering, "bench", f"dep-{ordering:08d}", asset, amount, "deposit", "", moment
                )
            )
            continue
        source, destination = rng.choice(PAIRS)
        paid = Decimal(rng.randint(1, 10**9)) / 10**4
        got = Decimal(rng.randint(1, 10**9)) / 10**8
        txid = f"ord-{ordering:08d}-{rng.randint(0, 0xFFFF):04x}"
        entries.append(
            LedgerEntry(ordering, "bench", txid, source, -paid, "trade", "source", moment)
        )
        entries.append(
            LedgerEntry(ordering, "bench", txid, destination, got, "trade", "destination", moment)
        )
    entries.reverse()  # newest first, as the service answers
    return entries


class FakeLedger:
    """The client's ``ledger`` over a synthetic list: ``max`` transactions from
    ``startAtOrdering`` down, newest first, both legs of a trade together."""

    def __init__(self, entries: list[LedgerEntry]) -> None:
        self.entries = entries

    async def __call__(
        self, max_entries: int, *, start_at_ordering: int | None = None, **_: Any
    ) -> list[LedgerEntry]:
        page: list[LedgerEntry] = []
        seen: set[int] = set()
        for entry in self.entries:
            if start_at_ordering is not None and entry.ordering > start_at_ordering:
                continue
            if entry.ordering not in seen:
                if len(seen) == max_entries:
                    break
                seen.add(entry.ordering)
            page.append(entry)
        await asyncio.sleep(0)
        return page


class Watchdog:
    """``--trace``: a thread that prints the GUI thread's stack whenever the heartbeat has been
    silent for ``limit`` seconds (what filled a stall)."""

    def __init__(self, heart: Heartbeat, limit: float = 0.017) -> None:
        self.heart, self.limit = heart, limit
        self.gui = threading.get_ident()
        self.running = True
        threading.Thread(target=self.watch, daemon=True).start()

    def watch(self) -> None:
        reported = 0.0
        while self.running:
            time.sleep(0.01)
            last = self.heart.beats[-1] if self.heart.beats else time.perf_counter()
            if time.perf_counter() - last > self.limit and last != reported:
                reported = last
                for ident, frame in sys._current_frames().items():
                    if ident == threading.get_ident():
                        continue
                    who = "GUI" if ident == self.gui else "worker"
                    stack = traceback.format_stack(frame)[-3:]
                    print("STALL", f"{last:.3f}", who, "".join(stack), file=sys.stderr)


class Heartbeat:
    """A 5 ms timer whose shots are stamped: the gaps between them are event-loop stalls."""

    def __init__(self, beat_ms: int = HEARTBEAT_MS) -> None:
        self.beats: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(beat_ms)
        self.timer.timeout.connect(lambda: self.beats.append(time.perf_counter()))
        self.timer.start()

    def longest(self, start: float, end: float) -> float:
        """The longest gap (s) between shots that overlaps ``start``..``end``."""
        stamps = [start, *[b for b in self.beats if start < b < end], end]
        before = [b for b in self.beats if b <= start]
        if before:
            stamps[0] = before[-1]
        return max((b - a for a, b in itertools.pairwise(stamps)), default=0.0)


async def until(condition: Callable[[], bool], timeout: float = 600.0) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the action did not finish")
        await asyncio.sleep(0.001)


def pending(panel: LedgerPanel) -> bool:
    """Whether the proxy still has work queued (sort, filter); False for a proxy that
    never defers any."""
    check = getattr(panel.proxy, "pending", None)
    return bool(check()) if callable(check) else False


def time_repaints(viewport: QWidget) -> dict[str, float]:
    """One repaint of the whole table, ``REPAINTS`` times: median and quickest (ms)."""
    took: list[float] = []
    for _ in range(REPAINTS):
        start = time.perf_counter()
        viewport.repaint()
        took.append((time.perf_counter() - start) * 1000)
    size = viewport.size()
    print(f"repaint at {size.width()}x{size.height()}: median {statistics.median(took):.2f} ms")
    return {"median_ms": round(statistics.median(took), 2), "min_ms": round(min(took), 2)}


def print_table(results: dict[str, dict[str, float]]) -> None:
    print(f"{'action':<18} {'wall ms':>10} {'longest stall ms':>18}")
    for name, figures in results.items():
        if "wall_ms" in figures:
            print(f"{name:<18} {figures['wall_ms']:>10.1f} {figures['stall_ms']:>18.1f}")


async def bench(
    rows: int, page: int, text: str, folder: Path, trace: bool = False, beat_ms: int = HEARTBEAT_MS
) -> dict[str, dict[str, float]]:
    entries = synthetic_ledger(rows)
    # The synthetic ledger stands for the service's data, not the terminal's: kept out of the
    # cyclic collector's passes, as it would be in another process.
    gc.freeze()
    client = ServiceClient(ClientSettings("http://127.0.0.1:9"))  # never called
    session = TerminalSession(client, Environment("http://127.0.0.1:9", "bench", "bench"))
    session.available_pairs = ["BTC/USD", "ETH/USD", "SOL/USDT"]
    client.ledger = FakeLedger(entries)  # type: ignore[method-assign]
    bridge = SessionBridge(Terminal(session))
    notices: list[str] = []

    def notify(level: LogLevel, message: str) -> None:
        notices.append(message)

    context = PanelContext(bridge, Precision(), open_settings(folder / "config"), notify)
    window = QMainWindow()
    panel = LedgerPanel(context)
    window.setCentralWidget(panel)
    window.resize(1600, 1000)
    window.show()
    await until(lambda: not panel.busy)
    panel.apply_timer.stop()
    panel.max_filter.blockSignals(True)
    panel.max_filter.setValue(page)
    panel.max_filter.blockSignals(False)
    heart = Heartbeat(beat_ms)
    if trace:
        Watchdog(heart)
        gc_start = [0.0]

        def gc_watch(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                gc_start[0] = time.perf_counter()
            elif (took := time.perf_counter() - gc_start[0]) > 0.005:
                print(f"GC gen{info['generation']} {took * 1000:.1f} ms", file=sys.stderr)

        gc.callbacks.append(gc_watch)
    await asyncio.sleep(0.2)
    results: dict[str, dict[str, float]] = {}

    def record(name: str, start: float, end: float) -> None:
        if trace:
            print(f"ACTION {name} {start:.3f}..{end:.3f}", file=sys.stderr)
        results[name] = {
            "wall_ms": round((end - start) * 1000, 2),
            "stall_ms": round(heart.longest(start, end) * 1000, 2),
        }

    # -- load: Search, then Load more until every entry is shown ---------------------------------
    start = time.perf_counter()
    QTest.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    await until(lambda: not panel.busy and panel.snapshot is not None)
    while panel.load_more_button.isEnabled() or panel.busy:
        if not panel.busy:
            QTest.mouseClick(panel.load_more_button, Qt.MouseButton.LeftButton)
        await asyncio.sleep(0.001)
    await until(lambda: not panel.busy and not pending(panel))
    record("load", start, time.perf_counter())
    shown = panel.model.rowCount()
    await asyncio.sleep(0.3)

    results["repaint"] = time_repaints(panel.table.viewport())
    await asyncio.sleep(0.3)

    # -- sort: click the Amount header -----------------------------------------------------------
    header = panel.table.horizontalHeader()
    column = panel.model.column("amount")
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    first = panel.proxy.index(0, column).data()
    start = time.perf_counter()
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    await until(lambda: not pending(panel) and panel.proxy.index(0, column).data() != first)
    record("sort", start, time.perf_counter())
    await asyncio.sleep(0.3)

    # -- filter: type into the search box, one key at a time -----------------------------------
    panel.search_box.setFocus()
    worst: dict[str, float] = {"wall_ms": 0.0, "stall_ms": 0.0}
    keys: list[dict[str, float]] = []
    for char in text:
        before = panel.proxy.rowCount()
        start = time.perf_counter()
        QTest.keyClicks(panel.search_box, char)  # one key
        await asyncio.sleep(0.001)
        await until(lambda: not pending(panel))
        end = time.perf_counter()
        record("filter keystroke", start, end)
        keys.append(results["filter keystroke"])
        print(f"  key {char!r}: {before:,} -> {panel.proxy.rowCount():,} rows shown")
        worst = {k: max(worst[k], results["filter keystroke"][k]) for k in worst}
        await asyncio.sleep(0.3)
    results["filter keystroke"] = worst
    matches = panel.proxy.rowCount()
    panel.search_box.clear()  # export the whole (sorted) ledger; not measured
    await until(lambda: not pending(panel) and panel.proxy.rowCount() == shown)
    await asyncio.sleep(0.3)

    # -- CSV export: the file chosen in the dialog ---------------------------------------------
    target = folder / "ledger.csv"
    dialog = panel.ask_export()
    assert isinstance(dialog, QFileDialog)
    await asyncio.sleep(0.3)  # the dialog opens and paints (the trader picks a file meanwhile)
    start = time.perf_counter()
    dialog.fileSelected.emit(str(target))
    await until(lambda: any(n.startswith("Exported") for n in notices))
    record("CSV export", start, time.perf_counter())
    dialog.close()
    written = sum(1 for _ in target.open(encoding="utf-8")) - 1

    heart.timer.stop()
    print(
        f"ledger dock, {shown:,} rows loaded in pages of {page:,} transactions, "
        f"filter {text!r} -> {matches:,} rows, CSV {written:,} rows; "
        f"platform {QApplication.platformName()}"
    )
    print_table(results)
    results["meta"] = {"rows": float(shown), "matches": float(matches), "csv_rows": float(written)}
    window.close()
    panel.deleteLater()
    bridge.detach()
    await client.aclose()
    await asyncio.sleep(0.05)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--page", type=int, default=10_000, help="transactions per page")
    parser.add_argument("--text", default="btc", help="typed into the search box, key by key")
    parser.add_argument("--trace", action="store_true", help="print the GUI stack in stalls")
    parser.add_argument("--beat-ms", type=int, default=HEARTBEAT_MS, help="heartbeat period")
    options = parser.parse_args()
    results = run_qt(
        lambda _, folder: bench(
            options.rows, options.page, options.text, folder, options.trace, options.beat_ms
        )
    )
    results["meta"]["beat_ms"] = float(options.beat_ms)
    print(json.dumps({"bench": "records", **results}, sort_keys=True))


if __name__ == "__main__":
    main()
