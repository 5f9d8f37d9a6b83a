"""The one seam between ``app.services`` and the widgets.

- ``QtTopic[T]`` is the only code in ``app/ui`` that subscribes to a service ``Topic``: it
  re-emits each value as a Qt signal and unsubscribes when its owner (a widget, or the bridge)
  is destroyed, so no widget writes its own re-emit or unsubscribe code.
- Every signal carries the snapshot it announces: a widget acts on the value it was handed and
  never reads a service's cache, so the order in which things subscribed cannot matter.
- ``SessionBridge`` is what panels are given instead of the session: the session's topics as
  ``QtTopic``s, a few read-only facts (environment, pairs, watchlist), the trader's intents
  (select a pair, set the watchlist, refresh, log) and the feeds the session hands out. Widgets
  never hold the session or its client.
- ``freshness`` hands a panel its feed's ``FeedFreshness`` (``app.ui.freshness``).

Everything runs on the GUI thread (qasync), so the signals are direct.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, Signal, SignalInstance

from app.domain.alerts import PriceAlert
from app.domain.positions import CostMethod
from app.domain.records import OrderBook, PairInfo, ServiceInfo, TopOfBook
from app.services.alerts import PriceAlerts
from app.services.connect import log_in_again
from app.services.estimates import EstimateFeed
from app.services.events import Topic
from app.services.health import HealthState
from app.services.journal import OrderJournal
from app.services.ledger_browser import LedgerBrowser
from app.services.log_events import EventKind, LogEvent, LogLevel
from app.services.order_feed import OrderFeed
from app.services.poller import FeedStatus
from app.services.positions import PositionsCache, PositionsService
from app.services.session import Balances, Environment, FeedIntervals, TerminalSession
from app.services.transfers import InstructionBook, TransferFeed, TransferQuery
from app.ui.freshness import FeedFreshness as FeedFreshness
from app.ui.freshness import Freshness as Freshness
from app.ui.freshness import assess_feed as assess_feed

T = TypeVar("T")


class _Relay(QObject):
    fired = Signal(object)


class QtTopic(Generic[T]):
    """A service topic as a typed Qt signal, subscribed for as long as ``owner`` lives.

    ``connect`` a slot: a bound method of another QObject is dropped by Qt with its object; a
    method of the owner itself is held weakly (it goes with the owner). ``emit`` a value as the
    service would (tests feed views this way); ``qt_signal`` is the Qt signal itself. ``latest``
    is the last value this topic carried (None before the first): a widget built later starts
    from it, not from a service's cache.
    """

    def __init__(self, topic: Topic[T] | None, owner: QObject) -> None:
        self.latest: T | None = None
        self._owner = weakref.ref(owner)  # not a strong reference: the owner may go
        self._relay = _Relay(owner)
        #: The owner's methods (by function: no reference to the owner) -> their wrappers.
        self._wrappers: dict[object, Callable[[T], None]] = {}
        if topic is not None:
            unsubscribe = topic.subscribe(self.emit)
            # On the owner's ``destroyed`` (emitted before its children go), with a closure:
            # methods of a dying object are not called, and a slot on the relay's own
            # ``destroyed`` would release the relay's wrapper while Qt is deleting it.
            owner.destroyed.connect(lambda *_: unsubscribe())
            self._unsubscribe: Callable[[], None] = unsubscribe
        else:
            self._unsubscribe = _nothing

    @property
    def qt_signal(self) -> SignalInstance:
        return self._relay.fired

    def connect(self, slot: Callable[[T], Any]) -> None:
        if getattr(slot, "__self__", None) is self._owner():
            # The owner's own method, through a weak reference: the relay dies with the owner
            # and must not keep it alive. (A bound method of the owner, connected directly to
            # its own child relay, crashed PySide 6.11.3 when the owner later deleted a file
            # dialog.)
            method = weakref.WeakMethod(slot)

            def call(value: T) -> None:
                alive = method()
                if alive is not None:
                    alive(value)

            self._wrappers[getattr(slot, "__func__", slot)] = call
            self._relay.fired.connect(call)
        else:
            self._relay.fired.connect(slot)  # Qt drops it with the receiver

    def disconnect(self, slot: Callable[[T], Any]) -> None:
        wrapper = self._wrappers.pop(getattr(slot, "__func__", slot), None)
        self._relay.fired.disconnect(wrapper or slot)

    def emit(self, value: T) -> None:
        self.latest = value
        self._relay.fired.emit(value)

    def detach(self) -> None:
        """Stop forwarding now (before the owner goes)."""
        self._unsubscribe()


def _nothing() -> None:
    return None


class SessionBridge(QObject):
    """The session as the widgets see it: typed topics, facts, intents and feeds."""

    def __init__(self, session: TerminalSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.topOfBook: QtTopic[dict[str, TopOfBook]] = QtTopic(session.top_of_book.data, self)
        self.balances: QtTopic[Balances] = QtTopic(session.balances.data, self)
        self.orderBook: QtTopic[OrderBook | None] = QtTopic(session.order_book.data, self)
        self.health: QtTopic[HealthState] = QtTopic(session.health.changes, self)
        self.feedStatus: QtTopic[FeedStatus] = QtTopic(None, self)
        self._feed_topics = [
            QtTopic(poller.status, self)
            for poller in (session.top_of_book, session.balances, session.order_book)
        ]
        for topic in self._feed_topics:
            topic.connect(self.feedStatus.emit)
        self.logEvent: QtTopic[LogEvent] = QtTopic(session.events, self)
        self.watchlistChanged: QtTopic[list[str]] = QtTopic(session.watchlist_changed, self)
        self.selectionChanged: QtTopic[str] = QtTopic(session.selection_changed, self)
        self.fills: QtTopic[None] = QtTopic(session.fills, self)
        #: The price alerts, the whole list after every change (added, fired, re-armed, ...).
        self.priceAlerts: QtTopic[tuple[PriceAlert, ...]] = QtTopic(
            session.price_alerts.changed, self
        )
        self._topics: list[QtTopic[Any]] = [
            self.topOfBook,
            self.balances,
            self.orderBook,
            self.health,
            *self._feed_topics,
            self.logEvent,
            self.watchlistChanged,
            self.selectionChanged,
            self.fills,
            self.priceAlerts,
        ]

    def detach(self, *_: object) -> None:
        """Stop forwarding every topic now (benchmarks and tests that outlive the bridge)."""
        for topic in self._topics:
            topic.detach()

    # -- facts ----------------------------------------------------------------------------------

    @property
    def environment(self) -> Environment:
        return self._session.environment

    @property
    def watchlist(self) -> list[str]:
        return self._session.watchlist

    @property
    def selected_pair(self) -> str | None:
        return self._session.selected_pair

    @property
    def available_pairs(self) -> list[str]:
        return list(self._session.available_pairs)

    @property
    def pair_info(self) -> dict[str, PairInfo]:
        return dict(self._session.pair_info)

    @property
    def top_of_book_feed(self) -> str:
        """The name the top-of-book feed's statuses carry."""
        return self._session.top_of_book.name

    @property
    def balances_feed(self) -> str:
        """The name the balances feed's statuses carry."""
        return self._session.balances.name

    @property
    def order_book_feed(self) -> str:
        """The name the selected pair's order book feed's statuses carry."""
        return self._session.order_book.name

    def freshness(self, feed: str, owner: QObject) -> FeedFreshness:
        """Whether ``feed``'s data can be trusted, for as long as ``owner`` lives."""
        return FeedFreshness(self, feed, owner)

    @property
    def top_of_book_interval(self) -> float:
        return self._session.top_of_book.interval

    @property
    def health_now(self) -> HealthState:
        return self._session.health.current

    @property
    def clock_offset(self) -> timedelta:
        return self._session.clock_offset

    @property
    def token_seconds_left(self) -> float | None:
        return self._session.token_seconds_left

    # -- intents --------------------------------------------------------------------------------

    def select_pair(self, pair: str) -> None:
        self._session.select_pair(pair)

    def set_watchlist(self, pairs: list[str]) -> None:
        self._session.set_watchlist(pairs)

    def set_intervals(self, intervals: FeedIntervals) -> None:
        self._session.set_intervals(intervals)

    async def log_in_again(self, password: str) -> None:
        """After "login expired"; raises ``LoginFailed`` in the dialog's words."""
        await log_in_again(self._session, password)

    def refresh_balances(self) -> None:
        self._session.balances.refresh()

    def log(self, level: LogLevel, message: str, kind: EventKind = EventKind.NONE) -> None:
        self._session.log(level, message, kind)

    async def service_info(self) -> list[ServiceInfo]:
        return await self._session.service_info()

    async def instructions(self) -> InstructionBook:
        return await self._session.instructions()

    # -- feeds the session hands out ------------------------------------------------------------

    def estimate_feed(self) -> EstimateFeed:
        return self._session.estimate_feed()

    def ledger_browser(self) -> LedgerBrowser:
        return self._session.ledger_browser()

    def positions(
        self, cache: PositionsCache, *, currency: str, method: CostMethod
    ) -> PositionsService:
        return self._session.positions(cache, currency=currency, method=method)

    def order_feed(
        self, journal: OrderJournal | None, *, interval: float, page_size: int
    ) -> OrderFeed:
        return self._session.order_feed(journal, interval=interval, page_size=page_size)

    def transfer_feed(self, query: TransferQuery, *, interval: float) -> TransferFeed:
        return self._session.transfer_feed(query, interval=interval)

    @property
    def price_alerts(self) -> PriceAlerts:
        """The session's price alerts: list, add, edit, remove, re-arm (changes arrive on
        ``priceAlerts``)."""
        return self._session.price_alerts
