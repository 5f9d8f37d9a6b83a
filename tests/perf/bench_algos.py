"""The execution engine under load: children per second against the sandbox, and the GUI loop's
longest stall while parents work beside a 500-pair watchlist.

Run: ``.venv/bin/python -m tests.perf.bench_algos [--parents 20] [--children 1000]
[--pairs 500] [--seconds 20] [--hz 4] [--only drive|stall] [--data-dir /dev/shm]
[--profile PATH]``.

Both parts run on the app's qasync loop (offscreen), against a real sandbox process on a
database file (``tests.harness.bench_sandbox``), through a real ``Terminal`` whose desks keep
their journal and algo store on disk, as a user's do.

- drive: ``--parents`` parents (clips and TWAPs alternating, spread over the USD pairs) buy
  ``--children`` children of 10 USD in all; a TWAP's slices are due at once (duration 0), so
  the engine, the desk and the sandbox are the limit, not a schedule. Children per second are
  filled children over the wall time from the first submit to the last parent done. Each
  child's send -> answer is the time inside ``OrderDesk.place`` (journal, checks, the POST,
  the answer recorded). Then every parent is checked against the server's own list of the
  account's orders: filled per parent == target, overfill, children lost (sent, never shown
  by the server, or still open) and orders the server has that no child owns. A parent
  paused by a refusal (seen on a loaded machine: a child's end time had passed when it
  reached the service, after waiting its turn on the loop) ends the wait too, and is listed
  with its note.
- stall: a 1400x900 window with a real ``TopOfBookPanel`` over that terminal, its watchlist
  the sandbox's pairs plus synthetic ones up to ``--pairs`` (the sandbox lists 8). The
  top-of-book poll (``--hz``) asks the sandbox for its pairs and adds the synthetic ones as
  wire JSON parsed by the client's own parser (``parse_top_of_books``), from bodies made
  before the run (``bench_watchlist.RandomWalks``), so the panel, the market snapshot and the
  engine take 500 pairs per answer on the app's path. ``--parents`` parents work: seven in
  ten TWAPs with a slice every 0.5-1 s, the rest armed stops, take-profits and trailing stops
  far from their triggers (evaluated on every snapshot, never fired). A 5 ms heartbeat
  ``QTimer`` (as in ``bench_watchlist``) stamps its shots for ``--seconds`` after a 2 s
  warm-up: the longest gap is the longest stall, the gaps' p99 its tail. CPU is the process's
  own time over wall time; the sandbox's is read from ``/proc``. ``--profile PATH`` saves
  cProfile stats of the measured part (main thread).

Both parts also time the engine's suspected hot spots in place (wrappers around the calls, no
change to the engine): ``plans.decide`` (a runner's every look, after every wake), the algo
store's writes and the journal's (``synchronous = FULL``), and count the market snapshots that
wake every live parent. The engine's runners share one loop with everything else, so a
child's send -> answer (and the POST inside it, ``post_order``) includes its wait for a turn
of the loop: with many parents, the loop's time per child (CPU, and the synchronous SQLite
writes) sets the rate, not the service. Afterwards, plain micro-measures: ``Parent.room``
(sums every child on each read) at 50 and 1,000 children, and a child's store write with
``synchronous`` FULL against NORMAL on this disk.

Prints figures and ends with one JSON line; asserts nothing and is not collected by pytest.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import cProfile
import dataclasses
import itertools
import json
import math
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

import app.services.algos.engine as engine_module
from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.domain.money import format_decimal
from app.domain.records import TopOfBook, parse_top_of_books
from app.services.algos.engine import ExecutionEngine
from app.services.algos.parents import Child, Parent
from app.services.algos.plans import Moment, decide
from app.services.algos.specs import AlgoSpec
from app.services.algos.store import AlgoStore
from app.services.session import FeedIntervals
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.settings import open_settings
from tests.harness import SandboxProcess, Session, bench_sandbox, open_terminal, until
from tests.perf.bench_watchlist import RandomWalks, percentile
from tests.perf.options import bench_parser
from tests.perf.qt_runner import run_qt

HEARTBEAT_MS = 5
WARM_UP = 2.0
CHILD_USD = Decimal(10)
USD_PAIRS = ("BTC/USD", "ETH/USD", "SOL/USD")
BALANCES = {"USD": "100000000", "BTC": "1000", "ETH": "10000", "SOL": "100000"}
#: Synthetic top-of-book bodies made before the run, cycled through.
BODIES = 64

JOURNAL_WRITES = ("record_intent", "record_sent", "record_order")
#: The synchronous SQLite writes on the loop a child costs, as timed.
WRITES = (
    "store_add_child",
    "store_save_parent",
    *(f"journal_{name}" for name in JOURNAL_WRITES),
)
#: The engine's module global its runners call (wrapped to time and count each decision).
DECIDE = "decide"

F = TypeVar("F")


# -- measuring -----------------------------------------------------------------------------------


class Timings:
    """Durations of wrapped calls, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = defaultdict(list)

    def sync(self, name: str, function: Callable[..., F]) -> Callable[..., F]:
        def timed(*args: Any, **kwargs: Any) -> F:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name].append(time.perf_counter() - started)

        return timed

    def awaited(
        self, name: str, function: Callable[..., Awaitable[F]]
    ) -> Callable[..., Awaitable[F]]:
        async def timed(*args: Any, **kwargs: Any) -> F:
            started = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                self.seconds[name].append(time.perf_counter() - started)

        return timed

    def clear(self) -> None:
        self.seconds.clear()

    def figures(self, name: str) -> dict[str, float]:
        values = [value * 1000 for value in self.seconds.get(name, [])]
        if not values:
            return {"calls": 0}
        return {
            "calls": len(values),
            "total_ms": round(sum(values), 1),
            "p50_ms": round(percentile(values, 0.5), 3),
            "p99_ms": round(percentile(values, 0.99), 3),
            "max_ms": round(max(values), 2),
        }


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sandbox_pid(sandbox: SandboxProcess) -> int:
    assert sandbox.proc is not None
    return sandbox.proc.pid


