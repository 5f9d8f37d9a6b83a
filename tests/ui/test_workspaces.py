"""Named workspaces, the layout lock and the reset, driven through View > Layout and
View > Workspaces with real key events (Alt+V, then each entry's mnemonic or the arrows)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QByteArray, QCoreApplication, QPoint, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDockWidget, QInputDialog, QLineEdit, QMenu
from pytestqt.qtbot import QtBot

from app.ui.launch import default_panels
from app.ui.main_window import Area, MainWindow
from app.ui.panels.base import PanelContext
from app.ui.workspaces import COMPACT, WIDE, WorkspaceStore
from tests.helpers.live import Live

pytestmark = pytest.mark.qt_log_ignore(
    # the offscreen platform says so for every popup menu; a real platform does not
    "^This plugin does not support raise\\(\\)$",
    "^This plugin does not support grabbing the keyboard$",
)
NO_FEATURES = QDockWidget.DockWidgetFeature.NoDockWidgetFeatures


def open_window(qtbot: QtBot, live: Live, settings: QSettings) -> MainWindow:
    context = PanelContext(live.bridge, live.context.precision, settings, live.context.notify)
    window = MainWindow(context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window


@pytest.fixture
def window(qtbot: QtBot, live: Live, settings: QSettings) -> Iterator[MainWindow]:
    shown = open_window(qtbot, live, settings)
    yield shown
    shown.close()


def popup(qtbot: QtBot) -> QMenu:
    """The menu open at the moment."""
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    return menu


def press(qtbot: QtBot, *keys: Qt.Key) -> None:
    """Each key to the menu open at that moment (a mnemonic opens the next one)."""
    for key in keys:
        QTest.keyClick(popup(qtbot), key)


def view_menu(qtbot: QtBot, window: MainWindow, *keys: Qt.Key) -> None:
    """Alt+V opens View; then ``keys`` walk the menus."""
    QTest.keyClick(window, Qt.Key.Key_V, Qt.KeyboardModifier.AltModifier)
    press(qtbot, *keys)


def answer(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Type ``text`` into the workspace name dialog and press Enter."""
    qtbot.waitUntil(lambda: isinstance(getattr(window, "workspace_dialog", None), QInputDialog))
    dialog = window.workspace_dialog
    qtbot.waitUntil(dialog.isVisible)
    edit = dialog.findChild(QLineEdit)
    assert edit is not None
    edit.selectAll()
    QTest.keyClicks(edit, text)
    QTest.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible())


def area(window: MainWindow, name: str) -> Area:
    return window.dockWidgetArea(window.docks[name])


def side_by_side(window: MainWindow, left: str, right: str) -> bool:
    a, b = window.docks[left], window.docks[right]
    return a.isVisible() and b.isVisible() and a.geometry().right() < b.geometry().left()


def test_save_load_rename_delete_through_the_menu(
    qtbot: QtBot, window: MainWindow, settings: QSettings
) -> None:
    window.apply_plan(WIDE)
    view_menu(qtbot, window, Qt.Key.Key_W, Qt.Key.Key_S)  # Workspaces > Save as…
    answer(qtbot, window, "Scalping")
    assert window.workspaces.names() == ["Scalping"]
    assert side_by_side(window, "chart", "depth")
    window.apply_plan(COMPACT)  # depth tabbed behind the chart
    window.docks["balances"].hide()
    assert window.tabifiedDockWidgets(window.docks["chart"]) == [window.docks["depth"]]
    view_menu(qtbot, window, Qt.Key.Key_W, Qt.Key.Key_L, Qt.Key.Key_Down, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: side_by_side(window, "chart", "depth"))
    assert window.docks["balances"].isVisible()
    view_menu(qtbot, window, Qt.Key.Key_W, Qt.Key.Key_R, Qt.Key.Key_Down, Qt.Key.Key_Return)
    answer(qtbot, window, "Scalping / BTC")  # a slash is not a settings group
    assert window.workspaces.names() == ["Scalping / BTC"]
    assert WorkspaceStore(settings).load("Scalping / BTC") is not None
    view_menu(qtbot, window, Qt.Key.Key_W, Qt.Key.Key_D, Qt.Key.Key_Down, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.workspaces.names() == [])
    view_menu(qtbot, window, Qt.Key.Key_W)
    assert not window.load_menu.isEnabled()  # nothing to load
    press(qtbot, Qt.Key.Key_Escape, Qt.Key.Key_Escape)


