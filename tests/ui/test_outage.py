"""Stopping the sandbox turns the state degraded, then offline, without freezing the window;
starting it again recovers by itself. While the data is stale every panel that shows it says so,
and the notices say what happened in words, without the service's URLs."""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path
from typing import TypeVar

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.services.connect import connect
from app.services.health import Health
from app.services.session import FeedIntervals
from app.ui.bridge import SessionBridge
from app.ui.main_window import Area, MainWindow, PanelSpec
from app.ui.palette import current_palette
from app.ui.panels.balances import BalancesPanel
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.panels.depth import DepthPanel
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.qt import QEventLoop
from tests.harness import Faults, SandboxProcess, free_port
from tests.helpers.live import Live
from tests.helpers.qt import run

STALE_SINCE = re.compile(r"stale since \d\d:\d\d:\d\d")
FG = Qt.ItemDataRole.ForegroundRole


W = TypeVar("W", bound=QWidget)


def dock_panel(window: MainWindow, name: str, kind: type[W]) -> W:
    widget = window.docks[name].widget()
    assert isinstance(widget, kind)
    return widget


class Panels:
    """The data panels of a main window, and whether each marks its data stale."""

    def __init__(self, window: MainWindow) -> None:
        self.watchlist = dock_panel(window, "topOfBook", TopOfBookPanel)
        self.balances = dock_panel(window, "balances", BalancesPanel)
        self.chart = dock_panel(window, "chart", ChartPanel)
        self.depth = dock_panel(window, "depth", DepthPanel)

    def balances_stale(self) -> bool:
        """The total says "stale since HH:MM:SS" and every cell is in the stale grey."""
        model = self.balances.model
        cells = [
            model.data(model.index(row, column), FG)
            for row in range(model.rowCount())
            for column in range(model.columnCount())
        ]
        grey = current_palette().stale
        return (
            bool(STALE_SINCE.search(self.balances.total_label.text()))
            and bool(cells)
            and all(cell == grey for cell in cells)
        )

    def balances_fresh(self) -> bool:
        model = self.balances.model
        return (
            "stale" not in self.balances.total_label.text()
            and model.rowCount() > 0
            and model.data(model.index(0, 0), FG) != current_palette().stale
        )

    def depth_stale(self) -> bool:
        return bool(STALE_SINCE.search(self.depth.header.text())) and self.depth.model.stale

    def chart_stale(self) -> bool:
        return bool(STALE_SINCE.search(self.chart.title.text()))

    def watchlist_stale(self) -> bool:
        model = self.watchlist.model
        return model.rowCount() > 0 and all(model.is_stale(r) for r in range(model.rowCount()))

    def all_stale(self) -> bool:
        return (
            self.balances_stale()
            and self.depth_stale()
            and self.chart_stale()
            and self.watchlist_stale()
        )

    def all_fresh(self) -> bool:
        model = self.watchlist.model
        return (
            self.balances_fresh()
            and "stale" not in self.depth.header.text()
            and not self.depth.model.stale
            and "stale" not in self.chart.title.text()
            and model.rowCount() > 0
            and not any(model.is_stale(r) for r in range(model.rowCount()))
        )


def data_panels() -> list[PanelSpec]:
    left, right = Area.LeftDockWidgetArea, Area.RightDockWidgetArea
    return [
        PanelSpec("topOfBook", "Top of book", left, TopOfBookPanel),
        PanelSpec("balances", "Balances", left, BalancesPanel),
        PanelSpec("chart", "Chart", right, ChartPanel),
        PanelSpec("depth", "Depth", right, DepthPanel, tab_with="chart"),
    ]


