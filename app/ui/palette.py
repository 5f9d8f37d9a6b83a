"""Trading colours shared by the tables and charts, one set per theme, switchable at run time.

Each colour has one meaning. The bid (buyers') side is blue and the ask (sellers') side orange:
the one pair of hues that stays apart for red-green colour blindness (deuteranopia,
protanopia). They mark *identity* — the Bid and Ask column headers of the watchlist, the
ladder's sides, the chart's lines, Buy and Sell — never a move. Rises are green-teal and falls
magenta (also apart for every kind of colour blindness): they appear only as the brief fade
behind a price that just changed, next to its ▲/▼ sign, so direction never rests on colour
alone and never borrows a side's hue. The numbers themselves are in the theme's neutral text
colour. Each theme has its own shades, picked to read on that theme's table background
(``tests/ui/test_theme.py`` checks the contrast and the colour-blind distance).

How strong the fade is, is the trader's choice (``FLASH_MODES``: off, subtle, full), module
state like the palette: ``flash_mode()`` reads it, ``set_flash_mode()`` changes it and emits
``flash_mode_changed``; ``app.ui.theme`` keeps it in the settings and offers it on the View
menu.

Besides the trading colours, the palette holds what the widgets paint themselves: message
text for errors, warnings and successes (each readable on that theme's backgrounds, the error
and success hues apart for colour-blind readers too), the utilisation and countdown bars with
the text drawn over them, and the chart's neutral and spread lines. Widgets take their colours
from here rather than naming their own, so one theme switch recolours them all.

The palette in force is module state: ``current_palette()`` reads it, ``set_palette()`` (called
by ``app.ui.theme.apply_theme``) changes it and emits ``palette_changed`` with the new
``TradePalette``, so models and charts can repaint in the new colours without a restart.
Listen with ``follow_palette(self.method)``: it accepts only a bound method of a QObject, held
weakly and dropped when that object is destroyed. A lambda (or a plain function) capturing a
widget would outlive it and fail on the next switch with "Internal C++ object already deleted".
The followers are called by ``set_palette`` itself, not through the signal, so that a theme
switch can call each one with the part of the window it recolours (``app.ui.theme``: a part
and its trading colours change in the same event-loop turn, and the whole switch never runs in
one) — ``set_palette(..., tell=False)`` and ``palette_followers()``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import shiboken6
from PySide6.QtCore import SIGNAL, QObject, Signal
from PySide6.QtGui import QColor

#: Opacity (0–255) of the short-lived flash behind a price that moved, at its start ("full").
FLASH_ALPHA = 80
#: How strongly a changed price fades in: not at all, at half strength, or fully.
FLASH_MODES = ("off", "subtle", "full")
DEFAULT_FLASH_MODE = "subtle"


def _colour(spec: str, alpha: int = 255) -> QColor:
    colour = QColor(spec)
    colour.setAlpha(alpha)
    return colour


@dataclass(frozen=True)
class TradePalette:
    """Defaults are the dark theme's (the default theme)."""

    #: A rise / a fall (never a side): ▲/▼ marks and the fade behind a changed price.
    up: QColor = field(default_factory=lambda: _colour("#57db99"))
    down: QColor = field(default_factory=lambda: _colour("#ca47eb"))
    #: Short-lived cell background after a rise / fall (translucent: tints the base colour).
    up_flash: QColor = field(default_factory=lambda: _colour("#57db99", FLASH_ALPHA))
    down_flash: QColor = field(default_factory=lambda: _colour("#ca47eb", FLASH_ALPHA))
    #: Bid (buyers) and ask (sellers) identity: column headers, ladder sides, chart lines.
    bid: QColor = field(default_factory=lambda: _colour("#4ea1ff"))
    ask: QColor = field(default_factory=lambda: _colour("#ff9d3d"))
    #: Data older than its feed promises.
    stale: QColor = field(default_factory=lambda: _colour("#8b949e"))
    #: The theme's table / plot background and ordinary text, for custom painting (charts,
    #: delegates) that cannot rely on the widget palette.
    background: QColor = field(default_factory=lambda: _colour("#14171b"))
    text: QColor = field(default_factory=lambda: _colour("#d7dce2"))
    #: The empty part of a bar (countdown, utilisation).
    track: QColor = field(default_factory=lambda: _colour("#2a3037"))
    #: Message text (labels, the log, the status bar): readable on the table background and
    #: on the window, status bar and panel backgrounds around it.
    error: QColor = field(default_factory=lambda: _colour("#f47067"))
    warning: QColor = field(default_factory=lambda: _colour("#e3b341"))
    success: QColor = field(default_factory=lambda: _colour("#5eead4"))
    #: The filled part of a bar: in order, under a warning threshold (the countdown's last
    #: seconds, credit utilisation ≥ 75 %), over the high one (utilisation ≥ 90 %).
    bar: QColor = field(default_factory=lambda: _colour("#2766b0"))
    bar_warn: QColor = field(default_factory=lambda: _colour("#8a5f00"))
    bar_high: QColor = field(default_factory=lambda: _colour("#b3362f"))
    #: Text drawn over a bar, readable on the track and on every fill.
    bar_text: QColor = field(default_factory=lambda: _colour("#e6edf3"))
    #: Chart lines that are neither side: the mid and the crosshair; the spread.
    mid: QColor = field(default_factory=lambda: _colour("#9aa0a6"))
    spread: QColor = field(default_factory=lambda: _colour("#b392f0"))


