"""Trading colours shared by the tables and charts, one set per theme, switchable at run time.

Rises and the bid (buyers') side are blue, falls and the ask (sellers') side are orange: the one
pair of hues that stays apart for red-green colour blindness (deuteranopia, protanopia), which a
green/red scheme does not. Each theme has its own shades, picked to read on that theme's table
background (``tests/ui/test_theme.py`` checks the contrast and the colour-blind distance).
Direction is never told by colour alone: the tables pair these with ▲/▼ signs.

The palette in force is module state: ``current_palette()`` reads it, ``set_palette()`` (called
by ``app.ui.theme.apply_theme``) changes it and emits ``palette_changed`` with the new
``TradePalette``, so models and charts can repaint in the new colours without a restart.
Connect a bound method of a QObject (it is disconnected when that object is destroyed), never
a lambda that captures a widget.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal
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