@pytest.mark.slow
def test_outage_degrades_then_goes_offline_and_recovers(
    qtbot: QtBot, qloop: QEventLoop, settings: QSettings, tmp_path: Path
) -> None:
    port, db = free_port(), str(tmp_path / "outage.db")
    first = SandboxProcess("--port", str(port), db=db).start()
    second: SandboxProcess | None = None
    terminal = run(
        qtbot,
        connect(
            first.url, "demo", "demo", "demo", sandbox=True, intervals=FeedIntervals(0.2, 0.6, 0.3)
        ),
    )
    session = terminal.session
    bridge = SessionBridge(terminal)
    context = PanelContext(bridge, Precision(), settings, lambda *_: None)
    window = MainWindow(context, data_panels(), "test")
    qtbot.addWidget(window)
    window.show()
    panels = Panels(window)
    notices: list[str] = []
    original_show = window.notices.show_notice

    def shown(level: str, message: str) -> QLabel:
        label = original_show(level, message)
        notices.append(label.text())
        return label

    window.notices.show_notice = shown  # type: ignore[method-assign]
    beats: list[float] = []
    heartbeat = QTimer(window)
    heartbeat.timeout.connect(lambda: beats.append(time.monotonic()))
    heartbeat.start(10)
    seen: list[Health] = []
    bridge.health.connect(lambda state: seen.append(state.health))
    kinds: list[str] = []
    bridge.logEvent.connect(lambda event: kinds.append(event.kind) if event.kind else None)
    elsewhere = QLabel("another application's window")  # the trader looks away
    qtbot.addWidget(elsewhere)
    try:
        run(qtbot, session.start())
        qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=10000)
        qtbot.waitUntil(panels.all_fresh, timeout=10000)
        elsewhere.show()
        elsewhere.activateWindow()
        qtbot.waitUntil(lambda: not window.isActiveWindow())
        first.stop()
        qtbot.waitUntil(lambda: "OFFLINE" in window.status.state.text(), timeout=15000)
        assert window.status.latency.text() == "—"  # no last good latency while offline
        after_live = seen[len(seen) - 1 - seen[::-1].index(Health.LIVE) :]
        assert after_live.index(Health.DEGRADED) < after_live.index(Health.OFFLINE)
        # Offline: every panel whose data is stale says so (the watchlist greys its rows).
        qtbot.waitUntil(panels.all_stale, timeout=5000)
        # The notices said it in words: no URL, no path (the log panel keeps them).
        offline_notices = [text for text in notices if "offline" in text]
        assert offline_notices, notices
        for text in notices:
            assert "http://" not in text and "/api/" not in text, text
        assert any(f"the service at 127.0.0.1:{port}" in text for text in offline_notices)
        assert any(f"http://127.0.0.1:{port}/api/" in line for line in window.log_panel.lines)
        beats.clear()
        qtbot.waitUntil(lambda: len(beats) > 20, timeout=2000)  # the loop keeps answering
        gaps = [b - a for a, b in itertools.pairwise(beats)]
        assert max(gaps) < 0.5
        second = SandboxProcess("--port", str(port), db=db).start()
        qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=40000)
        qtbot.waitUntil(panels.all_fresh, timeout=10000)  # and unmarked once fresh
        assert kinds == ["offline", "online"]
        # the trader was away: both reached the desktop as well as the window
        assert [m.kind for m in window.notifier.shown_tray] == ["offline", "online"]
    finally:
        heartbeat.stop()
        run(qtbot, terminal.aclose())
        first.close()
        if second is not None:
            second.close()


@pytest.mark.slow
def test_only_the_panels_of_a_failing_feed_are_marked(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    """The balances feed alone fails (the service refuses the account's balance requests): the
    balances are marked stale, the chart, depth and watchlist are not; fresh again, unmarked."""
    window = MainWindow(live.context, data_panels(), "test")
    qtbot.addWidget(window)
    window.show()
    panels = Panels(window)
    qtbot.waitUntil(panels.all_fresh, timeout=10000)
    faults(
        {
            "kind": "status",
            "path": f"/api/v1/accounting/account/{live.account.account}",
            "method": "GET",
            "rate": 1,
            "count": 1000,
            "status": 503,
        }
    )
    qtbot.waitUntil(panels.balances_stale, timeout=10000)
    assert "failing" in panels.balances.total_label.toolTip()
    assert not panels.depth_stale() and not panels.chart_stale()
    assert not panels.watchlist_stale()
    faults.clear()
    qtbot.waitUntil(panels.balances_fresh, timeout=20000)