DARK_PALETTE = TradePalette()
LIGHT_PALETTE = TradePalette(
    up=_colour("#146b3c"),
    down=_colour("#9714b8"),
    up_flash=_colour("#146b3c", FLASH_ALPHA // 2),
    down_flash=_colour("#9714b8", FLASH_ALPHA // 2),
    bid=_colour("#0b62c4"),
    ask=_colour("#b54f00"),
    stale=_colour("#6b7280"),
    background=_colour("#ffffff"),
    text=_colour("#1b1f24"),
    track=_colour("#dde2e8"),
    error=_colour("#b42318"),
    warning=_colour("#8a5a00"),
    success=_colour("#006d77"),
    bar=_colour("#5b9be6"),
    bar_warn=_colour("#e0a526"),
    bar_high=_colour("#e5736b"),
    bar_text=_colour("#1b1f24"),
    mid=_colour("#5f6670"),
    spread=_colour("#8250df"),
)
#: The palette of the default (dark) theme; what models use when built before any theme.
DEFAULT_PALETTE = DARK_PALETTE


class _PaletteHub(QObject):
    changed = Signal(object)  # TradePalette
    flash_changed = Signal(str)  # one of FLASH_MODES


Follower = Callable[[TradePalette], object]

_hub = _PaletteHub()
_current: TradePalette = DEFAULT_PALETTE
_flash_mode = DEFAULT_FLASH_MODE
#: ``follow_palette``'s methods, weakly, in the order they came.
_followers: list[weakref.WeakMethod[Follower]] = []

#: Emitted with the new ``TradePalette`` whenever ``set_palette`` changes it.
palette_changed = _hub.changed
#: Emitted with the new mode whenever ``set_flash_mode`` changes it.
flash_mode_changed = _hub.flash_changed


def current_palette() -> TradePalette:
    return _current


def set_palette(palette: TradePalette, *, tell: bool = True) -> bool:
    """Make ``palette`` the one in force; only when it differs: emits ``palette_changed`` and
    calls every follower (``tell=False``: the caller calls ``palette_followers()`` itself).
    Whether it changed."""
    global _current
    if palette == _current:
        return False
    _current = palette
    palette_changed.emit(palette)
    if tell:
        for method in palette_followers():
            method(palette)
    return True


def flash_mode() -> str:
    """How changed prices fade in: "off", "subtle" or "full"."""
    return _flash_mode


def set_flash_mode(mode: str) -> None:
    """Make ``mode`` the one in force (ValueError for an unknown one); emits
    ``flash_mode_changed`` only when it differs."""
    global _flash_mode
    if mode not in FLASH_MODES:
        raise ValueError(f"unknown flash mode {mode!r}: choose one of {', '.join(FLASH_MODES)}")
    if mode == _flash_mode:
        return
    _flash_mode = mode
    flash_mode_changed.emit(mode)


def flash_colour(colour: QColor, mode: str, fade: float = 1.0) -> QColor | None:
    """The fade's colour for ``mode`` (None when off): the palette's flash at full strength,
    half of it when subtle, times ``fade`` (1 at the change, falling towards 0)."""
    if mode == "off" or fade <= 0:
        return None
    strength = (1.0 if mode == "full" else 0.5) * min(1.0, fade)
    tinted = QColor(colour)
    tinted.setAlpha(max(1, round(colour.alpha() * strength)))
    return tinted


def follow_palette(method: Follower) -> None:
    """Call ``method`` with the new palette on every switch, for as long as its object lives.

    ``method`` must be a bound method of a QObject: it is held weakly and dropped once that
    object is destroyed. Anything else (a lambda, a function, a method of a plain Python
    object) is refused, because it would be called after its widget is gone."""
    owner = getattr(method, "__self__", None)
    if not isinstance(owner, QObject) or not hasattr(method, "__func__"):
        raise TypeError(f"follow_palette needs a bound method of a QObject, not {method!r}")
    _followers.append(weakref.WeakMethod(method))


def palette_followers() -> list[Follower]:
    """The followers' methods whose objects still live, in the order they came (the others
    are forgotten here)."""
    live: list[Follower] = []
    kept: list[weakref.WeakMethod[Follower]] = []
    for reference in _followers:
        method = reference()
        if method is not None and shiboken6.isValid(getattr(method, "__self__", None)):
            live.append(method)
            kept.append(reference)
    _followers[:] = kept
    return live


def palette_listeners() -> int:
    """How many followers and connections to ``palette_changed`` there are (tests: destroyed
    widgets leave none)."""
    return len(palette_followers()) + _hub.receivers(SIGNAL("changed(PyObject)"))


#: Message levels that have a colour of their own; anything else ("info") is ordinary text.
LEVELS = ("error", "warning", "success")


def named_colour(palette: TradePalette, name: str | None) -> QColor | None:
    """The colour ``palette`` has under ``name`` (None: ordinary text), for the tables that
    map a status or kind to a colour's name."""
    if name is None:
        return None
    colour: QColor = getattr(palette, name)
    return colour


def level_colour(level: str, palette: TradePalette | None = None) -> QColor | None:
    """The text colour of a message of ``level`` ("error", "warning", "success"); None for
    ordinary text ("info", "")."""
    if level not in LEVELS:
        return None
    colour: QColor = getattr(_current if palette is None else palette, level)
    return colour


def level_css(level: str, palette: TradePalette | None = None) -> str:
    """``color: #rrggbb;`` for a label's style sheet, or "" for ordinary text."""
    colour = level_colour(level, palette)
    return "" if colour is None else f"color: {colour.name()};"


def stale_css(stale: bool, palette: TradePalette | None = None) -> str:
    """A label's style sheet: in the stale grey while what it shows is stale, else "" (the
    theme's text colour)."""
    if not stale:
        return ""
    return f"QLabel {{ color:{(_current if palette is None else palette).stale.name()}; }}"
