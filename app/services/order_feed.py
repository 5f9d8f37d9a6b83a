"""The order list: the account's orders from the order query, kept fresh by a poller (2 s by
default, and at once after a fill), filtered, and paged back with ``startAtOrdering``.

Filters and where they apply (``OrderFilter``):

- ``status``, ``order_type``, ``start``/``end`` (submitted time, end exclusive) go to the server
  (``status``, ``type``, ``submittedAtStart``, ``submittedAtEnd``);
- ``pair`` (either direction) and ``asset`` (either side) go to the server as ``source`` and
  ``destination``: one query per direction or side, merged by ``ordering`` (the N newest of the
  union are the N newest overall, so paging stays exact);
- every filter is checked again here on what comes back, so a server that ignores a parameter
  (the seed documents only ``max``) still shows the right orders.
Free-text search is not an order-query parameter: the table applies it to what it shows.

A poll reads the newest page and merges it: new orders go on top (and are reported as new, so
the view can highlight them), known orders are updated in place, and resting orders older than
the page are re-read one by one (a few per poll) so a fill on page two is not missed. A page
that does not reach the orders already known (more than a page of new orders) replaces the list.
The clientOrderId is the server's echo, else the one the order journal wrote for that order id.

Given a mid store (``use_mids``), each filled row carries its economics: the mid at fill and
the basis points against it (``app.services.fill_mids``), looked up once per fill and frozen
in the journal once settled, so a restart reads the same figures back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from dataclasses import replace as with_fields
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from app.api import NotFound, ServiceError
from app.domain.fill_economics import FillEconomics
from app.domain.order_terms import OrderTerms
from app.domain.records import KNOWN_ORDER_STATUSES, Order
from app.services.errors import ReadFailed
from app.services.events import Topic
from app.services.feed_inputs import OrderReader, PairNames, Subscribable
from app.services.fill_mids import STEP_ORDERS, FillMids
from app.services.journal import OrderJournal
from app.services.mid_history import MidHistory
from app.services.poller import Poller
from app.services.slices import Steps, run_now, sliced
from app.services.tasks import Tasks

log = logging.getLogger("tradeterm.services")

DEFAULT_INTERVAL = 2.0
DEFAULT_PAGE = 100
MAX_PAGE = 1000  # the sandbox's cap on the order query's ``max``
#: Resting orders outside the newest page re-read per poll.
OPEN_REFRESH_PER_POLL = 10
#: Journal entries searched for the clientOrderId of an order the server does not echo it for.
JOURNAL_LOOKBACK = 5000
ORDER_TYPES = ("limit", "market", "rfq")
ORDER_STATUSES = tuple(sorted(KNOWN_ORDER_STATUSES))
_EPOCH = datetime.min.replace(tzinfo=UTC)
#: The trader's word for a status, where it differs from the wire's (the table, the CLI).
STATUS_WORDS = {"submitted": "resting"}


def status_word(status: str) -> str:
    """``submitted`` reads ``resting``; every other status as the service sent it."""
    return STATUS_WORDS.get(status, status)


@dataclass(frozen=True)
class OrderFilter:
    """What the trader asked to see; empty strings and None mean "any"."""

    status: str = ""
    order_type: str = ""
    pair: str = ""  # "BTC/USD": orders between BTC and USD, either direction
    asset: str = ""  # orders selling or buying this asset
    start: datetime | None = None  # submitted at or after
    end: datetime | None = None  # submitted before

    def validate(self) -> None:
        """ValueError in words when the filter cannot match anything sensible."""
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise ValueError("the start of the time range must be before its end")
        if self.pair and len(self.pair.split("/")) != 2:
            raise ValueError(f"a pair is written BASE/QUOTE, not {self.pair!r}")

    def branches(self) -> list[dict[str, str]]:
        """The source/destination parameters of each query whose union is this filter."""
        if self.pair:
            base, quote = self.pair.split("/")
            return [
                {"source": base, "destination": quote},
                {"source": quote, "destination": base},
            ]
        if self.asset:
            return [{"source": self.asset}, {"destination": self.asset}]
        return [{}]

    def matches(self, order: Order) -> bool:
        """The same filter applied locally (end exclusive, like the server's)."""
        if self.status and order.result.status != self.status:
            return False
        if self.order_type and order.type != self.order_type:
            return False
        if self.pair and {order.source, order.destination} != set(self.pair.split("/")):
            return False
        if self.asset and self.asset not in (order.source, order.destination):
            return False
        submitted = order.submitted_at
        if self.start is not None and (submitted is None or submitted < self.start):
            return False
        return not (self.end is not None and (submitted is None or submitted >= self.end))


@dataclass(frozen=True)
class OrderRow:
    order: Order
    client_order_id: str  # the server's echo, else the journal's; "" when unknown
    pairs: tuple[str, ...] = ()  # the service's pairs, which decide each order's base
    economics: FillEconomics | None = None  # a fill's mid at fill (given a mid store)

    @property
    def order_id(self) -> str:
        return self.order.order_id

    @cached_property
    def terms(self) -> OrderTerms:
        """The order in pair terms (computed once per row)."""
        return OrderTerms.of(self.order, self.pairs)

    @property
    def resting(self) -> bool:
        return self.order.result.status == "submitted"

    @property
    def known_status(self) -> bool:
        return self.order.result.status in KNOWN_ORDER_STATUSES


@dataclass(frozen=True)
class OrdersSnapshot:
    """The whole list as it stands, newest first, and what just changed."""

    rows: tuple[OrderRow, ...]
    filter: OrderFilter
    new_ids: frozenset[str] = frozenset()  # appeared on top in this update
    filled_ids: frozenset[str] = frozenset()  # known orders that became filled in this update
    reset: bool = False  # the list was replaced (filter change, first load, gap)
    more: bool = False  # "load more" may find older orders
    loading: bool = False


def newest_first(order: Order) -> tuple[int, datetime]:
    """Sort key (use with reverse=True): the query's ``ordering``, then the submitted time."""
    return (-1 if order.ordering is None else order.ordering, order.submitted_at or _EPOCH)


OrderKey = tuple[int, datetime, str]


def order_key(order: Order) -> OrderKey:
    """``newest_first`` and the order id (equal keys in a fixed order): the list's sort key."""
    return (*newest_first(order), order.order_id)


@dataclass
class _FeedState:
    """The orders of one filter. ``keys`` (every order's ``order_key``, oldest first) and
    ``resting`` (ids of resting orders) are kept as orders come, so a publish at 100,000
    orders neither sorts nor scans them all. ``keys`` is replaced, never changed in place: a
    publish under way (in slices) walks the list it started with."""

    generation: int = 0
    filter: OrderFilter = field(default_factory=OrderFilter)
    orders: dict[str, Order] = field(default_factory=dict)
    loaded: bool = False
    cursor: int | None = None  # startAtOrdering of the next older page
    more: bool = False
    keys: list[OrderKey] = field(default_factory=list)
    resting: set[str] = field(default_factory=set)
    #: Resting order id -> when it was last re-read (a count of re-reads, 0: never).
    reread: dict[str, int] = field(default_factory=dict)
    rereads: int = 0

    def replace(self, orders: Iterable[Order]) -> None:
        """The list is ``orders`` and nothing else."""
        self.orders, self.keys, self.resting, self.reread = {}, [], set(), {}
        self.put(orders)

    def put(self, orders: Iterable[Order]) -> bool:
        """Store new or updated ``orders``; whether any differs from what was stored."""
        changed, stale = False, False
        added: list[OrderKey] = []
        for order in orders:
            old = self.orders.get(order.order_id)
            if old is not None and order.ordering is None and old.ordering is not None:
                # a single order's read may lack the query's ``ordering``: it keeps its place
                order = with_fields(order, ordering=old.ordering)
            if old == order:
                if old.raw != order.raw:  # fields not parsed changed: the details show them
                    self.orders[order.order_id] = order
                continue  # else the object stays, and with it the row made of it
            self.orders[order.order_id] = order
            changed = True
            key = order_key(order)
            if old is None:
                added.append(key)
            elif order_key(old) != key:
                stale = True
            if order.result.status == "submitted":
                self.resting.add(order.order_id)
            else:
                self.resting.discard(order.order_id)
                self.reread.pop(order.order_id, None)
        if stale:
            self.keys = sorted(order_key(order) for order in self.orders.values())
        elif added:
            added.sort()
            keys = self.keys
            if not keys or added[0] > keys[-1]:
                self.keys = keys + added  # new orders on top: the usual poll
            elif added[-1] < keys[0]:
                self.keys = added + keys  # an older page
            else:
                self.keys = sorted(keys + added)  # two sorted runs: merged in one pass
        return changed


class OrderFeed:
    """Polls the order query for ``account`` through ``client``; publishes ``OrdersSnapshot``s.

    ``pairs`` gives the service's pairs (each order's base); ``fills`` says an order or accept
    may have moved money (the list is read at once); ``journal`` knows the clientOrderIds the
    server does not echo."""

    def __init__(
        self,
        client: OrderReader,
        account: str,
        pairs: PairNames,
        fills: Subscribable[None],
        journal: OrderJournal | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
        page_size: int = DEFAULT_PAGE,
        tasks: Tasks | None = None,
    ) -> None:
        if not 1 <= page_size <= MAX_PAGE:
            raise ValueError(f"page size is 1 to {MAX_PAGE:,}")
        self.client = client
        self.account = account
        self._pairs = pairs
        self.journal = journal
        self.page_size = page_size
        self.poller: Poller[None] = Poller("orders", self._poll, interval, tasks=tasks)
        self.updates: Topic[OrdersSnapshot] = Topic("orders")
        self._state = _FeedState()
        self._journal_ids: dict[str, str] = {}
        self._journal_read = False
        self._active = True
        self.mids: FillMids | None = None
        self._economics: dict[str, FillEconomics] = {}  # as last published
        self._unsettled: set[str] = set()  # ids of the fills whose mid may still change
        self._rows: dict[str, OrderRow] = {}  # order id -> its row as last published
        #: One poll or "load more" changes the list and publishes it at a time (a publish
        #: runs in slices, and one begun on the older list must not land after a newer one).
        self._publishing = asyncio.Lock()
        self._unsubscribe: list[Callable[[], None]] = [
            fills.subscribe(lambda _: self.poller.refresh())
        ]

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self.poller.start()

    async def stop(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        await self.poller.stop()

    # -- what the trader does -------------------------------------------------------------------

    @property
    def filter(self) -> OrderFilter:
        return self._state.filter

    def set_filter(self, wanted: OrderFilter) -> None:
        """Start over with ``wanted`` (ValueError when it is invalid): the list empties and the
        newest page is read at once."""
        wanted.validate()
        self._state = _FeedState(self._state.generation + 1, wanted)
        self.updates.publish(self._snapshot_now(reset=True, loading=True))  # empty: at once
        self.poller.refresh()

    def refresh(self) -> None:
        self.poller.refresh()

    def use_mids(self, store: Callable[[], MidHistory], **options: Any) -> FillMids:
        """Give every fill its mid at fill from ``store`` (the chart's history; asked for each
        look-up), frozen in the journal once settled (read back from there ever after).
        ``options``: ``FillMids``'s ``now`` and ``tolerance``."""
        clock = self.client.clock
        self.mids = FillMids(
            store, lambda: clock.offset, facts=self.journal, account=self.account, **options
        )
        return self.mids

    @property
    def active(self) -> bool:
        return self._active

    def set_active(self, active: bool) -> None:
        """A list nobody sees need not be read: while inactive, polls send nothing; becoming
        active polls at once."""
        self._active = active
        if active:
            self.poller.refresh()

    async def load_more(self) -> int:
        """Read the page before the oldest order loaded; returns how many orders it added.
        ReadFailed when the service cannot be read; the list stays as it was."""
        state = self._state
        if not state.loaded or state.cursor is None or not state.more:
            return 0
        try:
            page, more = await self._page(state.filter, state.cursor)
        except ServiceError as exc:
            raise ReadFailed(str(exc)) from exc
        async with self._publishing:
            if state is not self._state:
                return 0  # the filter changed meanwhile
            added = [order for order in page if order.order_id not in state.orders]
            state.put(page)
            state.more = more
            state.cursor = self._next_cursor(page, state.cursor)
            await self._publish()
        return len(added)

    def snapshot(self) -> OrdersSnapshot:
        """The list as it stands, at once (``updates`` get it in slices)."""
        return self._snapshot_now()

    def _snapshot_now(self, **changes: Any) -> OrdersSnapshot:
        snapshot = run_now(self._snapshot_steps(**changes))
        assert snapshot is not None  # nothing can change the filter while it runs
        return snapshot

    # -- polling --------------------------------------------------------------------------------

    async def _poll(self) -> None:
        if not self._active:
            return
        state = self._state
        head, more = await self._page(state.filter, None)
        refreshed = await self._refresh_open(state, {order.order_id for order in head})
        async with self._publishing:
            await self._merge(state, head, more, refreshed)

    async def _merge(
        self, state: _FeedState, head: list[Order], more: bool, refreshed: list[Order]
    ) -> None:
        """A poll's newest page and re-read resting orders into the list, published."""
        if state is not self._state:
            return  # the filter changed while reading: the next poll reads the new one
        if not state.loaded:
            state.replace(head)
            state.loaded, state.more = True, more
            state.cursor = self._next_cursor(head, None)
            await self._publish(reset=True)
            return
        new = [order for order in head if order.order_id not in state.orders]
        if head and len(new) == len(head) and more:
            # More new orders than a page: nothing connects them to what is shown. Start over.
            top = state.orders[state.keys[-1][2]] if state.keys else None
            state.replace(head)
            state.more, state.cursor = more, self._next_cursor(head, None)
            fresh = {o.order_id for o in head if top is None or newest_first(o) > newest_first(top)}
            await self._publish(reset=True, new_ids=frozenset(fresh))
            return
        filled = {
            order.order_id
            for order in [*head, *refreshed]
            if order.order_id in state.orders
            and order.filled
            and not state.orders[order.order_id].filled
        }
        changed = state.put([*head, *refreshed])
        if state.cursor is None:
            state.cursor = self._next_cursor(head, None)
            changed = changed or state.more != more
            state.more = more
        if not changed and not self._economics_moved():
            return  # nothing new: the view keeps what it has
        await self._publish(
            new_ids=frozenset(order.order_id for order in new), filled_ids=frozenset(filled)
        )

    def _economics_moved(self) -> bool:
        """Whether the mid at fill of a fill of the last seconds, not settled when the list
        was published, has been found, changed or settled since (then it is published again;
        a settled list costs nothing here)."""
        if self.mids is None or not self.mids.unsettled:
            return False
        orders = self._state.orders
        waiting = [orders[order_id] for order_id in self._unsettled if order_id in orders]
        now = self.mids.of(waiting, tuple(self._pairs()))
        return any(
            economics != self._economics.get(order_id) for order_id, economics in now.items()
        )

    async def _refresh_open(self, state: _FeedState, seen: set[str]) -> list[Order]:
        """Re-read resting orders the newest page did not include, a few per poll, the ones
        re-read longest ago first (newest first among equals): with more than a poll's worth
        resting, every one of them comes round (the newest few were re-read every time, and
        a fill on an older one never showed). One the service no longer knows stops resting
        here (it stays listed as last read)."""
        stale = [state.orders[order_id] for order_id in state.resting - seen]
        stale.sort(key=order_key, reverse=True)
        stale.sort(key=lambda order: state.reread.get(order.order_id, 0))
        found = []
        for order in stale[:OPEN_REFRESH_PER_POLL]:
            state.rereads += 1
            state.reread[order.order_id] = state.rereads
            try:
                found.append(await self.client.order(order.order_id))
            except NotFound:
                state.resting.discard(order.order_id)
                continue
            except ServiceError as exc:
                log.info("cannot re-read order %s: %s", order.order_id, exc)
                break
        return found

    async def _page(self, wanted: OrderFilter, cursor: int | None) -> tuple[list[Order], bool]:
        """The newest ``page_size`` orders at or below ``cursor`` matching the server part of
        ``wanted``, newest first, and whether older ones may exist."""
        found: dict[str, Order] = {}
        more = False
        for branch in wanted.branches():
            page = await self.client.orders(
                self.page_size,
                submitted_start=wanted.start,
                submitted_end=wanted.end,
                order_type=wanted.order_type or None,
                status=wanted.status or None,
                start_at_ordering=cursor,
                source=branch.get("source"),
                destination=branch.get("destination"),
            )
            more = more or len(page) >= self.page_size
            for order in page:
                found[order.order_id] = order
        merged = sorted(found.values(), key=newest_first, reverse=True)
        if len(merged) > self.page_size:
            merged, more = merged[: self.page_size], True
        return merged, more and all(order.ordering is not None for order in merged)

    @staticmethod
    def _next_cursor(page: list[Order], current: int | None) -> int | None:
        orderings = [order.ordering for order in page if order.ordering is not None]
        return min(orderings) - 1 if orderings else current

    # -- publishing -------------------------------------------------------------------------------

    def _client_order_id(self, order: Order) -> str:
        """The server's echo, else the journal's id for this order (the journal is read again
        at most once per update, and only when an order's id is missing)."""
        if order.client_order_id:
            return order.client_order_id
        if order.order_id not in self._journal_ids and not self._journal_read:
            self._journal_read = True
            if self.journal is not None:
                account = self.account
                self._journal_ids = {
                    entry.order_id: entry.client_order_id
                    for entry in self.journal.entries(limit=JOURNAL_LOOKBACK)
                    if entry.order_id and entry.account == account
                }
        return self._journal_ids.get(order.order_id, "")

    def _snapshot_steps(
        self,
        *,
        reset: bool = False,
        loading: bool = False,
        new_ids: frozenset[str] = frozenset(),
        filled_ids: frozenset[str] = frozenset(),
    ) -> Steps[OrdersSnapshot | None]:
        """The snapshot in steps of ``STEP_ORDERS``: at 100,000 orders, made at once it held
        the loop 135–630 ms per publish. A row whose order, economics, pairs and client id are
        those of the last publish is the same ``OrderRow`` (its pair terms computed once, its
        cells not formatted again by the table). None, and nothing kept, when the filter
        changed meanwhile: the new filter's list follows."""
        state = self._state
        self._journal_read = False
        matches = state.filter.matches
        orders = state.orders
        shown: list[Order] = []
        for number, (_, _, order_id) in enumerate(reversed(state.keys), 1):
            order = orders[order_id]
            if matches(order):
                shown.append(order)
            if number % STEP_ORDERS == 0:
                yield
                if state is not self._state:
                    return None
        pairs = tuple(self._pairs())
        economics: dict[str, FillEconomics] = {}
        if self.mids is not None:
            economics = yield from self.mids.of_steps(shown, pairs)
        last, kept = self._rows, dict[str, OrderRow]()
        rows: list[OrderRow] = []
        for number, order in enumerate(shown, 1):
            order_id = order.order_id
            its = economics.get(order_id)
            row = last.get(order_id)
            if (
                row is None
                or row.order is not order
                or row.economics != its
                or row.pairs != pairs
                # an id the server does not echo: the journal may know it now
                or (not row.client_order_id and self._client_order_id(order))
            ):
                row = OrderRow(order, self._client_order_id(order), pairs, its)
            rows.append(row)
            kept[order_id] = row
            if number % STEP_ORDERS == 0:
                yield
                if state is not self._state:
                    return None
        self._economics = economics
        self._unsettled = {key for key, value in economics.items() if not value.final}
        self._rows = kept
        return OrdersSnapshot(
            tuple(rows),
            state.filter,
            frozenset(i for i in new_ids if i in kept),
            frozenset(i for i in filled_ids if i in kept),
            reset,
            state.more and state.cursor is not None,
            loading,
        )

    async def _publish(self, **changes: Any) -> None:
        """Publish the list, made in slices; dropped when the filter changed meanwhile (the
        new filter's list is published instead)."""
        state = self._state
        snapshot = await sliced(self._snapshot_steps(**changes))
        if snapshot is not None and state is self._state:
            self.updates.publish(snapshot)
