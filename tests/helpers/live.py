"""A started terminal on a sandbox client as the UI tests hold it, and the shapes of the fixtures
that make one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.services.desks import TradingDesks
from app.services.log_events import LogLevel
from app.services.session import TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from tests.harness import Session


@dataclass
class Live:
    """A started terminal on a fresh sandbox client: its session, its bridge, its trading desks
    (journal in the test's tmp_path) and the panel context."""

    terminal: Terminal
    session: TerminalSession
    bridge: SessionBridge
    context: PanelContext
    account: Session
    notices: list[tuple[LogLevel, str]]
    desks: TradingDesks


LiveFactory = Callable[..., Live]


OfflineContext = Callable[[str], PanelContext]