def load_average() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


class Instruments:
    """Timing wrappers on one terminal's desk, journal and algo store, and on the engine's
    ``decide`` (a module global, restored by ``close``); counts of decisions and snapshots."""

    def __init__(self, terminal: Terminal) -> None:
        assert terminal.desks is not None and terminal.algos is not None
        self.timings = Timings()
        self.decisions: Counter[str] = Counter()
        self.snapshots = 0
        self.balances = 0
        timings = self.timings
        engine = terminal.algos
        desk = engine.desk
        desk.place = timings.awaited("send_answer", desk.place)  # type: ignore[method-assign, assignment]
        client = terminal.client
        client.place_order = timings.awaited(  # type: ignore[method-assign, assignment]
            "post_order", client.place_order
        )
        store = engine.store
        store.add_child = timings.sync("store_add_child", store.add_child)  # type: ignore[method-assign]
        store.save_parent = timings.sync("store_save_parent", store.save_parent)  # type: ignore[method-assign]
        journal = desk.journal
        # record_order writes the outcome and the fill's amounts (two commits); a lone
        # record_outcome (a refusal, a lost answer) is not timed: inside record_order it
        # would count twice.
        for name in JOURNAL_WRITES:
            setattr(journal, name, timings.sync(f"journal_{name}", getattr(journal, name)))
        timed_decide = timings.sync("decide", decide)

        def counted(parent: Parent, moment: Moment) -> Any:
            decision = timed_decide(parent, moment)
            self.decisions[type(decision).__name__] += 1
            return decision

        setattr(engine_module, DECIDE, counted)
        session = terminal.session
        self._unsubscribe = [
            session.market.changed.subscribe(lambda _s: self._snapshot()),
            session.balances.data.subscribe(lambda _b: self._balance()),
        ]

    def _snapshot(self) -> None:
        self.snapshots += 1

    def _balance(self) -> None:
        self.balances += 1

    def reset(self) -> None:
        self.timings.clear()
        self.decisions.clear()
        self.snapshots = 0
        self.balances = 0

    def close(self) -> None:
        setattr(engine_module, DECIDE, decide)
        for unsubscribe in self._unsubscribe:
            unsubscribe()

    def figures(self) -> dict[str, Any]:
        names = ("send_answer", "post_order", "decide", *WRITES)
        return {
            **{name: self.timings.figures(name) for name in names},
            "decisions": dict(self.decisions),
            "market_snapshots": self.snapshots,
            "balance_answers": self.balances,
        }


