"""A whole terminal, idle: CPU and memory of the main window on the real sandbox.

Run: ``.venv/bin/python -m tests.perf.bench_idle [--pairs 20] [--seconds 60] [--hz 1]
[--soak SECONDS]``.

Starts the embedded sandbox as a child process (``:memory:`` database), logs in as ``demo``
the way ``tradeterm --sandbox`` does, opens the real main window with every panel (offscreen,
settings and chart history in a temporary folder), watches ``--pairs`` pairs (at most the
sandbox's own) and polls every feed at ``--hz``. After a warm-up, the process's own CPU time
(``os.times``, all threads; the sandbox child is not counted) over wall time is the idle CPU;
RSS (``/proc/self/statm``) growth from the end of the warm-up to the end is the memory figure.
``--soak 600`` runs that long instead of ``--seconds`` (e.g. ``--soak 600 --hz 10`` for the
chart's memory); ``--profile PATH`` saves cProfile stats of the measured part (main thread).
Prints figures and ends with one JSON line; asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import cProfile
import ctypes
import json
import resource
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

from app.services.connect import connect
from app.services.desks import TradingDesks
from app.services.sandbox_child import SandboxChild
from app.services.session import FeedIntervals
from app.ui.launch import _open_window
from app.ui.settings import open_settings
from tests.perf.options import bench_parser
from tests.perf.qt_runner import run_qt

WARM_UP = 10.0


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


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


async def bench(
    pairs: int, seconds: float, hz: float, config: Path, profile: Path | None = None
) -> None:
    child = SandboxChild(":memory:")
    url = await child.start()
    session = await connect(url, "demo", "demo", "demo", sandbox=True)
    interval = 1 / hz
    session.set_intervals(FeedIntervals(interval, interval, interval))
    desks = TradingDesks.open(session, config / "journal.db")
    window = _open_window(session, open_settings(), desks)
    window.resize(1400, 900)
    await session.start()
    window.context.precision.learn(session.pair_info)
    watched = session.available_pairs[:pairs]
    window.context.bridge.set_watchlist(watched)
    await asyncio.sleep(WARM_UP)
    layouts = LayoutRequests()
    window.installEventFilter(layouts)
    profiler = cProfile.Profile() if profile is not None else None
    rss_start, cpu_start = rss_mb(), cpu_seconds()
    loop = asyncio.get_running_loop()
    started = loop.time()
    if profiler is not None:
        profiler.enable()
    await asyncio.sleep(seconds)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(profile))
    elapsed = loop.time() - started
    cpu, rss_end = cpu_seconds() - cpu_start, rss_mb()
    rss_trimmed = trimmed_rss_mb()
    print(
        f"main window on the sandbox, {len(watched)} pairs watched (asked {pairs}), feeds at "
        f"{hz:g} Hz, {elapsed:.0f} s after {WARM_UP:.0f} s warm-up, platform "
        f"{QApplication.platformName()}"
    )
    print(f"process CPU {cpu:.2f} s = {100 * cpu / elapsed:.1f} % of one core")
    print(f"layout requests of the main window: {layouts.count}")
    print(f"RSS {rss_start:.1f} MB -> {rss_end:.1f} MB ({rss_end - rss_start:+.2f} MB)")
    if rss_trimmed is not None:
        print(f"RSS after malloc_trim {rss_trimmed:.1f} MB ({rss_trimmed - rss_start:+.2f} MB)")
    window.save_layout()
    window.hide()
    await window.tasks.aclose()
    await window.stop_panel_feeds()
    await session.stop()
    await session.aclose()
    await desks.close()
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
                "layout_requests": layouts.count,
                "pairs": len(watched),
                "hz": hz,
                "seconds": round(elapsed),
            }
        )
    )


def main() -> None:
    parser = bench_parser(__doc__, pairs=20, seconds=60.0, hz=1.0)
    parser.add_argument("--soak", type=float, default=None, help="run this many seconds")
    parser.add_argument("--profile", type=Path, default=None, help="cProfile stats of the run")
    options = parser.parse_args()
    seconds = options.soak if options.soak is not None else options.seconds

    def idle(app: QApplication, config: Path) -> Coroutine[Any, Any, None]:
        os.environ["TRADETERM_CONFIG_DIR"] = str(config)  # settings and chart history
        return bench(options.pairs, seconds, options.hz, config, options.profile)

    run_qt(idle, prefix="tradeterm-idle-")


if __name__ == "__main__":
    main()
