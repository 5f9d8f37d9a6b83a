"""The notifier: the in-app notice always; a tray message (and an optional sound) only while the
trader is away from the window; switches from the settings; focus never taken."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow, QMenu, QSystemTrayIcon, QWidget
from pytestqt.qtbot import QtBot

from app.services.log_events import EventKind
from app.ui.notifier import (
    KINDS,
    SOUND_KEY,
    TRAY_KEY,
    Notifier,
    TrayMessage,
    add_notification_menu,
    kind_key,
)

FILL = "Bought 0.5 BTC for 45,617.25 USD at 91,234.50"


@dataclass
class Desk:
    window: QMainWindow
    elsewhere: QWidget  # another application's window, as far as the terminal can tell
    notifier: Notifier
    notices: list[tuple[str, str]]
    settings: QSettings


def _activate(qtbot: QtBot, widget: QWidget) -> None:
    widget.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is widget, timeout=2000)


@pytest.fixture
def desk(qtbot: QtBot, settings: QSettings) -> Desk:
    window = QMainWindow()
    window.setWindowTitle("Tradeterm — test")
    elsewhere = QWidget()
    for widget in (window, elsewhere):
        qtbot.addWidget(widget)
        widget.show()
        qtbot.waitExposed(widget)
    notices: list[tuple[str, str]] = []
    notifier = Notifier(window, lambda level, text: notices.append((level, text)), settings)
    return Desk(window, elsewhere, notifier, notices, settings)


def _tray_exists() -> bool:
    return QSystemTrayIcon.isSystemTrayAvailable()


def test_fill_while_away_goes_to_the_tray_and_the_window(desk: Desk, qtbot: QtBot) -> None:
    _activate(qtbot, desk.elsewhere)
    desk.notifier.notify(EventKind.FILL, FILL)
    assert desk.notices == [("success", FILL)]
    assert desk.notifier.shown_tray == [
        TrayMessage(EventKind.FILL, "Order filled", FILL, delivered=_tray_exists())
    ]


def test_fill_while_looking_shows_only_the_notice(desk: Desk, qtbot: QtBot) -> None:
    _activate(qtbot, desk.window)
    desk.notifier.notify(EventKind.FILL, FILL)
    assert desk.notices == [("success", FILL)]
    assert desk.notifier.shown_tray == []


def test_a_dialog_of_the_window_counts_as_looking(desk: Desk, qtbot: QtBot) -> None:
    dialog = QDialog(desk.window)
    dialog.show()
    _activate(qtbot, dialog)
    desk.notifier.notify(EventKind.REFUSAL, "Insufficient Funds")
    assert desk.notices == [("error", "Insufficient Funds")]
    assert desk.notifier.shown_tray == []
    dialog.close()


def test_an_alert_never_takes_the_focus(desk: Desk, qtbot: QtBot) -> None:
    _activate(qtbot, desk.elsewhere)
    for kind in KINDS:
        desk.notifier.notify(kind, f"{kind} happened")
    assert [m.kind for m in desk.notifier.shown_tray] == list(KINDS)
    assert QApplication.activeWindow() is desk.elsewhere
    assert not desk.window.isActiveWindow()


def test_a_kind_switched_off_keeps_its_notice_but_stops_interrupting(
    desk: Desk, qtbot: QtBot
) -> None:
    desk.settings.setValue(kind_key(EventKind.FILL), False)
    _activate(qtbot, desk.elsewhere)
    desk.notifier.notify(EventKind.FILL, FILL)
    desk.notifier.notify(EventKind.OFFLINE, "requests failing")
    assert desk.notices == [("success", FILL), ("error", "requests failing")]
    assert [m.kind for m in desk.notifier.shown_tray] == ["offline"]


def test_tray_switched_off(desk: Desk, qtbot: QtBot) -> None:
    desk.settings.setValue(TRAY_KEY, False)
    _activate(qtbot, desk.elsewhere)
    desk.notifier.notify(EventKind.ONLINE, "all feeds fresh")
    assert desk.notices == [("success", "all feeds fresh")]
    assert desk.notifier.shown_tray == []


def test_sound_is_off_by_default_and_follows_its_switch(desk: Desk, qtbot: QtBot) -> None:
    assert not desk.notifier.sound_enabled
    _activate(qtbot, desk.elsewhere)
    desk.notifier.notify(EventKind.FILL, FILL)
    assert desk.notifier.sounds == []
    desk.settings.setValue(SOUND_KEY, True)
    desk.notifier.notify(EventKind.QUOTE_EXPIRING, "BTC/USD quote: 2.0 s left")
    assert desk.notifier.sounds == ["quote_expiring"]
    _activate(qtbot, desk.window)
    desk.notifier.notify(EventKind.FILL, FILL)  # looking at the window: no sound either
    assert desk.notifier.sounds == ["quote_expiring"]


def test_alert_alone_skips_the_notice(desk: Desk, qtbot: QtBot) -> None:
    """For events the session log already shows in the window."""
    _activate(qtbot, desk.elsewhere)
    desk.notifier.alert(EventKind.REFUSAL, "Insufficient Funds")
    assert desk.notices == []
    assert [m.kind for m in desk.notifier.shown_tray] == ["refusal"]


def test_switches_typed_into_the_file_are_read_as_switches(
    desk: Desk, qtbot: QtBot, tmp_path: Path
) -> None:
    """A hand-edited settings file: "false" must switch off (not count as truthy text), and
    text that is no switch at all falls back to the default."""
    ini = tmp_path / "edited.ini"
    ini.write_text("[notify]\nrefusal=false\nsound=true\nfill=maybe\n", encoding="utf-8")
    edited = QSettings(str(ini), QSettings.Format.IniFormat)
    notifier = Notifier(desk.window, lambda *_: None, edited)
    _activate(qtbot, desk.elsewhere)
    notifier.notify(EventKind.REFUSAL, "Insufficient Funds")
    notifier.notify(EventKind.FILL, FILL)
    assert [m.kind for m in notifier.shown_tray] == ["fill"]
    assert notifier.sounds == ["fill"]


def test_menu_switches_write_the_settings_the_notifier_reads(desk: Desk, qtbot: QtBot) -> None:
    menu = QMenu()
    qtbot.addWidget(menu)
    actions = add_notification_menu(menu, desk.settings)
    assert set(actions) == {TRAY_KEY, SOUND_KEY, *(kind_key(k) for k in KINDS)}
    assert actions[TRAY_KEY].isChecked() and not actions[SOUND_KEY].isChecked()
    assert actions[kind_key(EventKind.FILL)].objectName() == "notify_fill"
    actions[kind_key(EventKind.FILL)].trigger()  # off
    _activate(qtbot, desk.elsewhere)
    desk.notifier.notify(EventKind.FILL, FILL)
    assert desk.notifier.shown_tray == []
    actions[kind_key(EventKind.FILL)].trigger()  # on again
    desk.notifier.notify(EventKind.FILL, FILL)
    assert [m.kind for m in desk.notifier.shown_tray] == ["fill"]


def test_unknown_kind_is_a_programming_error(desk: Desk) -> None:
    with pytest.raises(ValueError, match="unknown notification kind 'trade'"):
        desk.notifier.notify("trade", FILL)  # type: ignore[arg-type]
    assert desk.notices == []
