"""Service events as Qt signals: the one seam between ``app.services`` and the widgets.

Everything runs on the GUI thread (qasync), so the signals are direct; the bridge exists so
widgets depend on Qt signals only and never subscribe to services themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, Signal

from app.services.events import Topic
from app.services.session import TerminalSession

T = TypeVar("T")


class SessionBridge(QObject):
    topOfBook = Signal(object)  # dict[str, TopOfBook]
    balances = Signal(object)  # Balances
    orderBook = Signal(object)  # OrderBook | None
    health = Signal(object)  # HealthState
    feedStatus = Signal(object)  # FeedStatus
    logEvent = Signal(object)  # LogEvent
    watchlistChanged = Signal(list)
    selectionChanged = Signal(str)

    def __init__(self, session: TerminalSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._unsubscribe: list[Callable[[], None]] = []
        self._forward(session.top_of_book.data, self.topOfBook.emit)
        self._forward(session.balances.data, self.balances.emit)
        self._forward(session.order_book.data, self.orderBook.emit)
        self._forward(session.health.changes, self.health.emit)
        for poller in (session.top_of_book, session.balances, session.order_book):
            self._forward(poller.status, self.feedStatus.emit)
        self._forward(session.events, self.logEvent.emit)
        self._forward(session.watchlist_changed, self.watchlistChanged.emit)
        self._forward(session.selection_changed, self.selectionChanged.emit)
        undo = self._unsubscribe  # a closure: PySide does not call a dying object's methods
        self.destroyed.connect(lambda *_: _undo_all(undo))

    def _forward(self, topic: Topic[T], emit: Callable[..., None]) -> None:
        self._unsubscribe.append(topic.subscribe(emit))

    def detach(self, *_: object) -> None:
        _undo_all(self._unsubscribe)

    def select_pair(self, pair: str) -> None:
        self.session.select_pair(pair)

    def set_watchlist(self, pairs: list[str]) -> None:
        self.session.set_watchlist(pairs)


def _undo_all(unsubscribes: list[Callable[[], None]]) -> None:
    for unsubscribe in unsubscribes:
        unsubscribe()
    unsubscribes.clear()
