"""What every panel is given, and what the main window may ask of a panel.

``PanelContext``: the session as the widgets see it (the bridge), display precision, settings,
and a way to tell the trader something (log panel + short non-blocking notice). A panel that
trades takes its desk in its constructor as well, so nothing is checked at run time.

``Panel``: the optional hooks the main window calls (a typed protocol, not names looked up with
``getattr``): where the cursor goes on the panel's shortcut, what to stop before the connection
closes, and how to apply new preferences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction

from app.domain.display import Precision
from app.services.log_events import LogLevel
from app.ui.bridge import SessionBridge
from app.ui.click_trade import TradeIntents
from app.ui.preferences import Preferences
from app.ui.record_intents import RecordIntents

Notify = Callable[[LogLevel, str], None]


@dataclass
class PanelContext:
    bridge: SessionBridge
    precision: Precision
    settings: QSettings
    notify: Notify
    #: Click-to-trade requests from the price panels to the order ticket (one per window).
    trade: TradeIntents = field(default_factory=TradeIntents)
    #: Requests to show a record in its dock (a child order in the Orders dock, say).
    records: RecordIntents = field(default_factory=RecordIntents)


@runtime_checkable
class FocusEntry(Protocol):
    def focus_entry(self) -> None:
        """Put the cursor where the trader types first (the panel's shortcut)."""


@runtime_checkable
class OwnsFeed(Protocol):
    async def stop_feed(self) -> None:
        """Stop the panel's own feed before the connection closes (no poll cut off at quit)."""


@runtime_checkable
class FollowsPreferences(Protocol):
    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings were applied: take the panel's share of them now."""


@runtime_checkable
class TradeActions(Protocol):
    def trade_actions(self) -> list[QAction]:
        """Actions the main window lists in its Trade menu (e.g. hit bid / lift offer)."""