# -- the terminal --------------------------------------------------------------------------------


def private_folder(folder: Path) -> Path:
    folder.mkdir(mode=0o700, parents=True)
    return folder


async def open_desk_terminal(
    sandbox: SandboxProcess, account: Session, folder: Path, intervals: FeedIntervals
) -> Terminal:
    """The account's terminal with desks (journal and algo store on disk), started, with a
    price for every USD pair."""
    private_folder(folder)
    client = ServiceClient(ClientSettings(sandbox.url))
    terminal = await open_terminal(sandbox, account, client, intervals, list(USD_PAIRS))
    terminal.open_desks(folder / "journal.db")
    await terminal.start()
    market = terminal.session.market
    await until(lambda: all(market.snapshot.top(pair) is not None for pair in USD_PAIRS), 20)
    return terminal


def engine_of(terminal: Terminal) -> ExecutionEngine:
    assert terminal.algos is not None
    return terminal.algos


async def server_orders(client: ServiceClient) -> list[Any]:
    """Every order of the account, as the server lists them (oldest first, page by page)."""
    found: dict[str, Any] = {}
    start: int | None = None
    while True:
        page = await client.orders(1000, start_at_ordering=start, ascending=True)
        found.update((order.order_id, order) for order in page)
        if len(page) < 1000:
            return list(found.values())
        start = (page[-1].ordering or 0) + 1


def settled(parent: Parent) -> bool:
    """Working no more (done, or paused by a refusal) and nothing of it still out."""
    return not parent.live and not parent.busy


def check_parents(parents: list[Parent], orders: list[Any]) -> dict[str, Any]:
    """Each parent against the server: filled == target, no overfill, no child lost, no order
    of the account that no child owns."""
    by_client_id = {order.client_order_id: order for order in orders}
    owned: set[str] = set()
    rows: list[dict[str, Any]] = []
    for parent in parents:
        server_filled = Decimal(0)
        lost = 0
        for child in parent.children:
            owned.add(child.client_order_id)
            order = by_client_id.get(child.client_order_id)
            if child.open:
                lost += 1  # still open after its parent ended: not followed to its end
            if order is None:
                if child.status != "empty":
                    lost += 1  # the engine says it left; the server never saw it
                continue
            if order.result.status == "filled":
                server_filled += order.size.value
            if child.status == "filled" and order.result.status != "filled":
                lost += 1
        rows.append(
            {
                "parent": parent.id,
                "kind": parent.spec.kind,
                "target": parent.target,
                "filled": parent.filled,
                "server_filled": server_filled,
                "overfill": max(Decimal(0), server_filled - parent.target),
                "lost": lost,
                "children": len(parent.children),
                "unfilled_children": sum(1 for c in parent.children if c.status == "empty"),
                "state": parent.state,
                "note": parent.note,
            }
        )
    strays = [order for order in orders if order.client_order_id not in owned]
    return {
        "rows": rows,
        "exact": all(r["filled"] == r["target"] == r["server_filled"] for r in rows),
        "overfill": sum((r["overfill"] for r in rows), Decimal(0)),
        "lost": sum(r["lost"] for r in rows),
        "strays": len(strays),
    }


# -- part 1: children per second -----------------------------------------------------------------


def drive_specs(parents: int, children: int) -> list[AlgoSpec]:
    """Clips and TWAPs alternating, ``children`` children of 10 USD in all, as evenly as they
    divide."""
    specs = []
    for number in range(parents):
        count = children // parents + (1 if number < children % parents else 0)
        pair = USD_PAIRS[number % len(USD_PAIRS)]
        amount = CHILD_USD * count
        if number % 2 == 0:
            spec = AlgoSpec("clip", pair, "buy", amount, display=CHILD_USD, collar_bps=Decimal(50))
        else:
            spec = AlgoSpec(
                "twap",
                pair,
                "buy",
                amount,
                slices=count,
                duration_seconds=Decimal(0),
                collar_bps=Decimal(50),
            )
        specs.append(spec)
    return specs


