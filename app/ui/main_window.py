"""The main window: dockable panels, View menu, saved layout, status bar, log and notices.

Panels are declared as ``PanelSpec``s (vn.py's table-of-columns idea, applied to docks): each
becomes a QDockWidget that can be moved, tabbed, hidden and shown from the View menu. Geometry
and dock layout are saved on close and restored on start.

Layouts that fit: at first start the window takes the screen's available area and
the default layout for it (``app.ui.workspaces``: compact for 1366×768, wide for 1920×1080);
View > Layout offers both and a reset to the screen's default. The window never resizes itself:
its minimum size is set once (``MIN_SIZE``, inside 1280×720), so no panel's growing size hint
(a ticket warning, a longer status text) can push the window bigger. View > Workspaces saves,
loads, renames and deletes named layouts, and locks the docks against accidental drags.
Docks are not animated: a relayout moves them at once (animated, every relayout ran
animations for every dock — about 1,700 in 30 s of an idle terminal).

The kill switch (``app.services.risk``): Trade > Halt trading (``HALT_KEY``), and a toolbar
button that says so in words, not only in red, halt every send at once; re-enabling asks first
(Trade > Re-enable trading…, or the button while halted). Pressing the key again never
re-enables. The state is kept in the settings file, so a terminal restarted after a halt comes
back halted and says why; the risk limits come from Settings.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from PySide6.QtCore import QByteArray, QObject, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QInputDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QToolBar,
    QWidget,
)

from app import logs
from app.domain.words import in_words
from app.services.log_events import LogEvent, LogLevel
from app.services.risk import RiskGate, RiskState
from app.ui.bridge import QtTopic
from app.ui.icon import app_icon
from app.ui.manual import CONTENTS, ManualViewer, Section, help_section
from app.ui.notices import NoticeArea
from app.ui.notifier import Notifier, add_notification_menu
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.panels.base import (
    FocusEntry,
    FollowsPreferences,
    OwnsFeed,
    PanelContext,
    TradeActions,
)
from app.ui.panels.log import LogPanel
from app.ui.preferences import Preferences
from app.ui.relogin_dialog import ReloginDialog
from app.ui.secrets import PasswordVault, system_keyring
from app.ui.settings_dialog import SettingsDialog
from app.ui.status_bar import StatusBar
from app.ui.tasks import TaskOwner
from app.ui.theme import add_theme_menu, choose_theme, current_theme
from app.ui.workspaces import PLANS, Plan, WorkspaceStore, arrange, plan_for

#: 2: the default layouts that fit the screen (a layout saved by version 1, one fixed layout
#: for 1400×860, is not restored).
LAYOUT_VERSION = 2
#: The window's minimum size, set once so that no size hint can grow the window: it fits a
#: 1280×720 screen with a title bar and a panel.
MIN_SIZE = QSize(1024, 600)
LOCKED_KEY = "window/locked"
#: The kill switch: free of every other shortcut (Help > Keyboard shortcuts lists them all).
HALT_KEY = "Ctrl+Shift+H"
#: Where the kill switch's state is kept (the settings file): a restart comes back halted.
HALTED_KEY = "risk/halted"
HALTED_WHY_KEY = "risk/haltedWhy"
DOCK_FEATURES = (
    QDockWidget.DockWidgetFeature.DockWidgetMovable
    | QDockWidget.DockWidgetFeature.DockWidgetFloatable
    | QDockWidget.DockWidgetFeature.DockWidgetClosable
)
Area = Qt.DockWidgetArea


@dataclass(frozen=True)
class PanelSpec:
    name: str  # object name, the key of the saved layout: never rename
    title: str
    area: Area
    build: Callable[[PanelContext], QWidget]
    tab_with: str | None = None
    weight: int = 1  # share of its dock area's height in the default layout
    shortcut: str = ""  # e.g. "F2": a menu entry that shows the dock and focuses it
    menu: str = "Go"  # where that entry goes: "Trade" (tickets) or "Go" (every other panel)


#: Keys handled inside panels (not menu actions), for Help > Keyboard shortcuts.
PANEL_KEYS = [
    ("Enter", "Order ticket: send the order (after the confirmation, if on)"),
    ("Enter", "RFQ ticket: request a quote"),
    ("Alt+B / Alt+S", "RFQ ticket: accept the buy / sell side"),
    ("Ctrl+C", "Tables: copy the selected rows"),
    ("Click / ↑ / ↓", "Top of book: trade the highlighted pair (tickets, chart, depth)"),
    ("Delete", "Top of book: remove the selected pair from the watchlist"),
    ("Click / double-click", "Bid or ask (top of book, depth): prefill / send a limit order"),
    ("Space", "Depth: recentre the ladder on the best bid and ask (or its Centre button)"),
    ("P / R / S", "Working orders: pause, resume (re-arm), stop the selected algo order"),
    ("Right-click a header", "Watchlist, balances: choose the columns shown"),
    ("Tab / Shift+Tab", "Move between fields; Ctrl+Tab between docked tabs"),
]


class MainWindow(QMainWindow):
    closing = Signal()
    preferences_applied = Signal(object)  # Preferences

    def __init__(
        self,
        context: PanelContext,
        panels: list[PanelSpec],
        version: str,
        *,
        risk: RiskGate | None = None,
    ) -> None:
        """``risk``: the desks' risk gate (limits and kill switch); None in a window that
        cannot trade."""
        super().__init__()
        self.risk = risk
        self.context = context
        self.version = version
        env = context.bridge.environment
        self.setObjectName("mainWindow")
        self.setWindowTitle(f"Tradeterm — {env.account} @ {env.label}")
        self.setDockNestingEnabled(True)
        # With animated docks every relayout (a label's size hint on a tick) ran
        # QPropertyAnimations for the docks — about 1,700 in 30 s idle. Docks move at once.
        self.setAnimated(False)
        # the bottom tab group (the records: the widest filter bars) spans the whole width
        self.setCorner(Qt.Corner.BottomLeftCorner, Area.BottomDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Area.BottomDockWidgetArea)
        self.setMinimumSize(MIN_SIZE)
        self.workspaces = WorkspaceStore(context.settings)
        self.tasks = TaskOwner(
            self, lambda what, exc: self.notify(LogLevel.ERROR, f"{what}: {exc}")
        )
        self.docks: dict[str, QDockWidget] = {}
        self.log_panel = LogPanel()
        self._view_menu = self.menuBar().addMenu("&View")
        self._trade_menu = self.menuBar().addMenu("&Trade")
        self._go_menu = self.menuBar().addMenu("&Go")
        self.go_actions: dict[str, QAction] = {}
        bottom = next((s.name for s in panels if s.area == Area.BottomDockWidgetArea), None)
        log_spec = PanelSpec(
            "log",
            "Log",
            Area.BottomDockWidgetArea,
            lambda _: self.log_panel,
            tab_with=bottom,
            shortcut="Ctrl+L",
        )
        for spec in [*panels, log_spec]:
            self._add_dock(spec)
        for spec in [*panels, log_spec]:
            if spec.tab_with in self.docks:
                self.docks[spec.tab_with].raise_()  # the first of each tab group is shown
        self._view_menu.addSeparator()
        self._build_layout_menus()
        self._build_file_and_help_menus()
        self.status = StatusBar(context.bridge, version, self)
        #: Watches the embedded sandbox this window's terminal started (``launch``), if any.
        self.supervisor: QObject | None = None
        context.records.show.connect(self._show_record)
        self.setStatusBar(self.status)
        self.status.logInAgainRequested.connect(self.log_in_again)
        self.relogin: ReloginDialog | None = None
        self.notices = NoticeArea(self)
        application = QApplication.instance()
        self._view_menu.addSeparator()
        if isinstance(application, QApplication):
            add_theme_menu(self._view_menu, application, context.settings)
        add_notification_menu(self._view_menu, context.settings)
        self.notifier = Notifier(self, self._show_notice, context.settings, app_icon())
        context.bridge.logEvent.connect(self._on_log)
        if risk is not None:
            self._build_kill_switch(risk)
        available = self.screen().availableGeometry()
        self.resize(available.size().expandedTo(MIN_SIZE))
        self._size_areas([*panels])
        self._default_state = self.saveState(LAYOUT_VERSION)
        self._restore()

    # -- building -------------------------------------------------------------------------------

    def _add_dock(self, spec: PanelSpec) -> None:
        dock = QDockWidget(spec.title, self)
        dock.setObjectName(f"dock_{spec.name}")
        dock.setWidget(spec.build(self.context))
        self.addDockWidget(spec.area, dock)
        if spec.tab_with and spec.tab_with in self.docks:
            self.tabifyDockWidget(self.docks[spec.tab_with], dock)
        self.docks[spec.name] = dock
        self._view_menu.addAction(dock.toggleViewAction())
        if spec.shortcut:
            go = QAction(spec.title, self)
            go.setObjectName(f"go_{spec.name}")
            go.setShortcut(QKeySequence(spec.shortcut))
            go.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
            go.triggered.connect(lambda _=False, name=spec.name: self.go_to(name))
            (self._trade_menu if spec.menu == "Trade" else self._go_menu).addAction(go)
            self.go_actions[spec.name] = go
        if isinstance(panel := dock.widget(), TradeActions):  # the ticket's Hit bid / Lift offer
            self._trade_menu.addActions(panel.trade_actions())

    # -- the kill switch ------------------------------------------------------------------------

    def _build_kill_switch(self, risk: RiskGate) -> None:
        """Trade menu entries, the toolbar button and the status bar's word; the limits from
        Settings and the halt kept from the last session, before anything can be sent."""
        self._trade_menu.addSeparator()
        self.halt_action = QAction("&Halt trading (kill switch)", self)
        self.halt_action.setObjectName("haltTrading")
        self.halt_action.setShortcut(QKeySequence(HALT_KEY))
        self.halt_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.halt_action.setToolTip("Refuse every order, RFQ accept and algo order from now on")
        self.halt_action.triggered.connect(
            lambda: self.halt_trading(f"with {HALT_KEY} or the Trade menu")
        )
        self._trade_menu.addAction(self.halt_action)
        self.resume_action = QAction("&Re-enable trading…", self)
        self.resume_action.setObjectName("resumeTrading")
        self.resume_action.triggered.connect(self.ask_resume)
        self._trade_menu.addAction(self.resume_action)
        self.risk_toolbar = QToolBar("Kill switch", self)
        self.risk_toolbar.setObjectName("riskToolBar")
        self.risk_toolbar.setMovable(False)
        self.kill_action = QAction(self)
        self.kill_action.setObjectName("killSwitch")
        self.kill_action.triggered.connect(self._kill_button)
        self.risk_toolbar.addAction(self.kill_action)
        self.kill_button = self.risk_toolbar.widgetForAction(self.kill_action)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.risk_toolbar)
        self.resume_box: QMessageBox | None = None
        settings = self.context.settings
        risk.limits = Preferences.load(settings).risk_limits()
        halted = settings.value(HALTED_KEY, False)
        if halted is True or str(halted).lower() == "true":
            why = str(settings.value(HALTED_WHY_KEY, "") or "no reason kept")
            risk.halt(why)
            self.notify(
                LogLevel.WARNING,
                f"Trading is halted, as it was when the terminal last closed ({risk.why}): "
                "Trade > Re-enable trading… to send again",
            )
        self._risk_topic = QtTopic(risk.changed, self)
        self._risk_topic.connect(self._on_risk)
        follow_palette(self._kill_palette)
        self._show_risk(risk.state)

    def halt_trading(self, how: str = "from the terminal") -> None:
        """Engage the kill switch now (a second press keeps it engaged)."""
        if self.risk is None:
            return
        if self.risk.halted:
            self.notify(LogLevel.WARNING, f"Trading is already halted ({self.risk.why})")
            return
        at = datetime.now(UTC).strftime("%H:%M:%S")
        self.risk.halt(f"halted {how} at {at} UTC")

    def ask_resume(self) -> QMessageBox | None:
        """Re-enable trading, after the trader confirms (a message box, not ``exec``)."""
        if self.risk is None or not self.risk.halted:
            return None
        if self.resume_box is not None and self.resume_box.isVisible():
            self.resume_box.raise_()
            return self.resume_box
        box = QMessageBox(self)
        box.setObjectName("resumeTrading")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Re-enable trading")
        box.setText(
            f"Trading is halted ({self.risk.why}).\n\nRe-enable it? Orders, RFQ accepts and "
            "algo orders are sent again, within the risk limits."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        yes = box.button(QMessageBox.StandardButton.Yes)
        yes.setText("Re-enable trading")
        yes.clicked.connect(self._resume)
        box.finished.connect(lambda _: box.deleteLater())
        box.open()
        self.resume_box = box
        return box

    def _resume(self) -> None:
        if self.risk is not None and self.risk.halted:
            self.risk.resume()
            self.notify(LogLevel.WARNING, "Trading re-enabled")

    def _kill_button(self) -> None:
        if self.risk is not None and self.risk.halted:
            self.ask_resume()
        else:
            self.halt_trading("from the toolbar")

    def _on_risk(self, state: RiskState) -> None:
        """Shown and kept (the settings file) at once: a restart comes back as it is now."""
        settings = self.context.settings
        settings.setValue(HALTED_KEY, state.halted)
        settings.setValue(HALTED_WHY_KEY, state.why)
        settings.sync()
        if state.halted:
            self.notify(LogLevel.WARNING, f"Trading halted: {state.why}")
        self._show_risk(state)

    def _show_risk(self, state: RiskState) -> None:
        self.resume_action.setEnabled(state.halted)
        if state.halted:
            self.kill_action.setText("■ TRADING HALTED — Re-enable…")
            self.kill_action.setToolTip(f"Trading is halted ({state.why}); click to re-enable")
        else:
            self.kill_action.setText("■ Halt trading")
            self.kill_action.setToolTip(
                f"Kill switch: refuse every order, RFQ accept and algo order ({HALT_KEY})"
            )
        self.kill_button.setProperty("halted", state.halted)
        self._kill_palette(current_palette())
        self.status.show_risk(state)

    def _kill_palette(self, palette: TradePalette) -> None:
        """The button on the theme's error colour while halted (its words say it too)."""
        if self.kill_button.property("halted"):
            self.kill_button.setStyleSheet(
                f"QToolButton {{ background:{palette.error.name()}; "
                f"color:{palette.background.name()}; font-weight:bold; }}"
            )
        else:
            self.kill_button.setStyleSheet("")

    def _show_record(self, panel: str, _words: str) -> None:
        """A dock was asked to show a record (it searches for it itself): bring it to front."""
        if panel in self.docks:
            self.go_to(panel)

    def go_to(self, name: str) -> None:
        """Show the panel's dock, bring it to front, and put the cursor in its entry field
        (a ``FocusEntry`` panel says where). Works with the dock hidden or tabbed away."""
        dock = self.docks[name]
        dock.show()
        dock.raise_()
        self.activateWindow()
        widget = dock.widget()
        if isinstance(widget, FocusEntry):
            widget.focus_entry()
            return
        target = next(
            (
                child
                for child in widget.findChildren(QWidget)
                if child.focusPolicy() & Qt.FocusPolicy.TabFocus and child.isVisibleTo(widget)
            ),
            widget,
        )
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)

    async def stop_panel_feeds(self) -> None:
        """Stop the feeds panels own (``OwnsFeed``: order list, deposits) before the client
        closes, so no poll is cut off mid-request at quit."""
        for dock in self.docks.values():
            widget = dock.widget()
            if isinstance(widget, OwnsFeed):
                await widget.stop_feed()

    def _size_areas(self, panels: list[PanelSpec]) -> None:
        """Share each dock area's height by the panels' weights (the default layout)."""
        for area in {spec.area for spec in panels}:
            specs = [s for s in panels if s.area == area and not s.tab_with]
            if len(specs) > 1:
                self.resizeDocks(
                    [self.docks[s.name] for s in specs],
                    [s.weight * 100 for s in specs],
                    Qt.Orientation.Vertical,
                )

    def _build_layout_menus(self) -> None:
        """View > Layout (the two defaults, reset) and View > Workspaces (named layouts, lock);
        every entry has a mnemonic, so the keyboard reaches them all."""
        layout_menu = self._view_menu.addMenu("&Layout")
        layout_menu.setObjectName("layoutMenu")
        self.layout_actions: dict[str, QAction] = {}
        for plan in PLANS.values():
            action = QAction(plan.title, self)
            action.setObjectName(f"layout_{plan.name}")
            action.triggered.connect(lambda _=False, p=plan: self.apply_plan(p))
            layout_menu.addAction(action)
            self.layout_actions[plan.name] = action
        layout_menu.addSeparator()
        self.reset_action = QAction("&Reset to the default for this screen", self)
        self.reset_action.triggered.connect(self.reset_layout)
        layout_menu.addAction(self.reset_action)
        menu = self._view_menu.addMenu("&Workspaces")
        menu.setObjectName("workspacesMenu")
        self.workspaces_menu = menu
        self.save_workspace_action = QAction("&Save as…", self)
        self.save_workspace_action.triggered.connect(self.ask_workspace_name)
        menu.addAction(self.save_workspace_action)
        self.load_menu = menu.addMenu("&Load")
        self.rename_menu = menu.addMenu("&Rename")
        self.delete_menu = menu.addMenu("&Delete")
        menu.aboutToShow.connect(self._list_workspaces)
        menu.addSeparator()
        self.lock_action = QAction("Loc&k layout", self)
        self.lock_action.setCheckable(True)
        self.lock_action.setToolTip("Docks cannot be moved, floated or closed while locked")
        self.lock_action.toggled.connect(self.set_locked)
        menu.addAction(self.lock_action)
        self._list_workspaces()

    def _list_workspaces(self) -> None:
        """The saved names under Load, Rename and Delete, read each time View > Workspaces
        opens (never while one of its entries is being triggered: that deletes the entry)."""
        names = self.workspaces.names()
        for submenu, act in (
            (self.load_menu, self.load_workspace),
            (self.rename_menu, self.ask_workspace_rename),
            (self.delete_menu, self.delete_workspace),
        ):
            submenu.clear()
            for name in names:
                action = submenu.addAction(name.replace("&", "&&"))
                action.triggered.connect(lambda _=False, n=name, a=act: a(n))
            submenu.setEnabled(bool(names))

    # -- layouts and workspaces -----------------------------------------------------------------

    def screen_plan(self) -> Plan:
        """The default layout for the screen the window is on."""
        return plan_for(self.screen().availableGeometry().size())

    def apply_plan(self, plan: Plan) -> None:
        """Arrange the docks as ``plan`` says, in the window's current size (the window keeps
        its size: a layout is chosen for the screen, not forced on it)."""
        if not arrange(self, self.docks, plan):
            self.restoreState(self._default_state, LAYOUT_VERSION)
            for dock in self.docks.values():
                dock.show()

    def ask_workspace_name(self) -> None:
        """Save as…: a name, then the docks' state under it (an existing name is replaced)."""
        dialog = QInputDialog(self)
        dialog.setObjectName("workspaceName")
        dialog.setWindowTitle("Save workspace")
        dialog.setLabelText("Name of this workspace:")
        dialog.textValueSelected.connect(self.save_workspace)
        dialog.finished.connect(lambda _: dialog.deleteLater())
        dialog.open()
        self.workspace_dialog = dialog

    def save_workspace(self, name: str) -> None:
        name = name.strip()
        if name:
            self.workspaces.save(name, self.saveState(LAYOUT_VERSION))
            self.notify(LogLevel.INFO, f"Workspace {name!r} saved")

    def load_workspace(self, name: str) -> None:
        state = self.workspaces.load(name)
        if state is None or not self.restoreState(state, LAYOUT_VERSION):
            self.notify(LogLevel.WARNING, f"Workspace {name!r} cannot be loaded")
            return
        self.set_locked(self.lock_action.isChecked())  # restoring does not unlock
        self.notify(LogLevel.INFO, f"Workspace {name!r} loaded")

    def ask_workspace_rename(self, name: str) -> None:
        dialog = QInputDialog(self)
        dialog.setObjectName("workspaceRename")
        dialog.setWindowTitle("Rename workspace")
        dialog.setLabelText(f"New name for {name!r}:")
        dialog.setTextValue(name)
        dialog.textValueSelected.connect(lambda new: self.rename_workspace(name, new))
        dialog.finished.connect(lambda _: dialog.deleteLater())
        dialog.open()
        self.workspace_dialog = dialog

    def rename_workspace(self, old: str, new: str) -> None:
        new = new.strip()
        if not new or new == old:
            return
        try:
            self.workspaces.rename(old, new)
        except (KeyError, ValueError) as exc:
            self.notify(LogLevel.WARNING, f"Workspace not renamed: {exc}")

    def delete_workspace(self, name: str) -> None:
        self.workspaces.delete(name)
        self.notify(LogLevel.INFO, f"Workspace {name!r} deleted")

    def set_locked(self, locked: bool) -> None:
        """Locked: no dock can be dragged away, floated or closed (the splitters still
        resize); remembered in the settings."""
        if self.lock_action.isChecked() != locked:
            self.lock_action.setChecked(locked)  # comes back here through ``toggled``
            return
        for dock in self.docks.values():
            dock.setFeatures(
                QDockWidget.DockWidgetFeature.NoDockWidgetFeatures if locked else DOCK_FEATURES
            )
        self.context.settings.setValue(LOCKED_KEY, locked)

    @property
    def locked(self) -> bool:
        return self.lock_action.isChecked()

    def _build_file_and_help_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.log_in_again_action = QAction("&Log in again…", self)
        self.log_in_again_action.setToolTip("Give the password again after the login expired")
        self.log_in_again_action.triggered.connect(self.log_in_again)
        file_menu.addAction(self.log_in_again_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        self.menuBar().insertMenu(self._view_menu.menuAction(), file_menu)
        edit_menu = QMenu("&Edit", self)
        self.settings_action = QAction("&Settings…", self)
        self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.settings_action.triggered.connect(self.open_settings)
        edit_menu.addAction(self.settings_action)
        self.menuBar().insertMenu(self._view_menu.menuAction(), edit_menu)
        help_menu = self.menuBar().addMenu("&Help")
        self.manual: ManualViewer | None = None
        guide = QAction("&User guide", self)
        guide.setObjectName("userGuide")
        guide.triggered.connect(lambda: self.show_manual(CONTENTS))
        help_menu.addAction(guide)
        # F1 is context help, as on most desktops; the application context reaches it from a
        # floating dock too
        help_here = QAction("&Help on this panel", self)
        help_here.setObjectName("helpOnPanel")
        help_here.setShortcut(QKeySequence("F1"))
        help_here.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        help_here.triggered.connect(self.help_on_focus)
        help_menu.addAction(help_here)
        shortcuts = QAction("&Keyboard shortcuts", self)
        shortcuts.setShortcut(QKeySequence("Shift+F1"))
        shortcuts.triggered.connect(self.show_shortcuts)
        help_menu.addAction(shortcuts)
        log_folder = QAction("Open &log folder", self)
        log_folder.triggered.connect(self.open_log_folder)
        help_menu.addAction(log_folder)
        help_menu.addSeparator()
        about = QAction("&About Tradeterm", self)
        about.triggered.connect(self.show_about)
        help_menu.addAction(about)

    # -- settings, shortcuts, logs --------------------------------------------------------------

    def log_in_again(self) -> ReloginDialog:
        """The password again (after "login expired", or whenever the trader asks); one
        dialog at a time."""
        if self.relogin is not None and self.relogin.isVisible():
            self.relogin.raise_()
            return self.relogin
        if self.relogin is not None:
            self.relogin.deleteLater()
        self.relogin = ReloginDialog(self.context.bridge, self)
        self.relogin.open()
        return self.relogin

    def open_settings(self) -> None:
        pairs = self.context.bridge.available_pairs
        assets = sorted({a for pair in pairs for a in pair.split("/")})
        dialog = SettingsDialog(self.context.settings, pairs, assets, self)
        dialog.applied.connect(self.apply_preferences)
        dialog.finished.connect(lambda _: dialog.deleteLater())
        dialog.open()
        self.settings_dialog = dialog

    def apply_preferences(self, prefs: Preferences) -> None:
        """Put the preferences to work now: poll intervals, pre-trade limits, risk limits,
        auto-requote, log level, the default watchlist, and each panel's own
        (``FollowsPreferences``: the tickets take their limits and auto-requote, the lists
        their intervals)."""
        bridge = self.context.bridge
        bridge.set_intervals(prefs.intervals())
        logging.getLogger().setLevel(prefs.python_log_level())
        application = QApplication.instance()
        if isinstance(application, QApplication) and current_theme(application) != prefs.theme:
            choose_theme(application, self.context.settings, prefs.theme)
        if prefs.default_watchlist and list(prefs.default_watchlist) != bridge.watchlist:
            bridge.set_watchlist(list(prefs.default_watchlist))
        if not prefs.remember_password_allowed and not bridge.environment.sandbox:
            self.tasks.spawn(self._forget_password(), "removing the remembered password")
        for dock in self.docks.values():
            widget = dock.widget()
            if isinstance(widget, FollowsPreferences):
                widget.apply_preferences(prefs)
        if self.risk is not None:
            self.risk.limits = prefs.risk_limits()
        self.preferences_applied.emit(prefs)
        self.notify(LogLevel.INFO, "Settings applied")

    async def _forget_password(self) -> None:
        """Remembering switched off: the keyring entry of this login goes too."""
        store = system_keyring().store
        if store is not None:
            env = self.context.bridge.environment
            await PasswordVault(store).forget(env.user, env.base_url)

    def shortcut_list(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every action with a shortcut in the menus."""
        found: list[tuple[str, str]] = []
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            if not isinstance(menu, QMenu):
                continue
            for action in menu.actions():
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                if keys:
                    what = f"{menu_action.text()} > {action.text()}".replace("&", "")
                    found.append((keys, what))
        return [*found, *PANEL_KEYS]

    def show_shortcuts(self) -> None:
        rows = "".join(
            f"<tr><td><b>{html.escape(keys)}</b></td><td>{html.escape(what)}</td></tr>"
            for keys, what in self.shortcut_list()
        )
        box = QMessageBox(self)
        box.setObjectName("shortcutsHelp")
        box.setWindowTitle("Keyboard shortcuts")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(f"<table cellspacing=6>{rows}</table>")
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.open()
        self.shortcuts_box = box

    def show_manual(self, section: Section = CONTENTS) -> ManualViewer:
        """The user guide at ``section``: one viewer per window, kept between uses."""
        if self.manual is None:
            self.manual = ManualViewer(self)
        self.manual.open_at(section)
        return self.manual

    def help_on_focus(self) -> ManualViewer:
        """F1: the user guide at the section of the panel that has the keyboard focus."""
        focus = QApplication.focusWidget()
        return self.show_manual(help_section(self.docks, focus, self.manual))

    def open_log_folder(self) -> None:
        folder = logs.log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.notify(
                LogLevel.WARNING, f"Cannot open a file browser here; the logs are in {folder}"
            )

    # -- layout persistence ---------------------------------------------------------------------

    def _restore(self) -> None:
        """The saved geometry and docks; at first start (or after a layout version change)
        the default layout for the screen."""
        settings = self.context.settings
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        #: No saved geometry: the launcher shows the window maximized (the screen's area).
        self.first_start = not (isinstance(geometry, QByteArray) and self.restoreGeometry(geometry))
        if not (isinstance(state, QByteArray) and self.restoreState(state, LAYOUT_VERSION)):
            self.apply_plan(self.screen_plan())
        locked = settings.value(LOCKED_KEY, False)
        self.set_locked(locked is True or str(locked).lower() == "true")

    def save_layout(self) -> None:
        settings = self.context.settings
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState(LAYOUT_VERSION))
        settings.sync()

    def reset_layout(self) -> None:
        """The default layout for the screen, every dock shown (the lock stays as it is)."""
        self.apply_plan(self.screen_plan())
        self.notify(LogLevel.INFO, "Layout reset to the default")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.notices.place()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.notifier.close()
        self.save_layout()
        self.closing.emit()
        super().closeEvent(event)

    # -- telling the trader ---------------------------------------------------------------------

    def notify(self, level: LogLevel, message: str) -> None:
        """Log it and show a short notice (errors and warnings; info goes to the log only
        unless asked)."""
        self.context.bridge.log(level, message)

    def _show_notice(self, level: str, message: str) -> None:
        self.notices.show_notice(level, message)

    def _on_log(self, event: LogEvent) -> None:
        """The log panel keeps the whole message (URLs too); the notice and the desktop alert
        say it in words (``in_words``: no URL, no word twice)."""
        self.log_panel.add(event)
        if event.level != LogLevel.INFO:
            self.notices.show_notice(event.level, event.message)
        if event.kind:  # fills, refusals, expiring quotes, connection
            self.notifier.alert(event.kind, in_words(event.message))

    def show_about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("About Tradeterm")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(
            f"<b>Tradeterm</b> {html.escape(self.version)}<br>Reading the service information…"
        )
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.open()
        self.about_box = box

        async def fill() -> None:
            infos = await self.context.bridge.service_info()
            rows = "".join(
                f"<tr><td>{html.escape(i.service)}</td><td>{html.escape(i.application)}</td>"
                f"<td>{html.escape(i.version)}</td><td>{html.escape(i.commit[:10])}</td>"
                f"<td>{html.escape(i.branch)}</td></tr>"
                for i in infos
            )
            box.setText(
                f"<b>Tradeterm</b> {html.escape(self.version)}<br><br>"
                "<table cellspacing=6><tr><th>service</th><th>application</th><th>version"
                f"</th><th>commit</th><th>branch</th></tr>{rows}</table>"
            )

        self.tasks.spawn(fill(), "reading the service information")
