"""What every panel is given: the session's signals, display precision, settings, a way to tell
the trader something (log panel + short non-blocking notice), and the trading desks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QSettings

from app.services.desks import TradingDesks
from app.ui.bridge import SessionBridge
from app.ui.formatting import Precision

Notify = Callable[[str, str], None]  # (level: "info" | "warning" | "error", message)


@dataclass
class PanelContext:
    bridge: SessionBridge
    precision: Precision
    settings: QSettings
    notify: Notify
    desks: TradingDesks | None = None  # the ticket panels need them; None in read-only tests

    def need_desks(self) -> TradingDesks:
        if self.desks is None:
            raise RuntimeError("this panel trades: the context must carry the trading desks")
        return self.desks
