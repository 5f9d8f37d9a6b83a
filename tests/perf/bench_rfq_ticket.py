"""The RFQ ticket: from a quote's answer arriving to its countdown on screen.

Run: ``.venv/bin/python -m tests.perf.bench_rfq_ticket [--quotes 100] [--pause-ms 50-250]``.
A real sandbox child process (``tests.harness.SandboxProcess``) serves the quotes over
loopback; the terminal's session runs with its feeds polling, the ticket is docked in a shown
main window (offscreen), and the desk requests ``--quotes`` quotes one after another with a
random pause between them (so arrivals fall anywhere between two countdown frames).

For every quote it records three moments on the monotonic clock: the answer read
(``LiveQuote.received_monotonic``), the quotes topic publishing it (a subscriber registered
before the panel's), and the end of the first paint of the buy side's countdown widget that
follows (its ``paintEvent``, wrapped). It prints median, p99 and max of answer→painted and
publish→painted, the paint's own duration, and the request round trip for scale. Prints
figures and ends with one JSON line of them; asserts nothing; not collected by pytest.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMessageLogContext, Qt, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow

from app.api import ClientSettings, ServiceClient
from app.domain import Amount
from app.domain.display import Precision
from app.services.desks import TradingDesks
from app.services.rfq_desk import LiveQuote
from app.services.session import Environment, TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.rfq_ticket import RfqTicketPanel
from app.ui.settings import open_settings
from tests.harness import SandboxProcess, new_client
from tests.perf.qt_runner import run_qt

PAIR = "BTC/USD"
SIZE = Amount(Decimal("0.01"), "BTC")


@dataclass
class Sample:
    received: float  # LiveQuote.received_monotonic
    published: float
    round_trip: float
    painted: float | None = None


@dataclass
class Recorder:
    samples: list[Sample] = field(default_factory=list)
    paint_seconds: list[float] = field(default_factory=list)
    waiting: Sample | None = None
    painted: asyncio.Event = field(default_factory=asyncio.Event)

    def on_quote(self, live: LiveQuote) -> None:
        sample = Sample(live.received_monotonic, time.monotonic(), live.round_trip)
        self.samples.append(sample)
        self.waiting = sample
        self.painted.clear()

    def on_paint(self, started: float, ended: float) -> None:
        self.paint_seconds.append(ended - started)
        if self.waiting is not None:
            self.waiting.painted = ended
            self.waiting = None
            self.painted.set()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(name: str, seconds: list[float], figures: dict[str, Any]) -> None:
    """Print one line of figures and keep them (ms, rounded) under ``name`` for the JSON line."""
    if not seconds:
        print(f"{name:<34} none")
        figures[name] = None
        return
    ms = [s * 1000 for s in seconds]
    median, p99, longest = statistics.median(ms), percentile(ms, 0.99), max(ms)
    print(
        f"{name:<34} n={len(ms):4d}  median {median:7.2f} ms  "
        f"p99 {p99:7.2f} ms  max {longest:7.2f} ms"
    )
    figures[name] = {
        "n": len(ms),
        "median_ms": round(median, 2),
        "p99_ms": round(p99, 2),
        "max_ms": round(longest, 2),
    }


async def bench(quotes: int, pause: tuple[float, float], config: Path) -> None:
    sandbox = SandboxProcess().start()
    user = new_client(sandbox, {"USD": "100000", "BTC": "2"})
    client = ServiceClient(ClientSettings(sandbox.url))
    try:
        await client.login(user.user, user.password, user.account)
        session = TerminalSession(
            client, Environment(sandbox.url, user.user, user.account, sandbox=True)
        )
        desks = TradingDesks.open(session, config / "journal.db")
        recorder = Recorder()
        desks.rfq.quotes.subscribe(recorder.on_quote)  # before the panel's subscription
        bridge = SessionBridge(Terminal(session))
        precision = Precision()
        context = PanelContext(bridge, precision, open_settings(config), lambda _l, _m: None)
        window = QMainWindow()
        dock = QDockWidget("RFQ", window)
        panel = RfqTicketPanel(context, desks.rfq)
        dock.setWidget(panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        window.resize(1100, 700)
        window.show()
        await session.start()
        precision.learn(session.pair_info)

        bar = panel.sides["buy"].countdown
        paint = bar.paintEvent

        def timed_paint(event: QPaintEvent) -> None:
            started = time.monotonic()
            paint(event)
            recorder.on_paint(started, time.monotonic())

        bar.paintEvent = timed_paint  # type: ignore[method-assign]

        rng = random.Random(5)
        await desks.rfq.request(PAIR, SIZE)  # warm-up: connection, first layout
        await asyncio.wait_for(recorder.painted.wait(), 5)
        recorder.samples.clear()
        recorder.paint_seconds.clear()
        started = time.perf_counter()
        for _ in range(quotes):
            await asyncio.sleep(rng.uniform(*pause))
            await desks.rfq.request(PAIR, SIZE)
            try:
                await asyncio.wait_for(recorder.painted.wait(), 2)
            except TimeoutError:
                recorder.waiting = None  # counted as not painted
        elapsed = time.perf_counter() - started

        done = [(s, s.painted) for s in recorder.samples if s.painted is not None]
        print(
            f"RFQ ticket, {len(recorder.samples)} quotes on {PAIR} from a sandbox child over "
            f"loopback, feeds polling, platform {QApplication.platformName()}, {elapsed:.1f} s"
        )
        missed = len(recorder.samples) - len(done)
        if missed:
            print(f"not painted within 2 s: {missed}")
        figures: dict[str, Any] = {"not_painted": missed}
        report("answer read -> countdown painted", [at - s.received for s, at in done], figures)
        report("topic publish -> countdown painted", [at - s.published for s, at in done], figures)
        report("countdown paintEvent", recorder.paint_seconds, figures)
        report("quote request round trip", [s.round_trip for s in recorder.samples], figures)

        window.close()
        panel.deleteLater()
        await session.stop()
        await desks.close()
        bridge.detach()
        print(json.dumps(figures))
    finally:
        await client.aclose()
        user.close()
        sandbox.close()


def quiet_offscreen(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """The offscreen platform complains on every size-hint change of a window; keep the
    figures readable and print anything else."""
    if "does not support propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quotes", type=int, default=100)
    parser.add_argument(
        "--pause-ms", default="50-250", help="random pause between quotes, LOW-HIGH ms"
    )
    options = parser.parse_args()
    low, high = (float(part) / 1000 for part in options.pause_ms.split("-"))
    qInstallMessageHandler(quiet_offscreen)
    run_qt(lambda _, config: bench(options.quotes, (low, high), config))


if __name__ == "__main__":
    main()
