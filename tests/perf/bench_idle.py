"""A whole terminal, idle: CPU and memory of the main window on the real sandbox.

Run: ``.venv/bin/python -m tests.perf.bench_idle [--pairs 20] [--seconds 60] [--hz 1]
[--soak SECONDS] [--every 30] [--without chart,depth] [--tracemalloc] [--default-malloc]``.

Starts the embedded sandbox as a child process (``:memory:`` database), logs in as ``demo``
the way ``tradeterm --sandbox`` does, opens the real main window with every panel (offscreen,
settings and chart history in a temporary folder; ``--without`` leaves panels out, by name,
to find whose a growth is), watches ``--pairs`` pairs (at most the sandbox's own) and polls
every feed at ``--hz``. After a warm-up, the process's own CPU time (``os.times``, all
threads; the sandbox child is not counted) over wall time is the idle CPU; RSS
(``/proc/self/statm``) growth from the end of the warm-up to the end is the memory figure,
printed every ``--every`` seconds as it goes (the series shows linear growth from saturation).
``--soak 600`` runs that long instead of ``--seconds`` (e.g. ``--soak 600 --hz 10`` for
memory); ``--profile PATH`` saves cProfile stats of the measured part (main thread).

Memory figures at the end: growth by kind of mapping (heap, anonymous, shared memory, files)
and the mappings that grew most, glibc's malloc split into live blocks and free space it keeps
(``mallinfo2``), and all of it again after ``malloc_trim``. The terminal fixes glibc's mmap
threshold at start (``app.ui.malloc_tuning``), and so does this bench; ``--default-malloc``
leaves glibc's dynamic threshold, to compare. ``--hard-exit`` ends the process right after
measuring, so ``heaptrack -p PID`` attached after the warm-up reports what the run still
holds as leaked, with backtraces.

Warm-up: 10 s. A soak also waits (at most 120 s) until the chart's lines hold their bound —
two points a pixel column of the plot and the last sample (``app.ui.peak_display``): 633 points
in this window, reached after 633 samples, about 63 s at 10 Hz. Until then what pyqtgraph
builds per frame grows with the samples. Measured after a 10 s warm-up (10 Hz, fixed
threshold): RSS grew 1.9 MB in the first minute (about 1.1 MB of that without the chart:
first-time work elsewhere), then 0.2 MB in the 390 s after the chart reached its bound.

Prints figures and ends with one JSON line (with ``rss_series``: seconds, MB of growth);
asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import cProfile
import ctypes
import json
import resource
import tracemalloc
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

from app.domain.display import Precision
from app.services.connect import connect
from app.services.desks import TradingDesks
from app.services.sandbox_child import SandboxChild
from app.services.session import FeedIntervals
from app.services.terminal import Terminal
from app.ui import errors
from app.ui.bridge import SessionBridge
from app.ui.launch import default_panels
from app.ui.main_window import MainWindow
from app.ui.malloc_tuning import fix_malloc_thresholds, malloc_figures
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.settings import open_settings
from tests.perf.options import bench_parser
from tests.perf.qt_runner import run_qt

WARM_UP = 10.0
#: The longest warm-up of a soak: until the chart's lines hold their bound, at most this.
SOAK_WARM_UP = 120.0


class LayoutRequests(QObject):
    """Counts the layout requests the main window receives (a relayout of the whole window)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def trimmed_rss_mb() -> float | None:
    """RSS after glibc hands back the free memory it keeps (``malloc_trim``): what is left of
    a growth is held by live objects; what goes was the allocator's retention, not a leak.
    None where there is no glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return None
    return rss_mb()


KINDS = ("heap", "anon", "shm", "file")


def mappings() -> dict[str, tuple[str, float, float]]:
    """Each mapping of ``/proc/self/smaps`` by its start address (the heap and glibc's thread
    arenas grow at their end): its kind, size and RSS (MB).
    Kinds: the malloc heap (``[heap]``), anonymous mappings (glibc's big blocks and thread
    arenas, Python's object arenas, numpy's large arrays), shared memory (``/dev/shm``, memfd:
    Qt's backing stores), and files (libraries, fonts)."""
    found: dict[str, tuple[str, float, float]] = {}
    where, kind, size = "", "anon", 0.0
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head, _, rest = line.partition(" ")
            if head.endswith(":"):
                if head == "Size:":
                    size = int(rest.split()[0]) / 1024
                elif head == "Rss:":
                    found[where] = (kind, size, int(rest.split()[0]) / 1024)
                continue
            fields = line.split(maxsplit=5)
            where = fields[0].partition("-")[0]
            name = fields[5].strip() if len(fields) > 5 else ""
            if name == "[heap]":
                kind = "heap"
            elif name.startswith(("/dev/shm", "/memfd:")) or "(deleted)" in name:
                kind = "shm"
            elif name.startswith("/"):
                kind = "file"
            else:
                kind = "anon"  # unnamed, [stack], [anon:...]
    return found


def by_kind(found: dict[str, tuple[str, float, float]]) -> dict[str, float]:
    """RSS (MB) summed by kind of mapping."""
    kinds = dict.fromkeys(KINDS, 0.0)
    for kind, _size, rss in found.values():
        kinds[kind] += rss
    return kinds


def memory_line(kinds: dict[str, float]) -> str:
    return ", ".join(f"{kind} {mb:.2f}" for kind, mb in kinds.items())


def growth_lines(
    before: dict[str, tuple[str, float, float]],
    after: dict[str, tuple[str, float, float]],
    count: int = 6,
) -> list[str]:
    """The mappings whose RSS grew most (new ones included): start address, kind, size."""
    grown = sorted(
        ((rss - before.get(where, (kind, size, 0.0))[2], where, kind, size))
        for where, (kind, size, rss) in after.items()
    )
    return [
        f"  {where} {kind} {size:.1f} MB mapped: {growth:+.2f} MB"
        for growth, where, kind, size in reversed(grown[-count:])
        if growth > 0.01
    ]


def chart_points(window: MainWindow) -> tuple[int, int, int] | None:
    """How many samples the chart's lines stand for, in how many points, and their bound (two
    points a pixel column of the plot, and the last sample); None without the chart."""
    dock = window.docks.get("chart")
    chart = dock.widget() if dock is not None else None
    if not isinstance(chart, ChartPanel):
        return None
    points = chart.curves["mid"].yData
    bound = 2 * int(chart.price_plot.getViewBox().width()) + 1
    return chart.drawn_samples, 0 if points is None else len(points), bound


def chart_line(window: MainWindow) -> str:
    figures = chart_points(window)
    if figures is None:
        return ""
    samples, points, bound = figures
    return f", chart {samples} samples in {points} points (bound {bound})"


async def chart_filled(window: MainWindow, longest: float) -> float:
    """Wait (at most ``longest`` seconds) until the chart's lines hold their bound of points:
    until then the chart's memory grows with its samples. The seconds waited."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < longest:
        figures = chart_points(window)
        if figures is None or figures[1] >= figures[2] > 0:
            break
        await asyncio.sleep(1.0)
    return loop.time() - start


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def open_window(terminal: Terminal, desks: TradingDesks, without: frozenset[str]) -> MainWindow:
    """The terminal's main window (as ``app.ui.launch`` opens it), less the panels named in
    ``without`` (to find which panel a growth belongs to)."""
    bridge = SessionBridge(terminal)
    context = PanelContext(bridge, Precision(), open_settings(), bridge.log)
    panels = [spec for spec in default_panels(desks) if spec.name not in without]
    window = MainWindow(context, panels, "bench")
    errors.install(bridge.log, asyncio.get_running_loop())
    window.show()
    return window


async def bench(
    pairs: int,
    seconds: float,
    hz: float,
    config: Path,
    *,
    soak: bool = False,
    every: float = 30.0,
    without: frozenset[str] = frozenset(),
    trace: bool = False,
    profile: Path | None = None,
    hard_exit: bool = False,
) -> None:
    child = SandboxChild(":memory:")
    url = await child.start()
    terminal = await connect(url, "demo", "demo", "demo", sandbox=True)
    session = terminal.session
    interval = 1 / hz
    session.set_intervals(FeedIntervals(interval, interval, interval))
    desks = terminal.open_desks(config / "journal.db")
    window = open_window(terminal, desks, without)
    window.resize(1400, 900)
    await terminal.start()
    window.context.precision.learn(session.pair_info)
    watched = session.available_pairs[:pairs]
    window.context.bridge.set_watchlist(watched)
    await asyncio.sleep(WARM_UP)
    warm_up = WARM_UP
    if soak:
        warm_up += await chart_filled(window, SOAK_WARM_UP - WARM_UP)
    layouts = LayoutRequests()
    window.installEventFilter(layouts)
    profiler = cProfile.Profile() if profile is not None else None
    if trace:
        tracemalloc.start()
    rss_start, cpu_start, map_start = rss_mb(), cpu_seconds(), mappings()
    malloc_start = malloc_figures()
    print(f"pid {os.getpid()}, panels left out: {', '.join(sorted(without)) or 'none'}")
    print(f"mappings at start (MB): {memory_line(by_kind(map_start))}", flush=True)
    loop = asyncio.get_running_loop()
    started = loop.time()
    if profiler is not None:
        profiler.enable()
    series: list[tuple[float, float]] = []
    while (left := started + seconds - loop.time()) > 0.05:
        await asyncio.sleep(min(every, left))
        at, rss = loop.time() - started, rss_mb()
        series.append((round(at), round(rss - rss_start, 2)))
        traced = (
            f", Python traced {tracemalloc.get_traced_memory()[0] / 2**20:.2f} MB" if trace else ""
        )
        now = f"RSS {rss:.2f} MB ({rss - rss_start:+.2f})"
        print(f"  {at:5.0f} s  {now}{traced}{chart_line(window)}", flush=True)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(profile))
    elapsed = loop.time() - started
    cpu, rss_end, map_end = cpu_seconds() - cpu_start, rss_mb(), mappings()
    malloc_end = malloc_figures()
    rss_trimmed = trimmed_rss_mb()
    map_trimmed = mappings()
    print(
        f"main window on the sandbox, {len(watched)} pairs watched (asked {pairs}), feeds at "
        f"{hz:g} Hz, {elapsed:.0f} s after {warm_up:.0f} s warm-up, platform "
        f"{QApplication.platformName()}"
    )
    print(f"process CPU {cpu:.2f} s = {100 * cpu / elapsed:.1f} % of one core")
    print(f"layout requests of the main window: {layouts.count}")
    print(f"RSS {rss_start:.1f} MB -> {rss_end:.1f} MB ({rss_end - rss_start:+.2f} MB)")
    start, end = by_kind(map_start), by_kind(map_end)
    print(f"growth by mapping (MB): {memory_line({k: end[k] - start[k] for k in KINDS})}")
    print("mappings that grew most:", *growth_lines(map_start, map_end), sep="\n")
    if malloc_start is not None and malloc_end is not None:
        print(
            "malloc (MB): "
            + ", ".join(
                f"{name} {malloc_start[name]:.2f} -> {malloc_end[name]:.2f}"
                f" ({malloc_end[name] - malloc_start[name]:+.2f})"
                for name in malloc_start
            )
        )
    if rss_trimmed is not None:
        print(f"RSS after malloc_trim {rss_trimmed:.1f} MB ({rss_trimmed - rss_start:+.2f} MB)")
        trimmed = by_kind(map_trimmed)
        growth = {k: trimmed[k] - start[k] for k in KINDS}
        print(f"growth by mapping after malloc_trim (MB): {memory_line(growth)}")
        print("after malloc_trim:", *growth_lines(map_start, map_trimmed), sep="\n")
    if hard_exit:
        # What the run still holds stays allocated: a heap profiler attached after the
        # warm-up (``heaptrack -p PID``) reports it as leaked, with its backtraces.
        print(json.dumps({"rss_growth_mb": round(rss_end - rss_start, 2)}), flush=True)
        os._exit(0)
    window.save_layout()
    window.hide()
    await window.tasks.aclose()
    await window.stop_panel_feeds()
    await terminal.aclose()
    await child.stop()
    window.deleteLater()
    print(
        json.dumps(
            {
                "cpu_pct": round(100 * cpu / elapsed, 2),
                "rss_growth_mb": round(rss_end - rss_start, 2),
                "rss_growth_trimmed_mb": (
                    None if rss_trimmed is None else round(rss_trimmed - rss_start, 2)
                ),
                "rss_series": series,
                "layout_requests": layouts.count,
                "pairs": len(watched),
                "hz": hz,
                "seconds": round(elapsed),
                "warm_up_s": round(warm_up),
            }
        )
    )


def main() -> None:
    parser = bench_parser(__doc__, pairs=20, seconds=60.0, hz=1.0)
    parser.add_argument("--soak", type=float, default=None, help="run this many seconds")
    parser.add_argument("--profile", type=Path, default=None, help="cProfile stats of the run")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between RSS samples")
    parser.add_argument("--without", default="", help="panels left out, by name (e.g. chart,depth)")
    parser.add_argument(
        "--tracemalloc", action="store_true", help="also print Python's traced allocations"
    )
    parser.add_argument(
        "--default-malloc",
        action="store_true",
        help="leave glibc's dynamic mmap threshold (the terminal fixes it at start)",
    )
    parser.add_argument(
        "--hard-exit",
        action="store_true",
        help="exit at once after measuring (for heaptrack -p: what is held shows as leaked)",
    )
    options = parser.parse_args()
    seconds = options.soak if options.soak is not None else options.seconds
    if not options.default_malloc:
        fix_malloc_thresholds()  # as the terminal starts (app.ui.launch.run)

    def idle(app: QApplication, config: Path) -> Coroutine[Any, Any, None]:
        os.environ["TRADETERM_CONFIG_DIR"] = str(config)  # settings and chart history
        return bench(
            options.pairs,
            seconds,
            options.hz,
            config,
            soak=options.soak is not None,
            every=options.every,
            without=frozenset(name for name in options.without.split(",") if name),
            trace=options.tracemalloc,
            profile=options.profile,
            hard_exit=options.hard_exit,
        )

    run_qt(idle, prefix="tradeterm-idle-")


if __name__ == "__main__":
    main()