async def drive(
    sandbox: SandboxProcess, account: Session, folder: Path, parents: int, children: int
) -> dict[str, Any]:
    terminal = await open_desk_terminal(sandbox, account, folder, FeedIntervals())
    engine = engine_of(terminal)
    instruments = Instruments(terminal)
    try:
        specs = drive_specs(parents, children)
        await asyncio.sleep(0.5)
        instruments.reset()
        load_before = load_average()
        cpu_started, sandbox_cpu = time.process_time(), cpu_seconds(sandbox_pid(sandbox))
        started = time.perf_counter()
        working = [engine.submit(spec) for spec in specs]
        # A parent the service refused a child of pauses (and never ends): wait for every
        # parent to stop working with nothing of it still out.
        await until(lambda: all(settled(parent) for parent in working), timeout=600)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        sandbox_cpu = cpu_seconds(sandbox_pid(sandbox)) - sandbox_cpu
        figures = instruments.figures()
        orders = await server_orders(terminal.client)
        check = check_parents(working, orders)
        room = room_costs(working)
    finally:
        instruments.close()
        await terminal.aclose()
    filled = sum(1 for parent in working for child in parent.children if child.status == "filled")
    sent = sum(len(parent.children) for parent in working)
    sends = figures["send_answer"]
    writes = sum(figures[name].get("total_ms", 0.0) for name in WRITES)
    per_child = {
        "cpu_ms": round(cpu * 1000 / max(1, sent), 2),
        "sqlite_write_ms": round(writes / max(1, sent), 2),
    }
    print(
        f"drive: {parents} parents, {sent} children sent, {filled} filled in {elapsed:.2f} s: "
        f"{filled / elapsed:.1f} children/s; send->answer p50 {sends.get('p50_ms')} ms, "
        f"p99 {sends.get('p99_ms')} ms, max {sends.get('max_ms')} ms"
    )
    print(
        f"  CPU: terminal {100 * cpu / elapsed:.0f} %, sandbox {100 * sandbox_cpu / elapsed:.0f} %"
        f" of one core; load average before {load_before}, after {load_average()}"
    )
    print(
        f"  the loop's time per child: {per_child['cpu_ms']} ms of CPU, "
        f"{per_child['sqlite_write_ms']} ms in journal and algo store writes (synchronous, on "
        "the loop)"
    )
    print("  parent                kind  target USD  engine filled  server filled  over  lost")
    for row in check["rows"]:
        print(
            f"  {row['parent']:<21} {row['kind']:<5} {row['target']:>10} "
            f"{row['filled']:>14} {row['server_filled']:>14} {row['overfill']:>5} {row['lost']:>5}"
        )
    for row in check["rows"]:
        if row["state"] != "done" or row["note"] != "filled":
            print(f"  {row['parent']} {row['state']}: {row['note']}")
    print(
        f"  filled == target for every parent (engine and server): {check['exact']}; "
        f"overfill {check['overfill']} USD; children lost {check['lost']}; "
        f"server orders no child owns {check['strays']}"
    )
    print_hot_spots(figures, elapsed)
    return {
        "parents": parents,
        "children_sent": sent,
        "children_filled": filled,
        "seconds": round(elapsed, 2),
        "children_per_s": round(filled / elapsed, 1),
        "send_answer_p50_ms": sends.get("p50_ms"),
        "send_answer_p99_ms": sends.get("p99_ms"),
        "send_answer_max_ms": sends.get("max_ms"),
        "cpu_pct": round(100 * cpu / elapsed, 1),
        "sandbox_cpu_pct": round(100 * sandbox_cpu / elapsed, 1),
        "filled_equals_target": check["exact"],
        "overfill": format_decimal(check["overfill"]),
        "lost": check["lost"],
        "strays": check["strays"],
        "parents_not_done": sum(1 for r in check["rows"] if r["state"] != "done"),
        "unfilled_children": sum(r["unfilled_children"] for r in check["rows"]),
        "hot_spots": figures,
        "room_us": room,
        "loop_per_child": per_child,
    }


def print_hot_spots(figures: dict[str, Any], elapsed: float) -> None:
    posts = figures["post_order"]
    if posts.get("calls"):
        print(
            f"  post_order        {posts['calls']:>6} calls (concurrent: the POST and its wait "
            f"for the loop), p50 {posts['p50_ms']} ms, p99 {posts['p99_ms']} ms, "
            f"max {posts['max_ms']} ms"
        )
    for name in ("decide", *WRITES):
        value = figures[name]
        if not value.get("calls"):
            continue
        print(
            f"  {name:<22} {value['calls']:>6} calls, {value['total_ms']:>8} ms in all "
            f"({100 * value['total_ms'] / 1000 / elapsed:.1f} % of the wall), "
            f"p50 {value['p50_ms']} ms, p99 {value['p99_ms']} ms, max {value['max_ms']} ms"
        )
    print(
        f"  market snapshots {figures['market_snapshots']} (balance answers "
        f"{figures['balance_answers']}), decisions {figures['decisions']}"
    )


