"""Starting the terminal: pick how to log in, open the main window, run until quit.

- env ``TRADETERM_BASE_URL``, ``TRADETERM_USER``, ``TRADETERM_PASSWORD``, ``TRADETERM_ACCOUNT``
  all set: log in without the dialog;
- ``--sandbox``: start the embedded sandbox as a child process on a free loopback port and log
  in as ``demo``; the child stops when the app exits;
- otherwise: the login dialog.
``--smoke-test`` opens the window, waits until balances and top of book show server data,
checks the shipped resources are in use (theme style sheet, window icon, fonts: an install
without them fails here), saves ``--screenshot`` if given, and exits 0 — or exits 1 with a
one-line reason after 30 s.
Quitting (window close, File > Quit, Ctrl-C, SIGTERM) sets one event; the main coroutine then
ends the window's own work, closes the terminal (``Terminal.aclose``: its tasks, feeds, desks
and client, in order), stops the sandbox child, and returns (qt-asyncio-notes.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from PySide6.QtCore import (
    QLibraryInfo,
    QMessageLogContext,
    QSettings,
    QTimer,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtWidgets import QApplication, QWidget

import app as tradeterm
from app import logs, resources
from app.domain.display import Precision
from app.private import take_env_login
from app.services.audit_trail import AuditTrail
from app.services.connect import HashedPassword, LoginFailed, Password, connect
from app.services.desks import TradingDesks
from app.services.sandbox_child import SandboxChild, SandboxStartFailed
from app.services.terminal import Terminal
from app.ui import errors
from app.ui.bridge import SessionBridge
from app.ui.fonts import NUMBER_FAMILY, UI_FAMILY, load_fonts
from app.ui.icon import app_icon
from app.ui.main_window import Area, MainWindow, PanelSpec
from app.ui.malloc_tuning import fix_malloc_thresholds
from app.ui.panels.base import PanelContext
from app.ui.preferences import LOG_LEVELS, Preferences
from app.ui.qt import QEventLoop
from app.ui.sandbox_supervisor import SandboxSupervisor
from app.ui.settings import open_settings
from app.ui.theme import apply_theme, saved_theme

SMOKE_TIMEOUT = float(os.environ.get("TRADETERM_SMOKE_TIMEOUT", "30"))


@dataclass(frozen=True)
class LaunchOptions:
    sandbox: bool = False
    smoke_test: bool = False
    screenshot: Path | None = None
    sandbox_db: str | None = None  # default: the sandbox's own default (user data dir)
    journal_path: Path | None = None  # default: journal.db in the user data dir
    log_level: str | None = None  # default: the Settings' log level (INFO)


class Failed(Exception):
    """A launch step failed; the message is the one line the user sees."""


def run(options: LaunchOptions) -> int:
    fix_malloc_thresholds()  # before Qt and the client allocate: idle memory stays flat
    level = options.log_level or Preferences.load(open_settings()).log_level
    logs.configure(logging.getLevelName(level.upper()) if level.upper() in LOG_LEVELS else 20)
    qInstallMessageHandler(_qt_message)
    application = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(application, QApplication)
    application.setApplicationName("Tradeterm")
    application.setDesktopFileName("io.tradeterm.Tradeterm")  # matches the .desktop entry
    application.setWindowIcon(app_icon())
    application.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: QEventLoop(application)) as runner:
        try:
            return runner.run(_main(options))
        except Failed as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1


def _import_panels() -> None:
    """Load the panels' modules (pyqtgraph and numpy are most of it) ahead of need."""
    default_panels(None)


