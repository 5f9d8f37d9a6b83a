"""What every panel is given: the session's signals, display precision, settings, and a way
to tell the trader something (log panel + short non-blocking notice)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QSettings

from app.ui.bridge import SessionBridge
from app.ui.formatting import Precision

Notify = Callable[[str, str], None]  # (level: "info" | "warning" | "error", message)


@dataclass
class PanelContext:
    bridge: SessionBridge
    precision: Precision
    settings: QSettings
    notify: Notify