# -- micro-measures ------------------------------------------------------------------------------


def room_costs(parents: list[Parent]) -> dict[str, float]:
    """Microseconds per ``Parent.room`` read at the size the drive reached and at 1,000
    children (the sums are kept as children change: it should not grow), and per ``decide``
    of a clip at those sizes."""
    sample = max(parents, key=lambda parent: len(parent.children))
    figures: dict[str, float] = {}
    for count in (len(sample.children), 1000):
        children = [
            dataclasses.replace(child, client_order_id=f"{child.client_order_id}-{number}")
            for number, child in enumerate(
                itertools.islice(itertools.cycle(sample.children), count)
            )
        ]
        spec = dataclasses.replace(
            sample.spec, kind="clip", display=CHILD_USD, amount=CHILD_USD * (count + 1)
        )
        parent = Parent("micro", spec, sample.account, sample.created_at, "working")
        parent.children = children
        reads = 2000
        started = time.perf_counter()
        for _ in range(reads):
            _ = parent.room
        figures[f"room_at_{count}"] = round((time.perf_counter() - started) / reads * 1e6, 1)
        top = TopOfBook(
            spec.pair_side.pair, Decimal(100), Decimal(1), Decimal(101), Decimal(1), Decimal(1)
        )
        moment = Moment(top, datetime.now(UTC), None, 2, Decimal("0.01"))
        started = time.perf_counter()
        for _ in range(reads):
            decide(parent, moment)
        figures[f"decide_at_{count}"] = round((time.perf_counter() - started) / reads * 1e6, 1)
    return figures


def store_sync_costs(folder: Path, writes: int = 200) -> dict[str, float]:
    """Milliseconds per child written to an algo store on this disk (the child and its
    parent's row in one commit), ``synchronous`` FULL against NORMAL (as the store runs: WAL,
    durable across a crash of the process, never corrupt)."""
    figures: dict[str, float] = {}
    private_folder(folder)
    spec = AlgoSpec("clip", "BTC/USD", "buy", Decimal(1000), display=CHILD_USD)
    for mode in ("FULL", "NORMAL"):
        store = AlgoStore(folder / f"sync-{mode.lower()}" / "algos.db")
        store._db.execute(f"PRAGMA synchronous = {mode}")  # a measure of the setting
        parent = Parent(f"p-{mode}", spec, "bench", datetime.now(UTC))
        store.save_parent(parent)
        started = time.perf_counter()
        for number in range(writes):
            store.add_child(
                Child(
                    f"c-{mode}-{number}",
                    parent.id,
                    CHILD_USD,
                    Decimal(100),
                    parent.created_at,
                    None,
                ),
                parent,
            )
        per_child = (time.perf_counter() - started) / writes * 1000
        figures[f"child_and_parent_{mode.lower()}_ms"] = round(per_child, 3)
        store.close()
    return figures


# -- part 2: the GUI loop's stalls ---------------------------------------------------------------


class SyntheticTops:
    """Top of book for ``count`` synthetic pairs as wire JSON (``topOfBooks``), made before the
    run: each answer parses the next body with the client's own parser."""

    def __init__(self, count: int) -> None:
        walks = RandomWalks(count)
        self.names = walks.names()
        self.bodies = [json.dumps({"topOfBooks": wire(walks.snapshot())}) for _ in range(BODIES)]
        self._next = itertools.cycle(self.bodies)

    def answer(self) -> dict[str, TopOfBook]:
        return parse_top_of_books(json.loads(next(self._next)))


def wire(books: dict[str, TopOfBook]) -> dict[str, Any]:
    return {
        name: {
            "bid": [format_decimal(top.bid), format_decimal(top.bid_size)],
            "ask": [format_decimal(top.ask), format_decimal(top.ask_size)],
            "spread": format_decimal(top.spread),
        }
        for name, top in books.items()
    }