def default_panels(desks: TradingDesks | None) -> list[PanelSpec]:
    """Every panel, with a place of its own (used only by a window of other panels: this
    set is arranged by the compact and wide layouts of ``app.ui.workspaces``). The tickets take
    their desks, the order list the journal, the audit trail the journal and the desks' results;
    without desks (a read-only window, or only importing) the trading panels and the audit trail
    are left out."""
    from app.ui.panels.alerts import AlertsPanel
    from app.ui.panels.algo_ticket import AlgoTicketPanel
    from app.ui.panels.audit import AuditPanel
    from app.ui.panels.balances import BalancesPanel
    from app.ui.panels.chart import ChartPanel
    from app.ui.panels.deposits import DepositsPanel
    from app.ui.panels.depth import DepthPanel
    from app.ui.panels.instructions import InstructionsPanel
    from app.ui.panels.ledger import LedgerPanel
    from app.ui.panels.order_ticket import OrderTicketPanel
    from app.ui.panels.orders import OrdersPanel
    from app.ui.panels.positions import PositionsPanel
    from app.ui.panels.rfq_ticket import RfqTicketPanel
    from app.ui.panels.top_of_book import TopOfBookPanel
    from app.ui.panels.working_orders import WorkingOrdersPanel

    left, right, bottom = (
        Area.LeftDockWidgetArea,
        Area.RightDockWidgetArea,
        Area.BottomDockWidgetArea,
    )
    tickets: list[PanelSpec] = []
    if desks is not None:
        orders, rfq = desks.orders, desks.rfq
        tickets = [
            PanelSpec(
                "orderTicket",
                "Order ticket",
                right,
                lambda context: OrderTicketPanel(context, orders),
                weight=5,
                shortcut="F2",
                menu="Trade",
            ),
            PanelSpec(
                "rfqTicket",
                "RFQ",
                right,
                lambda context: RfqTicketPanel(context, rfq),
                tab_with="orderTicket",
                shortcut="F3",
                menu="Trade",
            ),
            PanelSpec(
                "algoTicket",
                "Algo ticket",
                right,
                AlgoTicketPanel,
                tab_with="orderTicket",
                shortcut="F4",
                menu="Trade",
            ),
        ]
    # Every Ctrl+digit is taken: the Working orders dock goes to Ctrl+Shift+W.
    working = (
        [
            PanelSpec(
                "workingOrders",
                "Working orders",
                bottom,
                WorkingOrdersPanel,
                tab_with="orders",
                shortcut="Ctrl+Shift+W",
            )
        ]
        if desks is not None
        else []
    )
    journal = desks.journal if desks is not None else None
    outcomes = desks.outcomes if desks is not None else None
    records: list[PanelSpec] = []
    if desks is not None:
        trail = AuditTrail.of(desks)
        records = [
            PanelSpec(
                "audit",
                "Audit trail",
                bottom,
                lambda context: AuditPanel(context, trail),
                tab_with="orders",
                shortcut="Ctrl+0",
            )
        ]
    return [
        PanelSpec("topOfBook", "Top of book", left, TopOfBookPanel, weight=2, shortcut="Ctrl+1"),
        PanelSpec("balances", "Balances", left, BalancesPanel, shortcut="Ctrl+2"),
        *tickets,
        PanelSpec("chart", "Chart", right, ChartPanel, weight=4, shortcut="Ctrl+3"),
        PanelSpec("depth", "Depth", right, DepthPanel, tab_with="chart", shortcut="Ctrl+4"),
        PanelSpec(
            "orders",
            "Orders",
            bottom,
            lambda context: OrdersPanel(context, journal, outcomes),
            shortcut="Ctrl+5",
        ),
        *working,
        PanelSpec("ledger", "Ledger", bottom, LedgerPanel, tab_with="orders", shortcut="Ctrl+6"),
        PanelSpec(
            "deposits", "Deposits", bottom, DepositsPanel, tab_with="orders", shortcut="Ctrl+7"
        ),
        PanelSpec(
            "instructions",
            "Deposit / withdraw",
            bottom,
            InstructionsPanel,
            tab_with="orders",
            shortcut="Ctrl+8",
        ),
        PanelSpec(
            "positions", "Positions", bottom, PositionsPanel, tab_with="orders", shortcut="Ctrl+9"
        ),
        *records,
        PanelSpec(
            "alerts", "Alerts", bottom, AlertsPanel, tab_with="orders", shortcut="Ctrl+Shift+A"
        ),
    ]


