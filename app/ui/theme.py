"""Look and feel: the dark (default) and light themes, switchable while the terminal runs.

A theme is three things applied together by ``apply_theme``: the Fusion style (it paints every
control from the palette, so both themes look the same on every OS), a ``QPalette`` for the
colours Qt draws itself, and a style sheet (``resources/themes/<name>.qss``) for the shapes —
borders, paddings, dock title bars, tabs, headers, scroll bars. The trading colours
(``app.ui.palette``) switch with it and announce the change through ``palette_changed``.

The style sheets are read from ``resources/themes``, found by ``app.resources`` in a checkout,
an editable install, a wheel and the PyInstaller bundle alike. Images in the sheets (combo and
spin box arrows) are ``url(themes:<theme>/<file>.svg)``, resolved through a ``QDir`` search
path set to that folder. The chosen theme is kept in the settings under ``THEME_KEY``.

``apply_theme`` also loads the fonts the terminal ships (``app.ui.fonts``) and makes Inter the
application font, so every start (and every test that applies a theme) draws with them.

The View menu's Theme entries stay ticked on the theme in force however it was chosen — from
the menu or from Settings (``theme_applied`` tells them). Beside them, "Price changes" offers
how a changed price fades (off, subtle, full), kept under ``FLASH_KEY`` and applied at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QDir, QObject, QSettings, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QPalette
from PySide6.QtWidgets import QApplication, QMenu

from app import resources
from app.ui.fonts import apply_ui_font
from app.ui.palette import (
    DARK_PALETTE,
    DEFAULT_FLASH_MODE,
    FLASH_MODES,
    LIGHT_PALETTE,
    TradePalette,
    flash_mode,
    flash_mode_changed,
    set_flash_mode,
    set_palette,
)

log = logging.getLogger(__name__)

THEMES = ("dark", "light")
DEFAULT_THEME = "dark"
#: Settings key of the chosen theme ("dark" or "light").
THEME_KEY = "appearance/theme"
#: Settings key of how changed prices fade: "off", "subtle" or "full".
FLASH_KEY = "appearance/priceFlash"
FLASH_LABELS = {"off": "Off", "subtle": "Subtle", "full": "Full"}
#: Application property holding the name of the theme in force (for custom painting).
THEME_PROPERTY = "tradetermTheme"
STYLE = "Fusion"
#: ``QDir`` search-path prefix the style sheets use for their images: ``url(themes:dark/...)``.
SEARCH_PREFIX = "themes"

Role = QPalette.ColorRole
Group = QPalette.ColorGroup


@dataclass(frozen=True)
class ThemeColours:
    """The colours of one theme's palette; the .qss uses the same values."""

    window: str  # panels, docks, dialogs
    base: str  # tables, inputs: the background the trading colours must read on
    alternate: str  # alternate table rows
    raised: str  # buttons, headers, dock title bars
    border: str
    text: str
    muted: str  # placeholder text
    disabled: str
    accent: str  # focus, default button, links
    selection: str
    selection_text: str
    tooltip: str
    tooltip_text: str


COLOURS: dict[str, ThemeColours] = {
    "dark": ThemeColours(
        window="#1b1f24",
        base="#14171b",
        alternate="#191d22",
        raised="#242a31",
        border="#30363d",
        text="#d7dce2",
        muted="#8b949e",
        disabled="#5c636b",
        accent="#3b8eea",
        selection="#1f3a5c",
        selection_text="#ffffff",
        tooltip="#2b3138",
        tooltip_text="#e6edf3",
    ),
    "light": ThemeColours(
        window="#eef0f3",
        base="#ffffff",
        alternate="#f6f7f9",
        raised="#e3e7ec",
        border="#c4cad3",
        text="#1b1f24",
        muted="#6b7280",
        disabled="#9aa1ab",
        accent="#1f6fd1",
        selection="#cfe2fb",
        selection_text="#0b1f33",
        tooltip="#ffffff",
        tooltip_text="#1b1f24",
    ),
}
_TRADE_PALETTES: dict[str, TradePalette] = {"dark": DARK_PALETTE, "light": LIGHT_PALETTE}


class _ThemeHub(QObject):
    applied = Signal(str)  # the theme's name


_hub = _ThemeHub()
#: Emitted with the theme's name after every ``apply_theme``.
theme_applied = _hub.applied