def with_synthetic_pairs(terminal: Terminal, pairs: int) -> tuple[list[str], int]:
    """The watchlist grown to ``pairs`` with synthetic pairs: the client asks the sandbox for
    the pairs it lists and adds the synthetic ones, parsed from wire JSON. Returns the
    watchlist and how many of its pairs are the sandbox's."""
    session = terminal.session
    real = list(session.available_pairs)
    synthetic = SyntheticTops(max(0, pairs - len(real)))
    client = terminal.client
    real_top_of_book = client.top_of_book
    known = set(real)

    async def top_of_book(
        asked: list[str] | None = None, *, poll: bool = False
    ) -> dict[str, TopOfBook]:
        mine = [pair for pair in asked or real if pair in known]
        tops = await real_top_of_book(mine, poll=poll)
        tops.update(synthetic.answer())
        return tops

    client.top_of_book = top_of_book  # type: ignore[method-assign, assignment]
    session.available_pairs = [*real, *synthetic.names]
    watchlist = [*real, *synthetic.names][:pairs]
    session.set_watchlist(watchlist)
    return watchlist, len(real)


def stall_specs(parents: int, terminal: Terminal, seconds: float) -> list[AlgoSpec]:
    """Seven in ten TWAPs (a slice every 0.5-1 s, lasting past the run), the rest armed far
    from their triggers: stops, take-profits and trailing stops, selling."""
    market = terminal.session.market.snapshot
    twaps = max(1, round(parents * 0.7)) if parents > 1 else parents
    specs: list[AlgoSpec] = []
    last = max(1, twaps - 1)
    for number in range(twaps):
        interval = 0.5 + 0.5 * number / last
        slices = math.ceil((seconds + WARM_UP + 10) / interval) + 1
        specs.append(
            AlgoSpec(
                "twap",
                USD_PAIRS[number % len(USD_PAIRS)],
                "buy",
                CHILD_USD * slices,
                slices=slices,
                duration_seconds=Decimal(str(interval)) * (slices - 1),
                collar_bps=Decimal(50),
            )
        )
    for number in range(parents - twaps):
        pair = USD_PAIRS[number % len(USD_PAIRS)]
        top = market.top(pair)
        assert top is not None
        base = pair.split("/")[0]
        amount = Decimal(BALANCES[base]) / 1000
        kind = ("stop", "take_profit", "trailing_stop")[number % 3]
        if kind == "stop":
            spec = AlgoSpec(
                "stop", pair, "sell", amount, trigger=(top.mid / 2).quantize(Decimal("0.01"))
            )
        elif kind == "take_profit":
            spec = AlgoSpec(
                "take_profit", pair, "sell", amount, trigger=(top.mid * 2).quantize(Decimal("0.01"))
            )
        else:
            spec = AlgoSpec("trailing_stop", pair, "sell", amount, trail_bps=Decimal(4000))
        specs.append(spec)
    return specs


