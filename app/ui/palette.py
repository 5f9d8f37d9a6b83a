"""Trading colours shared by the tables and charts, one set per theme, switchable at run time.

Rises and the bid (buyers') side are blue, falls and the ask (sellers') side are orange: the one
pair of hues that stays apart for red-green colour blindness (deuteranopia, protanopia), which a
green/red scheme does not. Each theme has its own shades, picked to read on that theme's table
background (``tests/ui/test_theme.py`` checks the contrast and the colour-blind distance).
Direction is never told by colour alone: the tables pair these with ▲/▼ signs.

Besides the trading colours, the palette holds what the widgets paint themselves: message
text for errors, warnings and successes (each readable on that theme's backgrounds, the error
and success hues apart for colour-blind readers too), the utilisation and countdown bars with
the text drawn over them, and the chart's neutral and spread lines. Widgets take their colours
from here rather than naming their own, so one theme switch recolours them all.

The palette in force is module state: ``current_palette()`` reads it, ``set_palette()`` (called
by ``app.ui.theme.apply_theme``) changes it and emits ``palette_changed`` with the new
``TradePalette``, so models and charts can repaint in the new colours without a restart.
Listen with ``follow_palette(self.method)``: it accepts only a bound method of a QObject, which
Qt disconnects when that object is destroyed. A lambda (or a plain function) capturing a widget
would outlive it and fail on the next switch with "Internal C++ object already deleted".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import SIGNAL, QObject, Signal
from PySide6.QtGui import QColor

#: Opacity (0–255) of the short-lived flash behind a price that moved.
FLASH_ALPHA = 80


def _colour(spec: str, alpha: int = 255) -> QColor:
    colour = QColor(spec)
    colour.setAlpha(alpha)
    return colour


@dataclass(frozen=True)
class TradePalette:
    """Defaults are the dark theme's (the default theme)."""

    #: Text of a rising / falling value.
    up: QColor = field(default_factory=lambda: _colour("#4ea1ff"))
    down: QColor = field(default_factory=lambda: _colour("#ff9d3d"))
    #: Short-lived cell background after a rise / fall (translucent: tints the base colour).
    up_flash: QColor = field(default_factory=lambda: _colour("#4ea1ff", FLASH_ALPHA))
    down_flash: QColor = field(default_factory=lambda: _colour("#ff9d3d", FLASH_ALPHA))
    #: Bid (buyers) and ask (sellers) prices: the hues of up and down, one pair to learn.
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
    up=_colour("#0b62c4"),
    down=_colour("#b54f00"),
    up_flash=_colour("#0b62c4", FLASH_ALPHA // 2),
    down_flash=_colour("#b54f00", FLASH_ALPHA // 2),
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


_hub = _PaletteHub()
_current: TradePalette = DEFAULT_PALETTE

#: Emitted with the new ``TradePalette`` whenever ``set_palette`` changes it.
palette_changed = _hub.changed


def current_palette() -> TradePalette:
    return _current


def set_palette(palette: TradePalette) -> None:
    """Make ``palette`` the one in force; emits ``palette_changed`` only when it differs."""
    global _current
    if palette == _current:
        return
    _current = palette
    palette_changed.emit(palette)


def follow_palette(method: Callable[[TradePalette], object]) -> None:
    """Call ``method`` with the new palette on every switch, for as long as its object lives.

    ``method`` must be a bound method of a QObject: Qt then drops the connection when that
    object is destroyed. Anything else (a lambda, a function, a method of a plain Python
    object) is refused, because it would be called after its widget is gone."""
    owner = getattr(method, "__self__", None)
    if not isinstance(owner, QObject):
        raise TypeError(f"follow_palette needs a bound method of a QObject, not {method!r}")
    palette_changed.connect(method)


def palette_listeners() -> int:
    """How many connections ``palette_changed`` has (tests: destroyed widgets leave none)."""
    return _hub.receivers(SIGNAL("changed(PyObject)"))


#: Message levels that have a colour of their own; anything else ("info") is ordinary text.
LEVELS = ("error", "warning", "success")


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
