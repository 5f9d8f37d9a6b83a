"""Trading colours shared by the tables and charts.

Mid-tone colours that stay readable on both light and dark window backgrounds; the flash
backgrounds are translucent so they tint whatever base colour the theme paints under them.
Direction is never told by colour alone: the tables pair these with ▲/▼ signs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtGui import QColor


def _colour(spec: str, alpha: int = 255) -> QColor:
    colour = QColor(spec)
    colour.setAlpha(alpha)
    return colour


@dataclass(frozen=True)
class TradePalette:
    #: Text of a rising / falling value.
    up: QColor = field(default_factory=lambda: _colour("#2e9d57"))
    down: QColor = field(default_factory=lambda: _colour("#d64545"))
    #: Short-lived cell background after a rise / fall (translucent).
    up_flash: QColor = field(default_factory=lambda: _colour("#2e9d57", 96))
    down_flash: QColor = field(default_factory=lambda: _colour("#d64545", 96))
    #: Bid (buyers) and ask (sellers) prices: blue and orange, apart from up/down green/red.
    bid: QColor = field(default_factory=lambda: _colour("#3d85c6"))
    ask: QColor = field(default_factory=lambda: _colour("#e07b39"))
    #: Data older than its feed promises.
    stale: QColor = field(default_factory=lambda: _colour("#8a8a8a"))


DEFAULT_PALETTE = TradePalette()
