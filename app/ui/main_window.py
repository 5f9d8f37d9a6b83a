"""The main window: dockable panels, View menu, saved layout, status bar, log and notices.

Panels are declared as ``PanelSpec``s (vn.py's table-of-columns idea, applied to docks): each
becomes a QDockWidget that can be moved, tabbed, hidden and shown from the View menu. Geometry
and dock layout are saved on close and restored on start; View > Reset layout restores the
layout the window was built with.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox, QWidget

from app.services.session import LogEvent
from app.ui.notices import NoticeArea
from app.ui.panels.base import PanelContext
from app.ui.panels.log import LogPanel
from app.ui.status_bar import StatusBar
from app.ui.tasks import TaskOwner

LAYOUT_VERSION = 1
Area = Qt.DockWidgetArea


@dataclass(frozen=True)
class PanelSpec:
    name: str  # object name, the key of the saved layout: never rename
    title: str
    area: Area
    build: Callable[[PanelContext], QWidget]
    tab_with: str | None = None
    weight: int = 1  # share of its dock area's height in the default layout
    shortcut: str = ""  # e.g. "F2": Trade menu entry that shows the dock and focuses its entry


class MainWindow(QMainWindow):
    closing = Signal()

    def __init__(self, context: PanelContext, panels: list[PanelSpec], version: str) -> None:
        super().__init__()
        self.context = context
        self.version = version
        session = context.bridge.session
        env = session.environment
        self.setObjectName("mainWindow")
        self.setWindowTitle(f"Tradeterm — {env.account} @ {env.label}")
        self.setDockNestingEnabled(True)
        self.setCorner(Qt.Corner.BottomLeftCorner, Area.LeftDockWidgetArea)
        self.tasks = TaskOwner(self, lambda what, exc: self.notify("error", f"{what}: {exc}"))
        self.docks: dict[str, QDockWidget] = {}
        self.log_panel = LogPanel()
        self._view_menu = self.menuBar().addMenu("&View")
        self._trade_menu = self.menuBar().addMenu("&Trade")
        self.go_actions: dict[str, QAction] = {}
        for spec in [
            *panels,
            PanelSpec("log", "Log", Area.BottomDockWidgetArea, lambda _: self.log_panel),
        ]:
            self._add_dock(spec)
        self._view_menu.addSeparator()
        reset = QAction("&Reset layout", self)
        reset.triggered.connect(self.reset_layout)
        self._view_menu.addAction(reset)
        self._build_file_and_help_menus()
        self.status = StatusBar(context.bridge, version, self)
        self.setStatusBar(self.status)
        self.notices = NoticeArea(self)
        context.bridge.logEvent.connect(self._on_log)
        self.resize(1400, 860)
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
            self._trade_menu.addAction(go)
            self.go_actions[spec.name] = go

    def go_to(self, name: str) -> None:
        """Show the panel's dock, bring it to front, and put the cursor in its entry field
        (panels with one have ``focus_entry()``). Works with the dock hidden or tabbed away."""
        dock = self.docks[name]
        dock.show()
        dock.raise_()
        self.activateWindow()
        focus = getattr(dock.widget(), "focus_entry", None)
        if callable(focus):
            focus()

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

    def _build_file_and_help_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        self.menuBar().insertMenu(self._view_menu.menuAction(), file_menu)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About Tradeterm", self)
        about.triggered.connect(self.show_about)
        help_menu.addAction(about)

    # -- layout persistence ---------------------------------------------------------------------

    def _restore(self) -> None:
        settings = self.context.settings
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state, LAYOUT_VERSION)

    def save_layout(self) -> None:
        settings = self.context.settings
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState(LAYOUT_VERSION))
        settings.sync()

    def reset_layout(self) -> None:
        self.restoreState(self._default_state, LAYOUT_VERSION)
        for dock in self.docks.values():
            dock.show()
        self.notify("info", "Layout reset to the default")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.notices.place()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        self.closing.emit()
        super().closeEvent(event)

    # -- telling the trader ---------------------------------------------------------------------

    def notify(self, level: str, message: str) -> None:
        """Log it and show a short notice (errors and warnings; info goes to the log only
        unless asked)."""
        self.context.bridge.session.log(level, message)

    def _on_log(self, event: LogEvent) -> None:
        self.log_panel.add(event)
        if event.level in ("success", "warning", "error"):
            self.notices.show_notice(event.level, event.message)

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
            infos = await self.context.bridge.session.service_info()
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
