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

Switching while the terminal runs, without stalling it. Setting the application's style sheet
re-polishes every widget there is, in one go on the GUI thread: with the main window's 1,100
widgets that took 0.5–1.5 s here (plus 0.2–0.4 s re-creating the Fusion style every time), the
polls' answers waited behind it, and the health monitor rightly called the feeds late ("connection
degraded", stale marks). Qt caches each widget's resolved rules, so nothing short of a re-polish
recolours a style sheet; what can be chosen is how much is re-polished at once. So the
application keeps the sheet it started with (the *base* theme) and, while a main window is
shown, a switch puts the new theme's sheet on each part of it — every direct child of each main
window (a dock, the menu bar, the status bar, a tool bar, a dock tab bar) and every other
window — a part or a few per event-loop turn, at most ``RESTYLE_BUDGET`` of work per turn, the
parts on screen first (``_Restyler``). A part's own sheet wins over the application's, and the
two sheets have the same rules, so a part wears the new theme whole; switching back to the base
theme takes the parts' sheets off again. The main window's own rules (its background and dock
separators) name palette roles instead of colours, so it follows the palette, set at once with
the trading colours. A child a main window gets later (a dialog, a new dock tab bar) is dressed
in the theme in force before it first shows. Without a shown main window (the login dialog, the
tests of single widgets) the application's sheet is simply set, as before. The sheets are read
once; the Fusion style is set once, not again on every switch.

The View menu's Theme entries stay ticked on the theme in force however it was chosen — from
the menu or from Settings (``theme_applied`` tells them). Beside them, "Price changes" offers
how a changed price fades (off, subtle, full), kept under ``FLASH_KEY`` and applied at once.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import shiboken6
from PySide6.QtCore import QChildEvent, QDir, QEvent, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QPalette
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu, QWidget

