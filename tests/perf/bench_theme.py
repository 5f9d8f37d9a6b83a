"""Theme switches on the whole terminal: the event loop's longest stall per switch, and health.

Run: ``.venv/bin/python -m tests.perf.bench_theme [--switches 20] [--gap 1.0] [--pairs 20]
[--profile PATH]``.

Starts the embedded sandbox as a child process (``:memory:`` database), logs in as ``demo``
the way ``tradeterm --sandbox`` does, opens the real main window with every panel (offscreen,
1366×768, settings in a temporary folder), watches ``--pairs`` pairs with the terminal's own
poll intervals, waits until the connection is live, then switches dark <-> light
``--switches`` times through ``choose_theme`` (what View > Theme does), ``--gap`` seconds
apart.

A 1 ms precise timer probes the event loop: its longest gap from the moment a switch starts
until the next one is that switch's stall (everything the loop did meanwhile counts: polls,
paints, the restyle). ``quiet_max_ms`` is the same figure over as long a window with no
switch, for scale. ``restyled_ms``: from the switch until every part of every window wears the
new theme (``app.ui.theme.restyling`` turning false; the switch's own return where that does
not exist). Health changes and notices (log events above info) are counted from the first
switch to the end: a switch must cause neither. ``--profile`` saves cProfile stats of the
switching phase.

Prints figures and ends with one JSON line; asserts nothing and is not collected by pytest.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import cProfile
import itertools
import json
import statistics
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from app.domain.display import Precision
from app.services.connect import connect
from app.services.health import Health, HealthState
from app.services.log_events import LogEvent, LogLevel
from app.services.sandbox_child import SandboxChild
from app.ui import errors, theme
from app.ui.bridge import SessionBridge
from app.ui.launch import default_panels
from app.ui.main_window import MainWindow
from app.ui.panels.base import PanelContext
from app.ui.settings import open_settings
from tests.perf.options import bench_parser
from tests.perf.qt_runner import run_qt

PROBE_MS = 1
#: The longest wait for the connection to be live before switching.
LIVE_WITHIN = 30.0
SIZE = (1366, 768)


class Probe:
    """A 1 ms timer's shots: the gaps between them are the event loop's stalls."""

    def __init__(self) -> None:
        self.shots: list[float] = []
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._shot)

    def _shot(self) -> None:
        self.shots.append(time.perf_counter())

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def longest_gap(self, start: float, end: float) -> float:
        """The longest time (s) the loop went without a shot between ``start`` and ``end``
        (from ``start`` to the first shot after it counts too)."""
        times = [start, *(t for t in self.shots if start < t <= end)]
        if len(times) < 2:
            return end - start
        return max(b - a for a, b in itertools.pairwise(times))


def restyling() -> bool:
    """Whether a switch is still restyling windows part by part (never, where it restyles
    everything at once)."""
    check = getattr(theme, "restyling", None)
    return bool(check()) if callable(check) else False


def open_window(bridge: SessionBridge, context: PanelContext, desks: Any) -> MainWindow:
    window = MainWindow(context, default_panels(desks), "bench")
    errors.install(bridge.log, asyncio.get_running_loop())
    window.resize(*SIZE)
    window.show()
    return window


async def until_live(bridge: SessionBridge) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    while bridge.health_now.health != Health.LIVE and loop.time() - start < LIVE_WITHIN:
        await asyncio.sleep(0.1)
    return loop.time() - start


async def bench(
    app: QApplication, config: Path, switches: int, gap: float, pairs: int, profile: Path | None
) -> None:
    theme.apply_theme(app, "dark")  # as the launcher does, before the window
    child = SandboxChild(":memory:")
    url = await child.start()
    terminal = await connect(url, "demo", "demo", "demo", sandbox=True)
    session = terminal.session
    desks = terminal.open_desks(config / "journal.db")
    bridge = SessionBridge(terminal)
    context = PanelContext(bridge, Precision(), open_settings(), bridge.log)
    window = open_window(bridge, context, desks)
    await terminal.start()
    context.precision.learn(session.pair_info)
    bridge.set_watchlist(session.available_pairs[:pairs])
    waited = await until_live(bridge)
    await asyncio.sleep(3.0)  # every panel filled, first fits done
    health: list[HealthState] = []
    notices: list[LogEvent] = []
    unsubscribe_health = session.health.changes.subscribe(health.append)
    unsubscribe_events = session.events.subscribe(
        lambda event: notices.append(event) if event.level != LogLevel.INFO else None
    )
    probe = Probe()
    probe.start()
    loop = asyncio.get_running_loop()
    quiet_start = time.perf_counter()
    await asyncio.sleep(gap)
    quiet = probe.longest_gap(quiet_start, time.perf_counter())
    profiler = cProfile.Profile() if profile is not None else None
    stalls: list[float] = []
    calls: list[float] = []
    restyled: list[float] = []
    names = ["light", "dark"]
    for number in range(switches):
        name = names[number % 2]
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        theme.choose_theme(app, context.settings, name)
        calls.append(time.perf_counter() - started)
        while restyling() and time.perf_counter() - started < gap:
            await asyncio.sleep(0.001)
        restyled.append(time.perf_counter() - started)
        await asyncio.sleep(max(0.0, gap - (time.perf_counter() - started)))
        if profiler is not None:
            profiler.disable()
        ended = time.perf_counter()
        stalls.append(probe.longest_gap(started, ended))
        print(
            f"  switch {number + 1:2d} to {name:5s}: call {calls[-1] * 1000:7.1f} ms, "
            f"restyled in {restyled[-1] * 1000:7.1f} ms, longest stall "
            f"{stalls[-1] * 1000:7.1f} ms, health {bridge.health_now.health}",
            flush=True,
        )
    probe.stop()
    unsubscribe_health()
    unsubscribe_events()
    if profiler is not None and profile is not None:
        profiler.dump_stats(str(profile))
    load1 = os.getloadavg()[0]
    ms = [s * 1000 for s in stalls]
    print(
        f"main window {SIZE[0]}x{SIZE[1]} on the sandbox, {len(bridge.watchlist)} pairs, "
        f"live after {waited:.1f} s, {switches} switches {gap:g} s apart, platform "
        f"{QApplication.platformName()}, {len(QApplication.allWidgets())} widgets, "
        f"load1 {load1:.2f}"
    )
    print(f"longest stall per switch (ms): max {max(ms):.1f}, p50 {statistics.median(ms):.1f}")
    print(
        f"the switch call (ms): max {max(calls) * 1000:.1f}, p50 "
        f"{statistics.median(calls) * 1000:.1f}"
    )
    print(
        f"restyled (ms): max {max(restyled) * 1000:.1f}, p50 "
        f"{statistics.median(restyled) * 1000:.1f}"
    )
    print(f"quiet window, no switch: longest stall {quiet * 1000:.1f} ms")
    print(f"health changes: {len(health)} {[str(h.health) for h in health]}")
    print(f"notices: {len(notices)} {[e.message[:60] for e in notices]}")
    window.hide()
    await window.tasks.aclose()
    await window.stop_panel_feeds()
    await terminal.aclose()
    await child.stop()
    window.deleteLater()
    del loop
    print(
        json.dumps(
            {
                "switches": switches,
                "max_stall_ms": round(max(ms), 1),
                "p50_stall_ms": round(statistics.median(ms), 1),
                "call_p50_ms": round(statistics.median(calls) * 1000, 1),
                "restyled_p50_ms": round(statistics.median(restyled) * 1000, 1),
                "quiet_max_ms": round(quiet * 1000, 1),
                "health_changes": len(health),
                "notices": len(notices),
                "widgets": len(QApplication.allWidgets()),
                "load1": round(load1, 2),
            }
        )
    )


def main() -> None:
    parser = bench_parser(__doc__, switches=20, gap=1.0, pairs=20)
    parser.add_argument("--profile", type=Path, default=None, help="cProfile stats of the switches")
    options = parser.parse_args()

    def switching(app: QApplication, config: Path) -> Coroutine[Any, Any, None]:
        os.environ["TRADETERM_CONFIG_DIR"] = str(config)  # settings and chart history
        return bench(app, config, options.switches, options.gap, options.pairs, options.profile)

    run_qt(switching, prefix="tradeterm-theme-")


if __name__ == "__main__":
    main()
