"""What the session tells the trader: one event per line of the log panel, typed.

Levels and kinds are enums (``StrEnum``: they still read and store as the plain words, so saved
notification switches and log lines keep their text), never strings dispatched by name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class LogLevel(StrEnum):
    INFO = "info"
    SUCCESS = "success"  # a fill: shown as a notice in the success colour
    WARNING = "warning"
    ERROR = "error"

    @property
    def python_level(self) -> int:
        """The ``logging`` level the line is written to the log file with."""
        return _PYTHON_LEVELS[self]


_PYTHON_LEVELS = {
    LogLevel.INFO: logging.INFO,
    LogLevel.SUCCESS: logging.INFO,
    LogLevel.WARNING: logging.WARNING,
    LogLevel.ERROR: logging.ERROR,
}


class EventKind(StrEnum):
    """What happened, for notifications (each kind has its own switch in Settings)."""

    NONE = ""
    FILL = "fill"
    REFUSAL = "refusal"
    QUOTE_EXPIRING = "quote_expiring"
    OFFLINE = "offline"
    ONLINE = "online"
    PRICE_ALERT = "price_alert"  # a price alert fired (app/services/alerts.py)


#: The kinds Edit > Settings lists, in its order. A price alert's desktop alert is switched in
#: View > Notifications (``app.ui.notifier.KINDS``) and by the trader's own alerts.
NOTIFY_KINDS: tuple[EventKind, ...] = tuple(
    kind for kind in EventKind if kind and kind is not EventKind.PRICE_ALERT
)


@dataclass(frozen=True)
class LogEvent:
    at: datetime
    level: LogLevel
    message: str
    kind: EventKind = EventKind.NONE
