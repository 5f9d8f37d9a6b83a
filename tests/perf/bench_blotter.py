"""The orders dock at many orders: each poll that brings a new fill, timed to the new order on
top of the table, with the longest event-loop stall it caused.

Run: ``.venv/bin/python -m tests.perf.bench_blotter [--orders 100000] [--polls 5]``.
Offscreen, on the app's qasync loop, a window shows a real ``OrdersPanel`` (feed, model, proxy,
table view, no mids stored). The session is never started: its client's ``orders`` answers from
a synthetic list (filled and cancelled limit orders, Decimal sizes and prices) with the
service's paging (``max`` up to 1,000, ``startAtOrdering``), so the list takes the panel's own
path: ``OrderFeed`` (merge, snapshot, economics) -> panel -> model -> proxy -> view.

- load: Load more, page after page, until every order is shown (not timed per page);
- poll with a new fill: one order added on top of the service's list, then a poll (what a fill
  does), until the table's first row is that order; repeated ``--polls`` times.
- poll with nothing new: a poll whose page is the one already shown, until it has been read.

A 1 ms heartbeat ``QTimer`` stamps each shot (``bench_records.Heartbeat``). Prints figures, then
exactly one JSON line. Asserts nothing; not collected.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import gc
import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMainWindow

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.domain.money import Amount, Price
from app.domain.records import Order, OrderResult
from app.services.session import Environment, TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.orders import OrdersPanel
from app.ui.settings import open_settings
from tests.perf.bench_records import Heartbeat, Watchdog, until
from tests.perf.options import bench_parser

START = datetime(2026, 1, 1, tzinfo=UTC)


def synthetic_order(ordering: int, rng: random.Random) -> Order:
    """A limit order buying BTC with USD (or selling), filled (four in five) or cancelled."""
    filled = rng.random() < 0.8
    moment = START + timedelta(seconds=ordering * 3)
    buy = rng.random() < 0.5
    source, destination = ("USD", "BTC") if buy else ("BTC", "USD")
    size = Decimal(rng.randint(1, 10**6)) / (100 if buy else 10**6)
    price = Price(Decimal(rng.randint(80_000_00, 95_000_00)) / 100, "BTC", "USD")
    return Order(
        f"ord-{ordering:08d}",
        ordering,
        "bench",
        "bench",
        "bench@example.com",
        Amount(size, source),
        source,
        destination,
        "limit",
        moment,
        OrderResult(
            "filled" if filled else "canceled",
            price if filled else None,
            None,
            moment + timedelta(seconds=1) if filled else None,
            moment + timedelta(seconds=1),
            Amount(size, source) if filled else None,
            "",
        ),
        f"tt-{ordering:08d}",
        price,
    )


class FakeOrders:
    """The client's ``orders`` over a synthetic list, newest first: ``max`` orders at or below
    ``startAtOrdering``. Every other filter is left to the feed's own check."""

    def __init__(self, orders: list[Order]) -> None:
        self.orders = orders  # newest first

    async def __call__(
        self, max_orders: int | None = None, *, start_at_ordering: int | None = None, **_: Any
    ) -> list[Order]:
        await asyncio.sleep(0)
        if start_at_ordering is None:
            return self.orders[: max_orders or 100]
        top = self.orders[0].ordering or 0
        first = max(0, top - start_at_ordering)  # orderings are consecutive
        return self.orders[first : first + (max_orders or 100)]


def on_top(panel: OrdersPanel, order_id: str) -> bool:
    return panel.model.rowCount() > 0 and panel.model.order_row(0).order_id == order_id


async def bench(count: int, polls: int, folder: Path, trace: bool) -> dict[str, Any]:
    rng = random.Random(3)
    orders = [synthetic_order(n, rng) for n in range(count, 0, -1)]
    gc.freeze()  # the service's data, not the terminal's (as in bench_records)
    client = ServiceClient(ClientSettings("http://127.0.0.1:9"))  # never called
    session = TerminalSession(client, Environment("http://127.0.0.1:9", "bench", "bench"))
    session.available_pairs = ["BTC/USD"]
    fake = FakeOrders(orders)
    client.orders = fake  # type: ignore[method-assign]
    bridge = SessionBridge(Terminal(session))
    context = PanelContext(
        bridge, Precision(), open_settings(folder / "config"), lambda _l, _m: None
    )
    window = QMainWindow()
    panel = OrdersPanel(context, interval=3600.0, page_size=1000)
    window.setCentralWidget(panel)
    window.resize(1600, 1000)
    window.show()
    panel.feed.start()
    await until(lambda: panel.model.rowCount() > 0)
    started = time.perf_counter()
    while panel.model.rowCount() < count:
        if panel.load_more_button.isEnabled():
            QTest.mouseClick(panel.load_more_button, Qt.MouseButton.LeftButton)
        await asyncio.sleep(0.001)
    load_s = time.perf_counter() - started
    print(f"loaded {panel.model.rowCount():,} orders in {load_s:.1f} s", flush=True)
    await asyncio.sleep(0.5)
    heart = Heartbeat()
    if trace:
        Watchdog(heart)
    await asyncio.sleep(0.1)

    walls: list[float] = []
    stalls: list[float] = []
    for number in range(polls):
        new = synthetic_order(count + number + 1, rng)
        fake.orders.insert(0, new)
        start = time.perf_counter()
        panel.feed.refresh()
        await until(partial(on_top, panel, new.order_id))
        end = time.perf_counter()
        walls.append((end - start) * 1000)
        stalls.append(heart.longest(start, end) * 1000)
        await asyncio.sleep(0.3)
    start = time.perf_counter()
    before = panel.feed.poller.snapshot().last_ok
    panel.feed.refresh()
    await until(lambda: panel.feed.poller.snapshot().last_ok != before)
    await asyncio.sleep(0.05)
    quiet_stall = heart.longest(start, time.perf_counter()) * 1000
    heart.timer.stop()

    shown = panel.model.rowCount()
    print(
        f"orders dock, {shown:,} orders (loaded in {load_s:.1f} s), "
        f"platform {QApplication.platformName()}"
    )
    print(
        f"poll with a new fill, {polls} times: wall median {statistics.median(walls):.1f} ms, "
        f"max {max(walls):.1f} ms; longest stall max {max(stalls):.2f} ms"
    )
    print(f"poll with nothing new: longest stall {quiet_stall:.2f} ms")
    window.close()
    await panel.feed.stop()
    panel.deleteLater()
    bridge.detach()
    await client.aclose()
    await asyncio.sleep(0.05)
    return {
        "orders": shown,
        "new_fill_wall_ms": round(statistics.median(walls), 2),
        "new_fill_stall_ms": round(max(stalls), 2),
        "quiet_poll_stall_ms": round(quiet_stall, 2),
    }


def main() -> None:
    from tests.perf.qt_runner import run_qt

    parser = bench_parser(__doc__, orders=100_000, polls=5)
    parser.add_argument("--trace", action="store_true", help="print the GUI stack in stalls")
    options = parser.parse_args()
    results = run_qt(lambda _, folder: bench(options.orders, options.polls, folder, options.trace))
    print(json.dumps({"bench": "blotter", **results}, sort_keys=True))


if __name__ == "__main__":
    main()
