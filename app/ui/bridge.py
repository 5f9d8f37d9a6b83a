"""The one seam between ``app.services`` and the widgets.

- ``QtTopic[T]`` is the only code in ``app/ui`` that subscribes to a service ``Topic``: it
  re-emits each value as a Qt signal and unsubscribes when its owner (a widget, or the bridge)
  is destroyed, so no widget writes its own re-emit or unsubscribe code.
- Every signal carries the snapshot it announces: a widget acts on the value it was handed and
  never reads a service's cache, so the order in which things subscribed cannot matter.
- ``SessionBridge`` is what panels are given instead of the terminal (``app.services.terminal``):
  the session's topics as ``QtTopic``s, a few read-only facts (environment, pairs, watchlist),
  the trader's intents (select a pair, set the watchlist, refresh, log), the price alerts and
  ``feeds``, the terminal's feed maker (a panel makes its own order list, ledger, positions,
  transfers with it), and ``algos``, the execution engine (the Working orders dock, the algo
  ticket and the chart's fill markers read its parents when ``algoChanged`` names one).
  Widgets never hold the terminal, the session or its client.
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
from app.domain.records import Balances, OrderBook, PairInfo, ServiceInfo, TopOfBook
from app.services.alerts import PriceAlerts
from app.services.algos.engine import AlgoRefused, ExecutionEngine
from app.services.algos.parents import Parent
from app.services.algos.specs import AlgoSpec
from app.services.connect import log_in_again
from app.services.estimates import EstimateFeed
from app.services.events import Topic
from app.services.health import HealthState
from app.services.log_events import EventKind, LogEvent, LogLevel
from app.services.own_fills import OwnFills
from app.services.poller import FeedStatus
from app.services.session import Environment, FeedIntervals
from app.services.terminal import Feeds, Terminal
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
    """The terminal as the widgets see it: typed topics, facts, intents and feeds."""

    def __init__(self, terminal: Terminal, parent: QObject | None = None) -> None:
        super().__init__(parent)
        session = terminal.session
        self._session = session
        #: Makes the feeds a panel owns (order list, ledger, positions, transfers, estimates).
        self.feeds: Feeds = terminal.feeds
        #: The price alerts: list, add, edit, remove, re-arm (changes arrive on
        #: ``priceAlerts``).
        self.price_alerts: PriceAlerts = session.price_alerts
        #: Where this login is connected (fixed for its life).
        self.environment: Environment = session.environment
        #: The names the feeds' statuses carry (``feedStatus``, ``freshness``).
        self.top_of_book_feed = session.top_of_book.name
        self.balances_feed = session.balances.name
        self.order_book_feed = session.order_book.name
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
        #: The execution engine (parent orders), None without trading desks: submit, pause,
        #: resume, stop and its parents; ``algoChanged`` carries the id of a parent that changed.
        self.algos: ExecutionEngine | None = terminal.algos
        self.algoChanged: QtTopic[str] = QtTopic(
            None if terminal.algos is None else terminal.algos.changed, self
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
            self.algoChanged,
        ]

    def detach(self, *_: object) -> None:
        """Stop forwarding every topic now (benchmarks and tests that outlive the bridge)."""
        for topic in self._topics:
            topic.detach()

    # -- facts ----------------------------------------------------------------------------------

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
    def own_fills(self) -> OwnFills:
        """The trader's fills this session (``fills`` tells when one may have joined)."""
        return self._session.own_fills

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

    def submit_algo(self, spec: AlgoSpec) -> Parent:
        """Start a parent (``ExecutionEngine.submit``: raises ``AlgoRefused`` or a risk
        refusal with nothing started) and announce it on ``algoChanged``: the engine announces
        a parent when it first changes, and an armed one may not change for hours."""
        if self.algos is None:
            raise AlgoRefused("no trading desks in this window")
        parent = self.algos.submit(spec)
        self.algos.changed.publish(parent.id)
        return parent

    # -- the one feed asked for by name (the order ticket's) ------------------------------------

    def estimate_feed(self) -> EstimateFeed:
        return self.feeds.estimate_feed()