async def _main(options: LaunchOptions) -> int:
    env_login = take_env_login()  # the password leaves the environment before anything starts
    quit_event = asyncio.Event()
    _on_quit_signals(quit_event.set)
    settings = open_settings()
    application = QApplication.instance()
    if isinstance(application, QApplication):
        apply_theme(application, saved_theme(settings))  # before the login dialog
    child: SandboxChild | None = None
    terminal: Terminal | None = None
    window: MainWindow | None = None
    try:
        if options.sandbox:
            child = SandboxChild(options.sandbox_db)
            try:
                starting = asyncio.ensure_future(child.start())
                spawned = asyncio.ensure_future(child.spawned.wait())
                await asyncio.wait([starting, spawned], return_when=asyncio.FIRST_COMPLETED)
                spawned.cancel()
                _import_panels()  # about half a second of imports, while the sandbox boots
                url = await starting
            except SandboxStartFailed as exc:
                raise Failed(str(exc)) from None
            terminal = await _login(url, "demo", "demo", "demo", sandbox=True)
        elif env_login is not None:
            url, user, digest, account = env_login
            terminal = await _login(url, user, HashedPassword(digest), account, sandbox=False)
        else:
            child = SandboxChild(options.sandbox_db)
            terminal = await _dialog_login(settings, child)
            if terminal is None or not terminal.session.environment.sandbox:
                await child.stop()
                child = None
            if terminal is None:
                return 0
        prefs = Preferences.load(settings)
        terminal.session.set_intervals(prefs.intervals())
        desks = terminal.open_desks(
            options.journal_path, prefs.check_limits(), auto_requote=prefs.auto_requote
        )
        window = _open_window(terminal, settings, desks)
        window.closing.connect(quit_event.set)
        if child is not None and not child.reused:
            window.supervisor = SandboxSupervisor(
                child,
                window.status,
                window.notify,
                window.tasks,
                back=terminal.session.feeds.poll_now,
            )
        await terminal.start()  # and, in the terminal's tasks, the start-up reconcile
        window.context.precision.learn(terminal.session.pair_info)
        if options.smoke_test:
            return await _smoke(window, options.screenshot)
        await quit_event.wait()
        return 0
    finally:
        if window is not None:  # the UI's own work first: it uses the terminal's parts
            window.save_layout()
            window.hide()
            await window.tasks.aclose()
            await window.stop_panel_feeds()
        if terminal is not None:
            await terminal.aclose()
        if child is not None:
            await child.stop()


async def _login(
    url: str, user: str, password: Password, account: str, *, sandbox: bool
) -> Terminal:
    try:
        return await connect(url, user, password, account, sandbox=sandbox)
    except LoginFailed as exc:
        raise Failed(f"login failed: {exc}") from None


async def _dialog_login(settings: QSettings, child: SandboxChild) -> Terminal | None:
    """The login dialog. The embedded sandbox is started first (about a second) so the dialog
    can offer it; the caller stops it when the trader logs in elsewhere."""
    from app.ui.login_dialog import LoginDialog, ask_login

    try:
        sandbox_url: str | None = await child.start()
    except SandboxStartFailed:
        sandbox_url = None  # the dialog then offers only a service URL
    dialog = LoginDialog(settings, sandbox_url=sandbox_url)
    terminal: Terminal | None = await ask_login(dialog)
    dialog.deleteLater()
    return terminal


def _open_window(terminal: Terminal, settings: QSettings, desks: TradingDesks) -> MainWindow:
    bridge = SessionBridge(terminal)
    context = PanelContext(bridge, Precision(), settings, bridge.log)
    window = MainWindow(context, default_panels(desks), tradeterm.version(), risk=desks.risk)
    loop = asyncio.get_running_loop()
    errors.install(bridge.log, loop)
    if window.first_start and QApplication.platformName() != "offscreen":
        window.showMaximized()  # first start: the screen's available area, title bar included
    else:
        window.show()
    return window


