"""The composition root: one ``Terminal`` per login builds and owns everything live for it.

What owns what::

    Terminal
    ├── client            the one ServiceClient (closed last)
    ├── session           pollers (top of book, balances, order book), health, server clock,
    │   │                 price alerts, the watchlist and the selection
    │   └── market        the one numbered copy of the market (MarketSnapshot per change)
    ├── desks             journal, order desk, RFQ desk, unknown outcomes (TradingDesks)
    ├── algos             the execution engine: parent orders worked through the order desk,
    │                     kept in a store beside the journal
    ├── feeds             handed out on request: estimates, order list, ledger browser,
    │                     positions, transfers; each built from narrow inputs
    │                     (``app.services.feed_inputs``: a client, the account id, a pairs()
    │                     function, the fills topic, the market), never the session
    └── tasks             the one owner of the background tasks: the pollers' loops, the
                          health monitor, the server clock, the feeds' polls, the start-up
                          reconcile, the desks' settlers, quote watchers and followers

How data flows::

    poll answer (tick) → Market → MarketSnapshot on market.changed
        → desks: preview (checks on that snapshot) → send → journal → result / unknown
        → positions: the last book re-valued → PositionsReport on positions.reports
    a result that may have moved money → session.fills
        → order list read again, positions re-read from the ledger, balances polled at once

Nothing here imports Qt (design.md §1); the UI reaches all of it through ``app/ui/bridge.py``.

Shutdown is one ``await terminal.aclose()``, in the order that leaves nothing cut off: every
task of ``tasks`` is cancelled and awaited (a reconcile writes to the journal, polls use the
client), then the feeds and the session let go of their subscriptions, the desks close (the
journal after its last write), and the client closes last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from app.api import ServiceClient
from app.domain.positions import CostMethod
from app.services.algos.engine import ExecutionEngine
from app.services.algos.store import AlgoStore, path_beside
from app.services.desks import TradingDesks
from app.services.estimates import EstimateFeed
from app.services.journal import JournalEntry, OrderJournal
from app.services.ledger_browser import LedgerBrowser
from app.services.log_events import LogLevel
from app.services.order_feed import OrderFeed
from app.services.positions import PositionsCache, PositionsService, service_key
from app.services.pretrade import CheckLimits
from app.services.risk import RiskState
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.services.tasks import Tasks
from app.services.transfers import InstructionBook, TransferFeed, TransferQuery, fetch_instructions

T = TypeVar("T")


class Terminal:
    """Everything live for one login; see the module docstring. Built by ``connect`` (logged
    in, not started) with ``build``; ``open_desks`` adds the trading desks (a read-only
    terminal has none); ``start`` starts the feeds; ``aclose`` ends it all.

    ``Terminal(session)`` adopts a session built elsewhere (a test's): its loops run in the
    session's ``tasks`` when it has them, else in a new owner of the terminal's own."""

    def __init__(self, session: TerminalSession) -> None:
        self.session = session
        self.desks: TradingDesks | None = None
        self.algos: ExecutionEngine | None = None
        self._unsubscribe_risk: Callable[[], None] = lambda: None
        self.tasks = session.tasks if session.tasks is not None else Tasks()
        # A failure is told to the trader (the log panel and a notice), not only to the file.
        self.tasks.on_error = lambda what, exc: session.log(LogLevel.ERROR, f"{what} failed: {exc}")
        self.feeds = Feeds(session, self.tasks)
        self._closed = False

    @classmethod
    def build(
        cls,
        client: ServiceClient,
        environment: Environment,
        intervals: FeedIntervals | None = None,
        watchlist: Sequence[str] | None = None,
    ) -> Terminal:
        """The terminal of a logged-in ``client``: one task owner for all its loops."""
        tasks = Tasks()
        return cls(TerminalSession(client, environment, intervals, watchlist, tasks=tasks))

    @property
    def client(self) -> ServiceClient:
        return self.session.client

    @property
    def account(self) -> str:
        return self.session.environment.account

    # -- lifecycle ----------------------------------------------------------------------------

    def open_desks(
        self,
        journal_path: Path | str | None = None,
        limits: CheckLimits | None = None,
        *,
        auto_requote: bool = False,
    ) -> TradingDesks:
        """The trading desks over this terminal's session, with their journal."""
        if self.desks is None:
            self.desks = TradingDesks.open(
                self.session, journal_path, limits, auto_requote=auto_requote, tasks=self.tasks
            )
            store = AlgoStore(path_beside(self.desks.journal.path))
            risk = self.desks.risk
            self.algos = ExecutionEngine(self.desks.orders, store, tasks=self.tasks, gate=risk)
            engine = self.algos

            def on_risk(state: RiskState) -> None:
                # The kill switch pauses every parent and disarms every stop in the same turn
                # as the halt (the desk refuses any send already on its way in).
                if state.halted:
                    engine.halt_all(f"trading halted: {state.why}")

            self._unsubscribe_risk = risk.changed.subscribe(on_risk)
            if risk.halted:  # a terminal that starts halted starts with nothing running
                on_risk(risk.state)
        return self.desks

    async def start(self) -> None:
        """Learn the pairs and the clock, start the feeds; then, in the background, settle
        what the last run left open (when there are desks)."""
        await self.session.start()
        if self.desks is not None:
            self.spawn(self.reconcile_on_start(), "checking orders left open by the last run")

    async def reconcile_on_start(self) -> list[JournalEntry]:
        """Settle what the last run left open; what stays unknown is looked for all session."""
        if self.desks is None:
            return []
        changed = await self.desks.reconcile_on_start(self.session)
        if self.algos is not None:  # after the reconcile: it may have settled their children
            await self.algos.restore()
        return changed

    def spawn(self, coro: Coroutine[Any, Any, T], what: str) -> asyncio.Task[T]:
        """Background work owned by the terminal: cancelled and awaited by ``aclose``."""
        return self.tasks.spawn(coro, what)

    async def aclose(self) -> None:
        """Cancel and await everything, in order (module docstring), and close the client.
        Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._unsubscribe_risk()
        if self.algos is not None:
            await self.algos.aclose()
        await self.tasks.aclose()
        await self.feeds.aclose()
        await self.session.stop()
        if self.desks is not None:
            await self.desks.close()
        self.session.market.close()
        await self.session.aclose()


class Feeds:
    """The feeds a terminal hands out on request (a panel asks for its own, with its own
    interval or filter), each built from the narrow inputs it needs, and each stopped by
    ``aclose`` before the client closes. This is what the widgets are given to make feeds:
    it holds the session for the wiring only and hands none of it out."""

    def __init__(self, session: TerminalSession, tasks: Tasks) -> None:
        self._session = session
        self._tasks = tasks
        self._closers: list[Callable[[], Awaitable[None]]] = []

    @property
    def client(self) -> ServiceClient:
        return self._session.client

    @property
    def account(self) -> str:
        return self._session.environment.account

    def _owned(self, close: Callable[[], Awaitable[None]]) -> None:
        self._closers.append(close)

    async def aclose(self) -> None:
        """Stop every feed handed out, newest first."""
        closers, self._closers = self._closers, []
        for close in reversed(closers):
            await close()

    def estimate_feed(self) -> EstimateFeed:
        feed = EstimateFeed(self.client)
        self._owned(feed.close)
        return feed

    def ledger_browser(self) -> LedgerBrowser:
        return LedgerBrowser(self.client, self._session.pairs)

    def positions(
        self, cache: PositionsCache, *, currency: str, method: CostMethod
    ) -> PositionsService:
        """The positions of this account, derived from its ledger, re-valued at every new
        top of book of the market."""
        service = PositionsService(
            self.client,
            cache,
            service=service_key(self._session.environment),
            account=self.account,
            pairs=self._session.pairs,
            market=self._session.market.changed,
            fills=self._session.fills,
            currency=currency,
            method=method,
        )

        async def close() -> None:
            service.close()

        self._owned(close)
        return service

    def order_feed(
        self, journal: OrderJournal | None, *, interval: float, page_size: int
    ) -> OrderFeed:
        feed = OrderFeed(
            self.client,
            self.account,
            self._session.pairs,
            self._session.fills,
            journal,
            interval=interval,
            page_size=page_size,
            tasks=self._tasks,
        )
        self._owned(feed.stop)
        return feed

    def transfer_feed(self, query: TransferQuery, *, interval: float) -> TransferFeed:
        feed = TransferFeed(self.client, query, interval=interval, tasks=self._tasks)
        self._owned(feed.stop)
        return feed

    async def instructions(self) -> InstructionBook:
        """Deposit and withdraw instructions, both lists at once."""
        return await fetch_instructions(self.client)