class UnknownTheme(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown theme {name!r}: choose one of {', '.join(THEMES)}")


def _check(name: str) -> str:
    if name not in THEMES:
        raise UnknownTheme(name)
    return name


def trade_palette(name: str) -> TradePalette:
    """The trading palette made for theme ``name``: up/down/bid/ask/stale, message (error,
    warning, success), bar and chart colours, each checked against that theme's backgrounds."""
    return _TRADE_PALETTES[_check(name)]


def themes_folder() -> Path:
    """``resources/themes``, wherever this install keeps it (``app.resources``)."""
    return resources.themes_folder()


def style_sheet(name: str) -> str:
    """The text of the theme's .qss; empty (with a log line) if the file is missing, so a
    broken install still starts with the palette alone."""
    path = themes_folder() / f"{_check(name)}.qss"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        log.warning("theme %s: cannot read %s (%s); using the palette only", name, path, exc)
        return ""


def qt_palette(name: str) -> QPalette:
    """The QPalette of theme ``name``: every role, and the disabled group greyed."""
    c = COLOURS[_check(name)]
    palette = QPalette()
    roles = {
        Role.Window: c.window,
        Role.WindowText: c.text,
        Role.Base: c.base,
        Role.AlternateBase: c.alternate,
        Role.ToolTipBase: c.tooltip,
        Role.ToolTipText: c.tooltip_text,
        Role.PlaceholderText: c.muted,
        Role.Text: c.text,
        Role.Button: c.raised,
        Role.ButtonText: c.text,
        Role.BrightText: "#ffffff",
        Role.Highlight: c.selection,
        Role.HighlightedText: c.selection_text,
        Role.Link: c.accent,
        Role.LinkVisited: c.accent,
        Role.Accent: c.accent,
        Role.Light: c.raised,
        Role.Midlight: c.border,
        Role.Mid: c.border,
        Role.Dark: c.window,
        Role.Shadow: "#000000",
    }
    for role, spec in roles.items():
        palette.setColor(role, QColor(spec))
    for role in (Role.Text, Role.WindowText, Role.ButtonText, Role.HighlightedText):
        palette.setColor(Group.Disabled, role, QColor(c.disabled))
    palette.setColor(Group.Disabled, Role.Base, QColor(c.window))
    palette.setColor(Group.Disabled, Role.Button, QColor(c.window))
    return palette


def apply_theme(app: QApplication, name: str) -> None:
    """Style, palette, style sheet and trading colours of theme ``name``, at once. Safe to
    call again at run time: every widget is repolished and the trading colours' listeners
    are told (``app.ui.palette.palette_changed``)."""
    _check(name)
    if current_theme(app) is None:
        apply_ui_font(app)  # once: the fonts stay across theme switches
    QDir.setSearchPaths(SEARCH_PREFIX, [str(themes_folder())])
    if app.style().name().lower() != STYLE.lower():
        app.setStyle(STYLE)
    app.setPalette(qt_palette(name))
    app.setStyleSheet(style_sheet(name))
    app.setProperty(THEME_PROPERTY, name)
    set_palette(trade_palette(name))
    theme_applied.emit(name)


def current_theme(app: QApplication) -> str | None:
    """The theme last applied to ``app`` (None before any)."""
    value = app.property(THEME_PROPERTY)
    return value if isinstance(value, str) and value in THEMES else None


def saved_theme(settings: QSettings) -> str:
    """The theme chosen last time; the default for a missing or unknown value."""
    value = settings.value(THEME_KEY, DEFAULT_THEME)
    return value if isinstance(value, str) and value in THEMES else DEFAULT_THEME


def choose_theme(app: QApplication, settings: QSettings, name: str) -> None:
    """Apply ``name`` and remember it."""
    apply_theme(app, name)
    settings.setValue(THEME_KEY, name)
    settings.sync()


class ChoiceGroup(QActionGroup):
    """Exclusive checkable entries named ``<prefix>_<value>``; ``tick`` checks one without
    triggering it (a bound method, so Qt drops the connection when the menu goes)."""

    def __init__(self, parent: QObject, prefix: str) -> None:
        super().__init__(parent)
        self.setExclusive(True)
        self._prefix = prefix

    def tick(self, value: str) -> None:
        for action in self.actions():
            action.setChecked(action.objectName() == f"{self._prefix}_{value}")


def add_theme_menu(menu: QMenu, app: QApplication, settings: QSettings) -> QActionGroup:
    """A "Theme" submenu of ``menu`` with one checkable entry per theme (object names
    ``theme_dark``, ``theme_light``); picking one applies and remembers it, and the tick
    follows a theme applied elsewhere (Settings). Then the "Price changes" submenu
    (``add_flash_menu``), which also applies the saved fade mode."""
    submenu = menu.addMenu("&Theme")
    submenu.setObjectName("themeMenu")
    group = ChoiceGroup(submenu, "theme")
    active = current_theme(app) or saved_theme(settings)
    for name in THEMES:
        action = QAction(name.capitalize(), submenu)
        action.setObjectName(f"theme_{name}")
        action.setCheckable(True)
        action.setChecked(name == active)
        action.triggered.connect(lambda _=False, n=name: choose_theme(app, settings, n))
        group.addAction(action)
        submenu.addAction(action)
    theme_applied.connect(group.tick)
    add_flash_menu(menu, settings)
    return group


def saved_flash_mode(settings: QSettings) -> str:
    """The fade mode chosen last time; the default for a missing or unknown value."""
    value = settings.value(FLASH_KEY, DEFAULT_FLASH_MODE)
    return value if isinstance(value, str) and value in FLASH_MODES else DEFAULT_FLASH_MODE


def choose_flash_mode(settings: QSettings, mode: str) -> None:
    """Apply fade ``mode`` to every price table now and remember it."""
    set_flash_mode(mode)
    settings.setValue(FLASH_KEY, mode)
    settings.sync()


def add_flash_menu(menu: QMenu, settings: QSettings) -> QActionGroup:
    """A "Price changes" submenu: how a changed price fades behind its ▲/▼ (object names
    ``flash_off``, ``flash_subtle``, ``flash_full``). Applies the saved mode first."""
    set_flash_mode(saved_flash_mode(settings))
    submenu = menu.addMenu("&Price changes")
    submenu.setObjectName("flashMenu")
    submenu.setToolTip("How a price that changed fades in behind its ▲/▼ sign")
    group = ChoiceGroup(submenu, "flash")
    for mode in FLASH_MODES:
        action = QAction(f"{FLASH_LABELS[mode]} fade", submenu)
        action.setObjectName(f"flash_{mode}")
        action.setCheckable(True)
        action.setChecked(mode == flash_mode())
        action.triggered.connect(lambda _=False, m=mode: choose_flash_mode(settings, m))
        group.addAction(action)
        submenu.addAction(action)
    flash_mode_changed.connect(group.tick)  # a mode chosen elsewhere (Settings) ticks here too
    return group