async def stall(
    sandbox: SandboxProcess,
    account: Session,
    folder: Path,
    parents: int,
    pairs: int,
    seconds: float,
    hz: float,
    profile: Path | None = None,
) -> dict[str, Any]:
    intervals = dataclasses.replace(FeedIntervals(), top_of_book=1 / hz)
    terminal = await open_desk_terminal(sandbox, account, folder, intervals)
    engine = engine_of(terminal)
    watchlist, real_pairs = with_synthetic_pairs(terminal, pairs)
    bridge = SessionBridge(terminal)
    context = PanelContext(
        bridge, Precision(), open_settings(folder / "config"), lambda _l, _m: None
    )
    window = QMainWindow()
    panel = TopOfBookPanel(context)
    window.setCentralWidget(panel)
    window.resize(1400, 900)
    window.show()
    instruments = Instruments(terminal)
    beats: list[float] = []
    pulse = QTimer()
    pulse.setTimerType(Qt.TimerType.PreciseTimer)
    pulse.setInterval(HEARTBEAT_MS)
    pulse.timeout.connect(lambda: beats.append(time.perf_counter()))
    working: list[Parent] = []
    try:
        await until(lambda: panel.model.rowCount() >= len(watchlist), 20)
        working = [engine.submit(spec) for spec in stall_specs(parents, terminal, seconds)]
        await asyncio.sleep(WARM_UP)
        instruments.reset()
        children_before = sum(len(p.children) for p in working)
        load_before = load_average()
        pulse.start()
        started, cpu_started = time.perf_counter(), time.process_time()
        sandbox_cpu = cpu_seconds(sandbox_pid(sandbox))
        profiler = cProfile.Profile() if profile is not None else None
        if profiler is not None:
            profiler.enable()
        await asyncio.sleep(seconds)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(profile))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        sandbox_cpu = cpu_seconds(sandbox_pid(sandbox)) - sandbox_cpu
        pulse.stop()
        figures = instruments.figures()
        children = sum(len(p.children) for p in working) - children_before
        live = sum(1 for p in working if p.live)
        over = [p.id for p in working if p.filled > p.target]
    finally:
        instruments.close()
        for parent in working:
            engine.stop(parent.id)
        window.close()
        panel.deleteLater()
        bridge.detach()
        await terminal.aclose()
    gaps = [(later - earlier) * 1000 for earlier, later in itertools.pairwise(beats)]
    rows = len(watchlist)
    print(
        f"stall: {rows} pairs at {hz:g} Hz ({real_pairs} from the sandbox), "
        f"{parents} parents ({live} live at the end), {children} children in {elapsed:.1f} s; "
        f"platform {QApplication.platformName()}"
    )
    print(
        f"  heartbeat {HEARTBEAT_MS} ms: longest gap {max(gaps):.1f} ms, p99 "
        f"{percentile(gaps, 0.99):.1f} ms, p50 {percentile(gaps, 0.5):.1f} ms, "
        f"{len(gaps)} gaps; CPU terminal {100 * cpu / elapsed:.0f} %, sandbox "
        f"{100 * sandbox_cpu / elapsed:.0f} %; load average before {load_before}, after "
        f"{load_average()}"
    )
    print_hot_spots(figures, elapsed)
    print(f"  parents over their target: {len(over)}")
    return {
        "pairs": rows,
        "parents": parents,
        "hz": hz,
        "seconds": round(elapsed, 1),
        "children": children,
        "max_stall_ms": round(max(gaps), 2),
        "p99_gap_ms": round(percentile(gaps, 0.99), 2),
        "p50_gap_ms": round(percentile(gaps, 0.5), 2),
        "cpu_pct": round(100 * cpu / elapsed, 1),
        "sandbox_cpu_pct": round(100 * sandbox_cpu / elapsed, 1),
        "overfilled_parents": len(over),
        "hot_spots": figures,
    }


# -- running -------------------------------------------------------------------------------------


async def bench(app: QApplication, folder: Path, options: Any) -> dict[str, Any]:
    del app
    results: dict[str, Any] = {
        "bench": "algos",
        "load_average_start": load_average(),
        "data_dir": options.data_dir or tempfile.gettempdir(),
    }
    with tempfile.TemporaryDirectory(dir=options.data_dir or folder) as scratch:
        data = Path(scratch)
        if options.only in ("", "drive"):
            with bench_sandbox(BALANCES) as (sandbox, account):
                results["drive"] = await drive(
                    sandbox, account, data / "drive", options.parents, options.children
                )
        if options.only in ("", "stall"):
            with bench_sandbox(BALANCES) as (sandbox, account):
                results["stall"] = await stall(
                    sandbox,
                    account,
                    data / "stall",
                    options.parents,
                    options.pairs,
                    options.seconds,
                    options.hz,
                    options.profile,
                )
        results["store_sync"] = store_sync_costs(data / "sync")
    print(f"store write per child (add_child + save_parent): {results['store_sync']}")
    results["load_average_end"] = load_average()
    return results


def main() -> None:
    parser = bench_parser(__doc__, parents=20, children=1000, pairs=500, seconds=20.0, hz=4.0)
    parser.add_argument("--only", choices=("", "drive", "stall"), default="")
    parser.add_argument(
        "--profile", type=Path, default=None, help="cProfile stats of the stall's measured part"
    )
    parser.add_argument(
        "--data-dir",
        default="",
        help="where the journal and algo store live (default: a temporary folder; "
        "/dev/shm to see the figures without a disk's fsync)",
    )
    options = parser.parse_args()
    results = run_qt(lambda app, folder: bench(app, folder, options))
    print(json.dumps(results, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