async def _smoke(window: MainWindow, screenshot: Path | None) -> int:
    bridge = window.context.bridge
    seen: set[str] = set()
    painted: list[float] = []

    def on_prices(books: object) -> None:
        if books and "top of book" not in seen:
            seen.add("top of book")
            window.repaint()  # paint now, synchronously, to time the first painted price
            painted.append(time.monotonic())

    bridge.balances.connect(lambda _: seen.add("balances"))
    bridge.topOfBook.connect(on_prices)
    deadline = asyncio.get_running_loop().time() + SMOKE_TIMEOUT
    while seen != {"balances", "top of book"}:
        if asyncio.get_running_loop().time() > deadline:
            missing = ", ".join(sorted({"balances", "top of book"} - seen))
            health = bridge.health_now
            raise Failed(
                f"smoke test: no {missing} from the server within {SMOKE_TIMEOUT:.0f} s "
                f"(connection {health.health}: {health.reason})"
            )
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # let the tables and chart paint what arrived
    print(f"smoke test: {_resources_in_use()}", flush=True)
    if screenshot is not None:
        _save(window, screenshot)
    print(
        f"smoke test: balances and top of book received from "
        f"{bridge.environment.base_url}; first price painted "
        f"{painted[0] - tradeterm.LAUNCHED_AT:.2f} s after launch",
        flush=True,
    )
    return 0


def _resources_in_use() -> str:
    """Which shipped resources the running terminal uses, and from where; ``Failed`` naming
    what is missing (a wheel or bundle built without ``resources/`` starts, but bare)."""
    application = QApplication.instance()
    assert isinstance(application, QApplication)
    problems = [f"no {name}" for name in resources.missing()]
    if not application.styleSheet():
        problems.append("no theme style sheet applied")
    if application.windowIcon().isNull():
        problems.append("no window icon")
    absent = {UI_FAMILY, NUMBER_FAMILY} - set(load_fonts())
    problems.extend(f"font {family} not loaded" for family in sorted(absent))
    if problems:
        raise Failed(
            f"smoke test: resources missing from {resources.resources_root()}: "
            + "; ".join(problems)
        )
    return f"themes, icons and fonts in use from {resources.resources_root()}"


#: Qt's last messages: read only if Qt is about to abort for want of a platform plugin.
_QT_SAID: deque[str] = deque(maxlen=20)


def _qt_message(kind: QtMsgType, _: QMessageLogContext, message: str) -> None:
    """Qt's own messages go to the log file, not to stderr (kept for one-line reasons)."""
    level = {
        QtMsgType.QtDebugMsg: logging.DEBUG,
        QtMsgType.QtInfoMsg: logging.INFO,
        QtMsgType.QtWarningMsg: logging.WARNING,
    }.get(kind, logging.ERROR)
    logging.getLogger("qt").log(level, "%s", message)
    _QT_SAID.append(message)
    if kind == QtMsgType.QtFatalMsg and "platform plugin" in message:
        _no_platform()


def _no_platform() -> NoReturn:
    """No platform plugin loads: Qt would abort inside ``QApplication()`` with its own text.
    Print the doctor's advice (the missing libraries and their packages, or the missing
    display) and exit 1 instead. Chosen over probing the plugin in a child before every start
    (about half a second each time): the message handler is installed anyway, so a healthy
    launch pays nothing, and the diagnosis (``ldd``) runs only on this path."""
    from app.services.qt_platform import startup_advice

    plugins = QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)
    sys.stderr.write(startup_advice("\n".join(_QT_SAID), plugins) + "\n")
    sys.stderr.flush()
    logging.shutdown()
    os._exit(1)  # from inside Qt's fatal handler: returning would abort


def _save(widget: QWidget, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not widget.grab().save(str(path), "PNG"):
        raise Failed(f"cannot write the screenshot to {path}")


def _on_quit_signals(quit_now: Callable[[], None]) -> None:
    """Ctrl-C and SIGTERM quit cleanly. Qt's loop runs in C++, so a no-op timer gives Python
    a chance to run its signal handlers a few times a second."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: loop.call_soon_threadsafe(quit_now))
    timer = QTimer(QApplication.instance())
    timer.timeout.connect(lambda: None)
    timer.start(200)
