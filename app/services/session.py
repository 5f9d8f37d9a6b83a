"""The terminal's live session: the client, the feeds it polls, and what the trader watches.

Feeds (intervals configurable in Settings): top of book for every watched pair in one request
(0.5 s), balances = account + portfolio together (5 s, and at once after a fill), the order book
of the selected pair (1 s). Each feed's request is a poll (``poll=True``: a deadline of 1–2 s,
no retries) and the three form one ``FeedGroup``: they recover together, and a lost login halts
them all until ``log_in_again``. The top-of-book request asks for the watched pairs and for the
pairs the price alerts need that are not watched (``poll_also``): the alerts add pairs to that
one request, never a request of their own, and nothing when none needs it. The default
watchlist is the server's available pairs, falling back to ``FALLBACK_WATCHLIST`` when the
server has no pairs operation.

The session is the live market side of one login: its pollers and their topics, the market,
the health, the price alerts and the intents (select a pair, set the watchlist, refresh). It
hands out no feeds and imports none: the composition root (``app.services.terminal``) builds
the feeds from narrow inputs, so no service needs the whole session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from app.api import NotFound, ServiceClient, ServiceError
from app.domain import utc_now
from app.domain.records import Balances as Balances  # still importable from here
from app.domain.records import (
    Order,
    OrderBook,
    PairInfo,
    ServiceInfo,
    TopOfBook,
)
from app.services.alerts import PriceAlerts
from app.services.events import Topic, cancel_and_wait
from app.services.health import Health, HealthMonitor, HealthState
from app.services.log_events import EventKind, LogEvent, LogLevel
from app.services.market import Market
from app.services.own_fills import OwnFills
from app.services.poller import FeedGroup, Poller
from app.services.tasks import Tasks, spawn

log = logging.getLogger("tradeterm.services")

#: Seconds between checks of the server clock: a re-measure (one service-time request) happens
#: only when due — a wall-clock jump, a moved server clock, or every few minutes (app.api.clock);
#: between them every answer's Date header keeps the estimate.
CLOCK_CHECK_SECONDS = 2.0
FALLBACK_WATCHLIST = ("BTC/USD", "ETH/USD", "SOL/USD", "BTC/USDT", "ETH/BTC", "USDT/USD")
#: Seconds between asks for an operation the service did not offer (it may be added later).
OPTIONAL_RETRY_SECONDS = 300.0


@dataclass(frozen=True)
class FeedIntervals:
    top_of_book: float = 0.5
    balances: float = 5.0
    order_book: float = 1.0


@dataclass
class Environment:
    """Where the session is connected: for the title bar and the SANDBOX badge."""

    base_url: str
    user: str
    account: str
    sandbox: bool = False
    label: str = field(default="")

    def __post_init__(self) -> None:
        if not self.label:
            self.label = "Sandbox" if self.sandbox else self.base_url


class TerminalSession:
    def __init__(
        self,
        client: ServiceClient,
        environment: Environment,
        intervals: FeedIntervals | None = None,
        watchlist: Sequence[str] | None = None,
        *,
        tasks: Tasks | None = None,
    ) -> None:
        """``tasks``: where the polling, health and clock loops run (the terminal's owner)."""
        self.client = client
        self.tasks = tasks
        self.environment = environment
        intervals = intervals or FeedIntervals()
        self._watchlist: list[str] = list(watchlist or [])
        # Pairs polled though not watched, by who needs them (price alerts, working algos).
        self._also_polled: dict[str, list[str]] = {}
        self._selected: str | None = None
        self.available_pairs: list[str] = []
        self.pair_info: dict[str, PairInfo] = {}
        self.feeds = FeedGroup()
        self.top_of_book: Poller[dict[str, TopOfBook]] = Poller(
            "top of book", self._fetch_top, intervals.top_of_book, group=self.feeds, tasks=tasks
        )
        self.balances: Poller[Balances] = Poller(
            "balances", self._fetch_balances, intervals.balances, group=self.feeds, tasks=tasks
        )
        self.order_book: Poller[OrderBook | None] = Poller(
            "order book", self._fetch_book, intervals.order_book, group=self.feeds, tasks=tasks
        )
        #: Whether the service offers the order book (None until it has answered once).
        self.book_offered: bool | None = None
        self.book_offered_changed: Topic[bool] = Topic("order book offered")
        self._book_interval = intervals.order_book
        #: The one copy of the market every desk and report reads (``app.services.market``).
        self.market = Market(self.top_of_book.data, self.balances.data, lambda: self.pair_info)
        self.health = HealthMonitor(
            [self.top_of_book, self.balances, self.order_book],  # type: ignore[list-item]
            tasks=tasks,
        )
        self.watchlist_changed: Topic[list[str]] = Topic("watchlist")
        self.selection_changed: Topic[str] = Topic("selection")
        self.events: Topic[LogEvent] = Topic("log")
        self.fills: Topic[None] = Topic("fills")  # an order or accept may have moved money
        self.own_fills = OwnFills()
        self._was_offline = False
        self._time_keeper: asyncio.Task[None] | None = None
        self.clock_check_seconds = CLOCK_CHECK_SECONDS
        self.health.changes.subscribe(self._log_health)
        self.price_alerts = PriceAlerts(
            self.top_of_book.data, self.poll_also, self.log, lambda: self.pair_info
        )

    # -- lifecycle ----------------------------------------------------------------------------

    def pairs(self) -> list[str]:
        """The service's pairs as known now (a ``PairNames`` for the feeds)."""
        return list(self.available_pairs)

    async def start(self) -> None:
        """Learn the pairs and the clock, then start every feed."""
        try:
            infos = await self.client.pairs()
            self.pair_info = {str(info.pair): info for info in infos}
            self.available_pairs = list(self.pair_info)
            self.market.pairs_changed()
        except NotFound:
            self.available_pairs = list(FALLBACK_WATCHLIST)
        except ServiceError as exc:
            self.log(LogLevel.WARNING, f"cannot read the available pairs ({exc}); using defaults")
            self.available_pairs = list(FALLBACK_WATCHLIST)
        if not self._watchlist:
            self._watchlist = list(self.available_pairs or FALLBACK_WATCHLIST)
        self.watchlist_changed.publish(self.watchlist)
        if self._selected is None and self._watchlist:
            self._selected = self._watchlist[0]
        if self._selected is not None:
            self.selection_changed.publish(self._selected)
        try:
            await self.client.service_time()
        except ServiceError as exc:
            self.log(LogLevel.INFO, f"service time unavailable ({exc}); using the Date header")
        for poller in self._pollers():
            poller.start()
        self.health.start()
        self._time_keeper = spawn(self.tasks, self._keep_time(), "server clock")
        self.log(
            LogLevel.INFO,
            f"connected to {self.environment.label} as {self.environment.user}, "
            f"account {self.environment.account}",
        )

    async def _keep_time(self) -> None:
        """Server time tracked continuously, never measured once (design.md §7): a jump of
        this machine's clock is seen within ``clock_check_seconds`` and re-measured then, not
        only when a countdown or a reconcile next asks."""
        while True:
            await asyncio.sleep(self.clock_check_seconds)
            await self.client.refresh_clock()

    async def stop(self) -> None:
        await cancel_and_wait(self._time_keeper)
        self._time_keeper = None
        await self.health.stop()
        await asyncio.gather(*(p.stop() for p in self._pollers()))

    async def logout(self) -> None:
        """Stop the feeds and forget the token and credentials; the client is closed."""
        await self.stop()
        await self.client.logout()
        await self.client.aclose()
        self.log(LogLevel.INFO, f"logged out of {self.environment.label}")

    async def log_in_again(self, password: str) -> None:
        """After "login expired": log in with the trader's password and resume the feeds."""
        await self.client.login(self.environment.user, password, self.environment.account)
        self.feeds.resume()

    def _pollers(self) -> list[Poller[object]]:
        return [self.top_of_book, self.balances, self.order_book]  # type: ignore[list-item]

    # -- what the trader watches ----------------------------------------------------------------

    @property
    def watchlist(self) -> list[str]:
        return list(self._watchlist)

    def set_watchlist(self, pairs: Sequence[str]) -> None:
        self._watchlist = list(dict.fromkeys(pairs))
        self.watchlist_changed.publish(self.watchlist)
        self.top_of_book.refresh()

    def poll_also(self, pairs: Sequence[str], owner: str = "alerts") -> None:
        """Ask for ``pairs`` in the top-of-book request too, for ``owner`` (each owner's list
        replaces its last; the request holds the union); a pair not polled yet is asked for
        at once."""
        before = set(self._polled_pairs())
        self._also_polled[owner] = list(dict.fromkeys(pairs))
        if any(pair not in before for pair in pairs):
            self.top_of_book.refresh()

    def _polled_pairs(self) -> list[str]:
        """The top-of-book request's pairs: the watchlist, then what else alerts and algos
        need."""
        watched = set(self._watchlist)
        also = dict.fromkeys(pair for pairs in self._also_polled.values() for pair in pairs)
        return [*self._watchlist, *(p for p in also if p not in watched)]

    @property
    def selected_pair(self) -> str | None:
        return self._selected

    def select_pair(self, pair: str) -> None:
        if pair == self._selected:
            return
        self._selected = pair
        self.selection_changed.publish(pair)
        self.order_book.refresh()

    def set_intervals(self, intervals: FeedIntervals) -> None:
        """Re-time the feeds (Settings): each poller waits the new interval from now on (a
        book the service does not offer stays on its rare retry)."""
        self.top_of_book.interval = intervals.top_of_book
        self.balances.interval = intervals.balances
        self._book_interval = intervals.order_book
        if self.book_offered is not False:
            self.order_book.interval = intervals.order_book

    def after_fill(self, order: Order | None = None) -> None:
        """Balances change with every fill: read them at once, and tell the record views; a
        filled ``order`` joins the session's own fills (the chart marks them)."""
        if order is not None:
            self.own_fills.add(order, self.pair_info)
        self.balances.refresh()
        self.fills.publish(None)

    async def service_info(self) -> list[ServiceInfo]:
        """Information of the three sub-services (Help > About)."""
        return list(
            await asyncio.gather(
                *(self.client.info(name) for name in ("accounting", "identity", "routing"))
            )
        )

    def log(self, level: LogLevel, message: str, kind: EventKind = EventKind.NONE) -> None:
        log.log(level.python_level, "%s", message)
        self.events.publish(LogEvent(utc_now(), level, message, kind))

    async def aclose(self) -> None:
        """Close the connection (the feeds must be stopped first)."""
        await self.client.aclose()

    # -- what the session hands out -------------------------------------------------------------

    @property
    def clock_offset(self) -> timedelta:
        """Server clock minus local clock, as last estimated."""
        return self.client.clock.offset

    @property
    def token_seconds_left(self) -> float | None:
        return self.client.token_seconds_left

    # -- fetches --------------------------------------------------------------------------------

    async def _fetch_top(self) -> dict[str, TopOfBook]:
        pairs = self._polled_pairs()
        if not pairs:
            return {}
        return await self.client.top_of_book(pairs, poll=True)

    async def _fetch_balances(self) -> Balances:
        account, portfolio = await asyncio.gather(
            self.client.account(poll=True), self.client.portfolio(poll=True)
        )
        return Balances(account, portfolio)

    async def _fetch_book(self) -> OrderBook | None:
        """The selected pair's book. The seed names the operation without a path: a service
        that answers 404 does not offer it — said once (``book_offered``), asked again only
        every ``OPTIONAL_RETRY_SECONDS``, and never a failing feed."""
        if self._selected is None:
            return None
        try:
            book = await self.client.order_book(self._selected, poll=True)
        except NotFound:
            self._book_offered(False)
            return None
        self._book_offered(True)
        return book

    def _book_offered(self, offered: bool) -> None:
        if offered == self.book_offered:
            return
        was_unknown = self.book_offered is None
        self.book_offered = offered
        if offered:
            self.order_book.interval = self._book_interval
            if not was_unknown:
                self.log(LogLevel.INFO, "the service now offers the order book")
        else:
            self._book_interval = self.order_book.interval
            self.order_book.interval = OPTIONAL_RETRY_SECONDS
            self.log(
                LogLevel.INFO,
                "the service does not offer an order book (the depth dock shows top of book "
                f"only); asking again every {OPTIONAL_RETRY_SECONDS / 60:.0f} minutes",
            )
        self.book_offered_changed.publish(offered)

    def _log_health(self, state: HealthState) -> None:
        quiet = state.health in (Health.LIVE, Health.CONNECTING)
        level = LogLevel.INFO if quiet else LogLevel.WARNING
        kind = EventKind.NONE
        if state.health == Health.OFFLINE and not self._was_offline:
            # Once per outage: a new reason while still offline is logged, not announced again.
            kind = EventKind.OFFLINE
        elif state.health == Health.LIVE and self._was_offline:
            kind = EventKind.ONLINE
        if state.health in (Health.OFFLINE, Health.LIVE):
            self._was_offline = state.health == Health.OFFLINE
        self.log(level, f"connection {state.health}: {state.reason}", kind)
