"""Qt tests: one qasync loop for the session (never exec'd or stopped), marked as the running
loop for each test so services can create tasks; qtbot waits drive both Qt and asyncio.
See ../shared/qt-asyncio-notes.md for why each step is there."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.services.log_events import LogLevel
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.services.terminal import Terminal
from app.ui import palette
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.qt import QEventLoop
from app.ui.settings import open_settings
from app.ui.theme import THEME_PROPERTY, apply_theme
from tests.harness import SandboxProcess, new_client, open_terminal
from tests.helpers.live import Live, LiveFactory, OfflineContext
from tests.helpers.qt import run


@pytest.fixture(autouse=True)
def application(qapp: QApplication) -> QApplication:
    """Every UI test runs with the QApplication made, even a model test that asks for nothing
    (a QFont made before it warns): under ``pytest -n`` any test may be a worker's first."""
    return qapp


@pytest.fixture(scope="session")
def qt_loop(qapp: QApplication) -> Iterator[QEventLoop]:
    loop = QEventLoop(qapp)
    yield loop
    loop.close()


@pytest.fixture
def qloop(qt_loop: QEventLoop) -> Iterator[QEventLoop]:
    asyncio.events._set_running_loop(qt_loop)
    yield qt_loop
    for task in asyncio.all_tasks(qt_loop):
        task.cancel()
    for _ in range(5):
        QCoreApplication.processEvents()
    gc.collect()
    asyncio.events._set_running_loop(None)


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return open_settings(tmp_path / "config")


@pytest.fixture
def live_factory(
    qtbot: QtBot, qloop: QEventLoop, settings: QSettings, tmp_path: Path
) -> Iterator[LiveFactory]:
    """``live_factory(sandbox, balances=..., credit=...)``: a started session on any sandbox
    (e.g. one from ``sandbox_factory`` with ``--quote-ttl`` or ``--credit-hours never``).
    Everything it starts is stopped after the test."""
    started: list[Live] = []

    def start(
        sandbox: SandboxProcess,
        *,
        balances: dict[str, str] | None = None,
        credit: dict[str, str] | None = None,
    ) -> Live:
        account = new_client(
            sandbox,
            balances=balances or {"USD": "100000", "BTC": "2", "ETH": "10"},
            credit={"USD": "-50000"} if credit is None else credit,
        )
        client = ServiceClient(ClientSettings(sandbox.url))
        intervals = FeedIntervals(top_of_book=0.25, balances=1.0, order_book=0.5)
        terminal = run(qtbot, open_terminal(sandbox, account, client, intervals))
        session = terminal.session
        desks = terminal.open_desks(tmp_path / f"journal-{len(started)}.db")
        bridge = SessionBridge(terminal)
        precision = Precision()
        notices: list[tuple[LogLevel, str]] = []
        context = PanelContext(
            bridge, precision, settings, lambda level, text: notices.append((level, text))
        )
        run(qtbot, terminal.start())
        precision.learn(session.pair_info)
        live = Live(terminal, session, bridge, context, account, notices, desks)
        started.append(live)
        return live

    yield start
    for live in started:
        run(qtbot, live.terminal.aclose(), timeout=45.0)
        live.bridge.deleteLater()
        live.account.close()


@pytest.fixture
def live(live_factory: LiveFactory, sandbox: SandboxProcess) -> Live:
    """A session on the shared sandbox: USD 100000, BTC 2, ETH 10, USD credit 50000."""
    return live_factory(sandbox)


@pytest.fixture
def app_as_found(qapp: QApplication) -> Iterator[QApplication]:
    """The test application, left as it was found after the test, whatever theme it switched
    to: its style sheet, style, font, palette and the default trading colours (other tests
    compare against ``DEFAULT_PALETTE``)."""
    sheet, qt_palette, style = qapp.styleSheet(), qapp.palette(), qapp.style().name()
    font = qapp.font()  # a theme sets the shipped UI font too
    yield qapp
    qapp.setFont(font)
    qapp.setStyleSheet(sheet)
    if qapp.style().name() != style:
        qapp.setStyle(style)
    qapp.setPalette(qt_palette)
    qapp.setProperty(THEME_PROPERTY, None)
    palette.set_palette(palette.DEFAULT_PALETTE)


@pytest.fixture
def app(app_as_found: QApplication) -> QApplication:
    """The dark theme applied for the test; restored afterwards (``app_as_found``)."""
    apply_theme(app_as_found, "dark")
    return app_as_found


@pytest.fixture
def offline_context(
    qtbot: QtBot, qloop: QEventLoop, sandbox: SandboxProcess, settings: QSettings
) -> Iterator[OfflineContext]:
    """``offline_context(pair)``: a bridge over a session that is never started, with ``pair``
    selected: the test alone feeds the signals."""
    opened: list[tuple[ServiceClient, SessionBridge]] = []

    def make(pair: str) -> PanelContext:
        client = ServiceClient(ClientSettings(sandbox.url))
        session = TerminalSession(client, Environment(sandbox.url, "u", "a", sandbox=True))
        session.select_pair(pair)
        bridge = SessionBridge(Terminal(session))
        opened.append((client, bridge))
        return PanelContext(bridge, Precision(), settings, lambda level, text: None)

    yield make
    for client, bridge in opened:
        run(qtbot, client.aclose())
        bridge.deleteLater()