@pytest.mark.slow
def test_workspaces_outlive_the_window(
    qtbot: QtBot, live: Live, window: MainWindow, settings: QSettings
) -> None:
    window.apply_plan(WIDE)
    window.save_workspace("Wide desk")
    window.close()
    again = open_window(qtbot, live, settings)
    assert again.workspaces.names() == ["Wide desk"]
    again.apply_plan(COMPACT)
    again.load_workspace("Wide desk")
    settle()
    assert side_by_side(again, "chart", "depth")
    again.close()


def test_rename_refuses_a_name_in_use(window: MainWindow) -> None:
    window.save_workspace("one")
    window.save_workspace("two")
    window.rename_workspace("one", "two")
    assert window.workspaces.names() == ["one", "two"]
    with pytest.raises(ValueError, match="exists"):
        window.workspaces.rename("one", "two")


@pytest.mark.slow
def test_the_lock_holds_docks_in_place_and_is_remembered(
    qtbot: QtBot, live: Live, window: MainWindow, settings: QSettings
) -> None:
    view_menu(qtbot, window, Qt.Key.Key_W, Qt.Key.Key_K)  # Workspaces > Lock layout
    qtbot.waitUntil(lambda: window.locked)
    assert all(dock.features() == NO_FEATURES for dock in window.docks.values())
    assert not double_click_title(window.docks["balances"])  # stays where it is
    window.save_workspace("locked")
    window.load_workspace("locked")
    assert all(dock.features() == NO_FEATURES for dock in window.docks.values())
    window.close()
    again = open_window(qtbot, live, settings)
    assert again.locked and again.lock_action.isChecked()
    assert all(dock.features() == NO_FEATURES for dock in again.docks.values())
    view_menu(qtbot, again, Qt.Key.Key_W, Qt.Key.Key_K)  # unlock
    qtbot.waitUntil(lambda: not again.locked)
    movable = QDockWidget.DockWidgetFeature.DockWidgetMovable
    closable = QDockWidget.DockWidgetFeature.DockWidgetClosable
    assert all(
        dock.features() & movable and dock.features() & closable for dock in again.docks.values()
    )
    assert double_click_title(again.docks["balances"])  # unlocked: it floats
    again.docks["balances"].setFloating(False)
    again.close()


def double_click_title(dock: QDockWidget) -> bool:
    """Double-click the dock's title bar (which floats a floatable dock); floating after?"""
    title = QPoint(40, dock.widget().geometry().top() // 2)
    QTest.mouseDClick(dock, Qt.MouseButton.LeftButton, pos=title)
    settle()
    return dock.isFloating()


def settle() -> None:
    for _ in range(3):
        QCoreApplication.processEvents()


def test_layout_menu_and_reset_to_the_screen_default(qtbot: QtBot, window: MainWindow) -> None:
    view_menu(qtbot, window, Qt.Key.Key_L, Qt.Key.Key_W)  # Layout > Wide
    qtbot.waitUntil(lambda: side_by_side(window, "chart", "depth"))
    assert side_by_side(window, "topOfBook", "chart")
    window.docks["chart"].hide()
    window.removeDockWidget(window.docks["balances"])
    window.addDockWidget(Area.RightDockWidgetArea, window.docks["balances"])
    window.docks["balances"].show()
    view_menu(qtbot, window, Qt.Key.Key_L, Qt.Key.Key_C)  # Layout > Compact
    qtbot.waitUntil(lambda: window.tabifiedDockWidgets(window.docks["chart"]) != [])
    assert window.docks["chart"].isVisible()
    assert area(window, "balances") == area(window, "topOfBook")
    top, below = window.docks["topOfBook"].geometry(), window.docks["balances"].geometry()
    assert below.top() > top.bottom() and below.left() == top.left()
    window.docks["orders"].hide()
    view_menu(qtbot, window, Qt.Key.Key_L, Qt.Key.Key_R)  # Layout > Reset
    qtbot.waitUntil(lambda: window.docks["orders"].isVisible())
    assert window.screen_plan() in (COMPACT, WIDE)
    assert window.size().width() == 1366  # a layout never resizes the window


def test_a_state_of_the_old_layout_version_is_not_restored(
    qtbot: QtBot, live: Live, settings: QSettings
) -> None:
    settings.setValue("window/state", QByteArray(b"not a state of this version"))
    window = open_window(qtbot, live, settings)
    assert all(not dock.isHidden() for dock in window.docks.values())
    assert side_by_side(window, "topOfBook", "orderTicket")  # the screen's default
    window.close()