from app import resources
from app.ui.fonts import apply_ui_font
from app.ui.frame_clock import FRAME_MS
from app.ui.palette import (
    DARK_PALETTE,
    DEFAULT_FLASH_MODE,
    FLASH_MODES,
    LIGHT_PALETTE,
    Follower,
    TradePalette,
    flash_mode,
    flash_mode_changed,
    palette_followers,
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
#: Application property: the address of the style ``apply_theme`` left in force (Fusion under
#: the style sheet, which reports no name of its own), so Fusion is not made again.
STYLE_PROPERTY = "tradetermStyle"
#: Property of a window part that wears a theme's sheet of its own: that theme's name.
PART_PROPERTY = "tradetermThemePart"
#: Work (s) one event-loop turn spends re-polishing parts before the loop paints, takes input
#: and reads the polls' answers; a part's cost is what it took last time (at least one part a
#: turn, whatever its size).
RESTYLE_BUDGET = 0.012
#: Between two turns of restyling (ms): a frame, so that the relayout and repaint a part's
#: restyle causes run in a turn of their own, not in the next part's.
RESTYLE_GAP_MS = FRAME_MS

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


_sheets: dict[Path, str] = {}


def style_sheet(name: str) -> str:
    """The text of the theme's .qss (read once); empty (with a log line) if the file is
    missing, so a broken install still starts with the palette alone."""
    path = themes_folder() / f"{_check(name)}.qss"
    text = _sheets.get(path)
    if text is not None:
        return text
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        log.warning("theme %s: cannot read %s (%s); using the palette only", name, path, exc)
        return ""
    _sheets[path] = text
    return text


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


def _address(style: QObject) -> int:
    return int(shiboken6.getCppPointer(style)[0])


def _use_fusion(app: QApplication) -> None:
    """Fusion, made only when it is not in force already: under a style sheet the style
    reports no name, and making it again cost 0.2–0.4 s a switch."""
    style = app.style()
    if style.name().lower() == STYLE.lower() or app.property(STYLE_PROPERTY) == _address(style):
        return
    app.setStyle(STYLE)


def sheet_theme(app: QApplication) -> str | None:
    """The theme whose sheet the application has (None: none of ours)."""
    sheet = app.styleSheet()
    return next((name for name in THEMES if sheet and sheet == style_sheet(name)), None)


def _main_windows(app: QApplication) -> list[QMainWindow]:
    return [w for w in app.topLevelWidgets() if isinstance(w, QMainWindow)]


def _set_palette_unpainted(
    app: QApplication, palette: QPalette, windows: list[QMainWindow]
) -> None:
    """The application's palette, and the windows' own rules in it, without repainting
    ``windows`` for it: every widget takes it, and would repaint all at once (20–70 ms for the
    main window here), in the colours of a sheet that is about to change anyway. Each part
    repaints when it is restyled. Updates
    are held during the change and let go without the update that ``setUpdatesEnabled(True)``
    makes of everything (widgets whose updates were held before stay held)."""
    held = [window for window in windows if window.updatesEnabled()]
    trees: list[list[QWidget]] = [
        [window, *(w for w in window.findChildren(QWidget) if not w.isWindow())] for window in held
    ]
    before = {_address(w) for tree in trees for w in tree if not w.updatesEnabled()}
    for window in held:
        window.setUpdatesEnabled(False)
    app.setPalette(palette)
    for window in windows:
        _Restyler.refresh(window)
    for window, tree in zip(held, trees, strict=True):
        for widget in tree:
            if _address(widget) not in before:
                widget.setAttribute(Qt.WidgetAttribute.WA_UpdatesDisabled, False)
        window.setAttribute(Qt.WidgetAttribute.WA_ForceUpdatesDisabled, False)


class _Part:
    """A part of a window to restyle in one go, with the trading-colour followers inside it
    (their objects are the part or its descendants): they recolour in the same turn."""

    __slots__ = ("followers", "widget")

    def __init__(self, widget: QWidget) -> None:
        self.widget = widget
        self.followers: list[Follower] = []


class _Restyler(QObject):
    """Puts a theme's sheet on the parts of the windows, a budget's worth per event-loop turn
    (see the module), and dresses a main window's new children in it before they show."""

    finished = Signal(str)  # the theme's name, once every part wears it

    def __init__(self) -> None:
        super().__init__()
        self._parts: deque[_Part] = deque()
        self._theme: str | None = None
        #: What each part gets: the theme's sheet, or "" when it is the application's own.
        self._sheet = ""
        self._palette: TradePalette | None = None
        #: Seconds each kind of part took last time (by class and object name).
        self._costs: dict[str, float] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RESTYLE_GAP_MS)
        self._timer.timeout.connect(self._turn)

    @property
    def busy(self) -> bool:
        return bool(self._parts)

    def switch(self, app: QApplication, name: str, base: str, palette: TradePalette) -> None:
        """Queue every part of every window for theme ``name`` (the application's sheet being
        ``base``'s), the ones on screen first, each with its trading-colour followers; the
        followers outside every part, and those of dialogs, are told now. The parts follow
        from the next turn on."""
        self._theme = name
        self._sheet = "" if name == base else style_sheet(name)
        self._palette = palette
        shown: list[_Part] = []
        hidden: list[_Part] = []
        for window in app.topLevelWidgets():
            if isinstance(window, QMainWindow):
                self._watch(window)
                widgets = [c for c in window.children() if isinstance(c, QWidget)]
            elif window.parentWidget() is not None:
                continue  # a popup or dialog of another widget: it wears its parent's sheet
            elif not window.isVisible():
                self._dress_when_shown(window)
                continue
            else:
                widgets = [window]
            for widget in widgets:
                on_screen = widget.isVisible() and not widget.visibleRegion().isEmpty()
                (shown if on_screen else hidden).append(_Part(widget))
        parts = [*shown, *hidden]
        by_address = {_address(part.widget): part for part in parts}
        loose: list[Follower] = []
        for method in palette_followers():
            part = _part_of(getattr(method, "__self__", None), by_address)
            # a dialog's colours change at once: its text may be read (or refused) next
            in_place = part is not None and not part.widget.isWindow()
            (part.followers if part is not None and in_place else loose).append(method)
        self._parts = deque(parts)
        for method in loose:
            method(palette)
        self._timer.start()

    def undress(self, app: QApplication) -> None:
        """Take the parts' own sheets off (the application's sheet is about to be the theme):
        the queue is dropped, its followers told now."""
        self._timer.stop()
        palette, self._palette = self._palette, None
        for part in self._parts:
            for method in part.followers:
                if palette is not None and shiboken6.isValid(getattr(method, "__self__", None)):
                    method(palette)
        self._parts.clear()
        self._theme, self._sheet = None, ""
        for window in app.topLevelWidgets():
            window.removeEventFilter(self)
            if isinstance(window, QMainWindow):
                for child in window.children():
                    if isinstance(child, QWidget):
                        self._dress(child)
            elif window.parentWidget() is None:
                self._dress(window)

    @staticmethod
    def refresh(window: QMainWindow) -> None:
        """The window's own rules again (they name palette roles: the new palette's now)."""
        style = window.style()
        style.unpolish(window)
        style.polish(window)

    def _watch(self, window: QMainWindow) -> None:
        """Dress the window's new children while a sheet of the parts' own is in force."""
        window.removeEventFilter(self)
        if self._sheet:
            window.installEventFilter(self)

    def _dress_when_shown(self, window: QWidget) -> None:
        """A hidden window of its own (a context menu of a plot): restyled when it next shows,
        if it does (until then it costs nothing)."""
        window.removeEventFilter(self)
        if (window.property(PART_PROPERTY) or None) != (self._theme if self._sheet else None):
            window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ChildPolished and isinstance(event, QChildEvent):
            child = event.child()
            if isinstance(child, QWidget) and child.parent() is watched:
                self._dress(child)
        elif (
            kind == QEvent.Type.Show
            and isinstance(watched, QWidget)
            and not isinstance(watched, QMainWindow)
        ):
            watched.removeEventFilter(self)
            self._dress(watched)
        return False

    def _dress(self, part: QWidget) -> None:
        """``part`` in the sheet in force, unless it has a sheet of its own (not ours)."""
        if not shiboken6.isValid(part):
            return
        ours = part.property(PART_PROPERTY)
        if part.styleSheet() and ours is None:
            return
        if part.styleSheet() != self._sheet:
            part.setStyleSheet(self._sheet)
        wears = self._theme if self._sheet else None
        if ours != wears:
            part.setProperty(PART_PROPERTY, wears)

    def _turn(self) -> None:
        """Restyle parts (with their followers) until the next would pass the budget."""
        started = time.perf_counter()
        spent = 0.0
        while self._parts:
            part = self._parts[0]
            widget = part.widget
            key = (
                f"{type(widget).__name__}/{widget.objectName()}"
                if shiboken6.isValid(widget)
                else ""
            )
            if spent > 0 and spent + self._costs.get(key, RESTYLE_BUDGET) > RESTYLE_BUDGET:
                break
            self._parts.popleft()
            begun = time.perf_counter()
            self._dress(widget)
            for method in part.followers:
                if self._palette is not None and shiboken6.isValid(
                    getattr(method, "__self__", None)
                ):
                    method(self._palette)
            now = time.perf_counter()
            self._costs[key] = now - begun
            spent = now - started
        if self._parts:
            self._timer.start()
        elif self._theme is not None:
            self.finished.emit(self._theme)


