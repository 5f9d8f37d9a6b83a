"""Telling the trader about fills, refusals, expiring quotes and the connection, in and out of
the window.

``Notifier.notify(kind, message)`` always shows the in-app notice (through the callable it was
given), then raises a desktop alert — a system tray message and, if asked for, a sound — when
the trader is not looking at the terminal: the main window (or a dialog of it) is not the active
window. ``alert`` is the desktop part alone, for events whose in-app notice is already shown by
another path (the session log). Nothing here activates, raises or focuses a window: an alert
never takes the keyboard from what the trader is typing elsewhere. Clicking a tray message
brings the terminal up (the trader asked for it).

Switches, read from the settings at every event so a change applies at once:

========================  =======  ============================================================
key                       default  meaning
========================  =======  ============================================================
``notify/tray``           true     tray messages while the window is inactive
``notify/sound``          false    a beep with each desktop alert (``QApplication.beep``: the
                                   PySide6-Essentials wheel has no QtMultimedia)
``notify/fill``           true     desktop alerts for fills
``notify/refusal``        true     ... for orders and quote accepts the service refused
``notify/quote_expiring`` true     ... for an RFQ quote about to expire
``notify/offline``        true     ... when the connection is lost
``notify/online``         true     ... when it comes back
``notify/price_alert``    true     ... when a price alert fires (View > Notifications only)
========================  =======  ============================================================

A kind switched off still shows its in-app notice (nothing a trader must know is hidden from
the window); it only stops interrupting outside it. Without a system tray (offscreen, some
Linux desktops) tray messages are skipped silently; ``shown_tray`` records every tray message
shown or, without a tray, that would have been shown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QApplication, QMenu, QStyle, QSystemTrayIcon, QWidget

from app.services.log_events import NOTIFY_KINDS, EventKind, LogLevel

log = logging.getLogger(__name__)

Kind = EventKind
#: Every kind with a switch in View > Notifications: Settings' kinds and price alerts.
KINDS: tuple[Kind, ...] = (*NOTIFY_KINDS, Kind.PRICE_ALERT)
Notice = Callable[[LogLevel, str], None]  # (level, message): the in-app notice

TRAY_KEY = "notify/tray"
SOUND_KEY = "notify/sound"
#: Per-kind switch: ``notify/<kind>``.
KIND_KEY_PREFIX = "notify/"

#: Level of the in-app notice (app.ui.notices styles) per kind.
LEVELS: dict[Kind, LogLevel] = {
    Kind.FILL: LogLevel.SUCCESS,
    Kind.REFUSAL: LogLevel.ERROR,
    Kind.QUOTE_EXPIRING: LogLevel.WARNING,
    Kind.OFFLINE: LogLevel.ERROR,
    Kind.ONLINE: LogLevel.SUCCESS,
    Kind.PRICE_ALERT: LogLevel.WARNING,
}
TITLES: dict[Kind, str] = {
    Kind.FILL: "Order filled",
    Kind.REFUSAL: "Refused by the service",
    Kind.QUOTE_EXPIRING: "Quote expiring",
    Kind.OFFLINE: "Connection lost",
    Kind.ONLINE: "Connection restored",
    Kind.PRICE_ALERT: "Price alert",
}
MENU_TEXT: dict[Kind, str] = {
    Kind.FILL: "&Fills",
    Kind.REFUSAL: "&Refusals",
    Kind.QUOTE_EXPIRING: "&Expiring quotes",
    Kind.OFFLINE: "Connection &lost",
    Kind.ONLINE: "Connection &restored",
    Kind.PRICE_ALERT: "&Price alerts",
}
_TRAY_ICONS: dict[Kind, QSystemTrayIcon.MessageIcon] = {
    Kind.FILL: QSystemTrayIcon.MessageIcon.Information,
    Kind.REFUSAL: QSystemTrayIcon.MessageIcon.Critical,
    Kind.QUOTE_EXPIRING: QSystemTrayIcon.MessageIcon.Warning,
    Kind.OFFLINE: QSystemTrayIcon.MessageIcon.Warning,
    Kind.ONLINE: QSystemTrayIcon.MessageIcon.Information,
    Kind.PRICE_ALERT: QSystemTrayIcon.MessageIcon.Information,
}
#: How long a tray message stays up (ms); the desktop may cap it.
TRAY_MS = 6000


def _known(kind: Kind) -> Kind:
    if kind not in LEVELS:
        raise ValueError(f"unknown notification kind {kind!r}: one of {', '.join(KINDS)}")
    return kind


def kind_key(kind: Kind) -> str:
    return f"{KIND_KEY_PREFIX}{kind}"


def _flag(settings: QSettings, key: str, default: bool) -> bool:
    """A boolean setting; INI files give "true"/"false" strings back, unknown text -> default."""
    value = settings.value(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    return default


@dataclass(frozen=True)
class TrayMessage:
    kind: Kind
    title: str
    message: str
    delivered: bool  # False: no system tray, it was only recorded


class Notifier(QObject):
    """Notices in the window, desktop alerts out of it; see the module docstring."""

    def __init__(
        self,
        window: QWidget,
        notice: Notice,
        settings: QSettings,
        icon: QIcon | None = None,
    ) -> None:
        super().__init__(window)
        self.setObjectName("notifier")
        self._window = window
        self._notice = notice
        self._settings = settings
        self._icon = icon
        self._tray: QSystemTrayIcon | None = None
        #: Every tray message shown, or (no tray) that would have been shown, oldest first.
        self.shown_tray: list[TrayMessage] = []
        #: Kinds a sound was played for, oldest first.
        self.sounds: list[Kind] = []

    # -- switches -------------------------------------------------------------------------------

    def enabled(self, kind: Kind) -> bool:
        return _flag(self._settings, kind_key(kind), True)

    @property
    def tray_enabled(self) -> bool:
        return _flag(self._settings, TRAY_KEY, True)

    @property
    def sound_enabled(self) -> bool:
        return _flag(self._settings, SOUND_KEY, False)

    def window_active(self) -> bool:
        """True when the active window is the main window or one of its dialogs."""
        widget = QApplication.activeWindow()
        while widget is not None:
            if widget is self._window:
                return True
            widget = widget.parentWidget()
        return False

    # -- events ---------------------------------------------------------------------------------

    def notify(self, kind: Kind, message: str) -> None:
        """The in-app notice, always; then the desktop alert if it is due."""
        self._notice(LEVELS[_known(kind)], message)
        self.alert(kind, message)

    def alert(self, kind: Kind, message: str) -> None:
        """Only the desktop part: a tray message and a sound, when the window is inactive and
        the switches allow. Never activates or raises a window."""
        if not self.enabled(_known(kind)) or self.window_active():
            return
        if self.tray_enabled:
            self._show_tray(kind, message)
        if self.sound_enabled:
            self.sounds.append(kind)
            QApplication.beep()

    def _show_tray(self, kind: Kind, message: str) -> None:
        title = TITLES[kind]
        tray = self._tray_icon()
        if tray is not None:
            tray.showMessage(title, message, _TRAY_ICONS[kind], TRAY_MS)
        else:
            log.debug("no system tray: %s alert recorded only", kind)
        self.shown_tray.append(TrayMessage(kind, title, message, delivered=tray is not None))

    def _tray_icon(self) -> QSystemTrayIcon | None:
        """The tray icon, made and shown on first use; None without a system tray."""
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return None
        if self._tray is None:
            tray = QSystemTrayIcon(self._tray_picture(), self)
            tray.setObjectName("notifierTray")
            tray.setToolTip(self._window.windowTitle() or "Tradeterm")
            tray.messageClicked.connect(self._bring_up)
            tray.activated.connect(lambda _reason: self._bring_up())
            tray.show()
            self._tray = tray
        return self._tray

    def _tray_picture(self) -> QIcon:
        for icon in (self._icon, self._window.windowIcon(), QApplication.windowIcon()):
            if icon is not None and not icon.isNull():
                return icon
        style = self._window.style()
        return style.standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)

    def _bring_up(self) -> None:
        """The trader clicked the tray message or icon: show the terminal."""
        window = self._window
        if window.isMinimized():
            window.showNormal()
        window.show()
        window.raise_()
        window.activateWindow()

    def close(self) -> None:
        """Remove the tray icon (call when the window closes)."""
        if self._tray is not None:
            self._tray.hide()
            self._tray.deleteLater()
            self._tray = None


def add_notification_menu(menu: QMenu, settings: QSettings) -> dict[str, QAction]:
    """A "Notifications" submenu of ``menu``: desktop alerts on/off, sound on/off and one
    switch per kind, each a checkable action stored under its settings key (the returned
    dict maps keys to actions; object names ``notify_<name>``)."""
    submenu = menu.addMenu("&Notifications")
    submenu.setObjectName("notificationsMenu")
    actions: dict[str, QAction] = {}

    def add(key: str, text: str, default: bool) -> None:
        action = QAction(text, submenu)
        action.setObjectName("notify_" + key.removeprefix(KIND_KEY_PREFIX))
        action.setCheckable(True)
        action.setChecked(_flag(settings, key, default))
        action.toggled.connect(lambda on, k=key: _store(settings, k, on))
        submenu.addAction(action)
        actions[key] = action

    add(TRAY_KEY, "&Desktop alerts when the window is inactive", True)
    add(SOUND_KEY, "&Sound with desktop alerts", False)
    submenu.addSeparator()
    for kind in KINDS:
        add(kind_key(kind), MENU_TEXT[kind], True)
    return actions


def _store(settings: QSettings, key: str, on: bool) -> None:
    settings.setValue(key, on)
    settings.sync()