def _part_of(owner: object, parts: dict[int, _Part]) -> _Part | None:
    """The part ``owner`` (a QObject) is in: itself or its nearest ancestor that is one."""
    node = owner if isinstance(owner, QObject) and shiboken6.isValid(owner) else None
    while node is not None:
        part = parts.get(_address(node))
        if part is not None:
            return part
        node = node.parent()
    return None


_restyler = _Restyler()
#: Emitted with the theme's name when a switch has restyled every part of every window.
theme_restyled = _restyler.finished


def restyling() -> bool:
    """Whether a switch is still putting its sheet on parts of the windows."""
    return _restyler.busy


def apply_theme(app: QApplication, name: str) -> None:
    """Style, palette, style sheet and trading colours of theme ``name``. Safe to call again
    at run time. With a main window shown, the palette changes now and the windows' parts,
    with the trading colours they paint, over the next event-loop turns, the ones on screen
    first (see the module): ``restyling()`` says whether that is still going on,
    ``theme_restyled`` when it is done. Otherwise everything changes now. Either way
    ``current_palette()`` is the theme's when this returns, and ``palette_changed`` and
    ``theme_applied`` have been emitted."""
    _check(name)
    if current_theme(app) is None:
        apply_ui_font(app)  # once: the fonts stay across theme switches
    QDir.setSearchPaths(SEARCH_PREFIX, [str(themes_folder())])
    _use_fusion(app)
    base = sheet_theme(app)
    trading = trade_palette(name)
    windows = _main_windows(app)
    if base is not None and any(w.isVisible() for w in windows):
        _set_palette_unpainted(app, qt_palette(name), windows)
        if set_palette(trading, tell=False):
            _restyler.switch(app, name, base, trading)
    else:
        app.setPalette(qt_palette(name))
        _restyler.undress(app)
        app.setStyleSheet(style_sheet(name))
        set_palette(trading)
    app.setProperty(STYLE_PROPERTY, _address(app.style()))
    app.setProperty(THEME_PROPERTY, name)
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
    """Apply ``name`` and remember it (written to disk on the next turn: writing the settings
    file took 10–15 ms, on top of the switch's own first turn)."""
    apply_theme(app, name)
    settings.setValue(THEME_KEY, name)
    QTimer.singleShot(0, settings, settings.sync)


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
