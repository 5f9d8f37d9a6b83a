"""The ledger: Get Transactions with every filter of the seed, paged backwards, the legs of a
trade kept together, and a running balance when one asset is shown.

Every filter goes to the server as the seed names it: ``asset``, ``type`` (eventType),
``transactionId``, ``startTimeUtc`` (inclusive), ``endTimeUtc`` (exclusive),
``startAtOrdering`` and ``max`` (required; 1 to 10,000). Paging follows the service's reading
of the seed (``app.services.ledger_pages``): ``max`` counted in transactions or in entries,
pages newest first or oldest first. Rows are newest first either way; "load more" reads on
from the far end of the last page (older entries, or newer ones from an oldest-first service),
entries already loaded dropped by ``entry_key``, a trade's legs that a page boundary split
paired when the second arrives; a page that brings nothing new ends the paging with a note
(``LedgerSnapshot.paging_note``). ``refresh`` adds the entries newer than the newest one
loaded (only for a query without an upper bound).

Running balance (``LedgerQuery.balance_possible``: one asset, no type or transaction filter):
the balance after the newest entry loaded is anchored on the account's holding of that asset
(free + locked, which equals the ledger's sum) minus the entries newer than it; the account is
read between two reads of the asset's newest ordering, and again if they differ, so the holding
and the ledger describe the same moment. Older entries walk back from there, one amount at a
time, so paging back costs no extra request; newer pages move the anchor up by their amounts.

Grouping is a pass over every loaded entry (100,000 at a time in a long session): above
``SLICED_ENTRIES`` entries it runs as a sliced job (``group_steps`` under
``app.services.slices.sliced``: a few ms of work per turn of the event loop, over a copy of the
list), and so does "load more"'s check for entries already loaded, so a page never stalls the
terminal. "Load more" groups only the page it adds below, unless the page continues a trade
that the last one split (then everything is grouped again, sliced).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, localcontext

from app.api import ServiceError
from app.domain.errors import InputError
from app.domain.money import MONEY_CONTEXT
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import KNOWN_EVENT_TYPES, LedgerEntry
from app.services.errors import ReadFailed
from app.services.feed_inputs import LedgerReader, PairNames
from app.services.ledger_pages import (
    IDLE_PAGES,
    STALLED_NOTE,
    EntryKey,
    LedgerFilter,
    LedgerOrder,
    LedgerPages,
    Page,
    entry_key,
    newest_first,
    newest_first_steps,
)
from app.services.slices import Steps, run_now, sliced

MAX_TRANSACTIONS = 10_000
DEFAULT_MAX = 100
EVENT_TYPES = tuple(sorted(KNOWN_EVENT_TYPES))
#: Tries to read the account and the ledger at the same moment for the running balance.
ANCHOR_TRIES = 3
#: Grouping more entries than this runs sliced (below it, a few ms at once).
SLICED_ENTRIES = 2000
#: Entries per step of a sliced job.
STEP_ENTRIES = 200


class LedgerQueryError(InputError):
    """A query that cannot be sent; ``field`` names the input to fix."""


@dataclass(frozen=True)
class LedgerQuery:
    """Get Transactions' filters; empty strings and None mean "any"."""

    max_transactions: int = DEFAULT_MAX
    asset: str = ""
    event_type: str = ""
    transaction_id: str = ""
    start: datetime | None = None  # inclusive
    end: datetime | None = None  # exclusive
    start_at_ordering: int | None = None  # where the pages begin (the service reads the way)

    def validate(self) -> None:
        if not 1 <= self.max_transactions <= MAX_TRANSACTIONS:
            raise LedgerQueryError("max", f"max is 1 to {MAX_TRANSACTIONS:,} transactions")
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise LedgerQueryError("end", "the start of the time range must be before its end")
        if self.start_at_ordering is not None and self.start_at_ordering < 0:
            raise LedgerQueryError("start_at_ordering", "an ordering is a whole number ≥ 0")

    @property
    def balance_possible(self) -> bool:
        """A running balance needs every entry of one asset: no type or transaction filter."""
        return bool(self.asset) and not self.event_type and not self.transaction_id

    @property
    def open_ended(self) -> bool:
        """No upper bound: newer entries belong on top (refresh)."""
        return self.end is None and self.start_at_ordering is None


@dataclass(frozen=True)
class LedgerRow:
    entry: LedgerEntry
    group: int  # the transaction group (both legs of a trade share it), 0 = newest
    position: int  # 0-based place of the entry within its group
    size: int  # entries in the group
    balance: Decimal | None  # the asset's balance after this entry, when known
    trade: Trade | None = None  # the trade both legs make, in pair terms (trade legs only)

    @property
    def linked(self) -> bool:
        """One of several legs of the same transaction."""
        return self.size > 1


@dataclass(frozen=True)
class LedgerSnapshot:
    rows: tuple[LedgerRow, ...]
    query: LedgerQuery
    more: bool  # "load more" may find older entries
    added: int = 0  # entries this update added (on top for a refresh, at the bottom for more)
    balance_note: str = ""  # why there is no running balance, when there is none
    reset: bool = False  # a new query: the rows replace what was shown
    older: bool = True  # "load more" reads older entries (False: newer, an oldest-first service)
    paging_note: str = ""  # why paging stopped early, when it did


def leg_trade(legs: list[LedgerEntry], known_pairs: Iterable[str] = ()) -> Trade | None:
    """The trade two legs make, in pair terms ("Buy BTC/USD" at QUOTE per BASE): the
    ``source`` leg paid, the ``destination`` leg received. None for anything else."""
    paid = [leg for leg in legs if leg.event_type == "trade" and leg.sub_event_type == "source"]
    got = [leg for leg in legs if leg.event_type == "trade" and leg.sub_event_type == "destination"]
    if len(legs) != 2 or len(paid) != 1 or len(got) != 1 or paid[0].asset == got[0].asset:
        return None
    pair_side = PairSide.of(paid[0].asset, got[0].asset, known_pairs)
    sold, received = abs(paid[0].amount), abs(got[0].amount)
    base, quote = (sold, received) if pair_side.side == "sell" else (received, sold)
    if not base:
        return None
    return Trade(pair_side, base, quote)


def group_rows(
    entries: list[LedgerEntry], anchor: Decimal | None, known_pairs: Iterable[str] = ()
) -> tuple[LedgerRow, ...]:
    """Rows for ``entries`` (newest first): adjacent entries with the same ordering and
    transaction id form one group; ``anchor`` is the balance after the first entry; a trade's
    legs carry the trade in pair terms (``known_pairs`` decide the base)."""
    return run_now(group_steps(entries, anchor, known_pairs))


def group_steps(
    entries: list[LedgerEntry],
    anchor: Decimal | None,
    known_pairs: Iterable[str] = (),
    first_group: int = 0,
) -> Steps[tuple[LedgerRow, ...]]:
    """``group_rows`` as a job: a step per ``STEP_ENTRIES`` entries; groups are numbered from
    ``first_group`` (rows that continue rows already grouped)."""
    groups: list[list[LedgerEntry]] = []
    for number, entry in enumerate(entries):
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and last.ordering == entry.ordering
            and last.transaction_id == entry.transaction_id
        ):
            groups[-1].append(entry)
        else:
            groups.append([entry])
        if number % (STEP_ENTRIES * 10) == 0:
            yield
    rows = []
    balance = anchor
    names = tuple(known_pairs)
    for number, members in enumerate(groups):
        with localcontext(MONEY_CONTEXT):
            trade = leg_trade(members, names)
            for position, entry in enumerate(members):
                group = first_group + number
                rows.append(LedgerRow(entry, group, position, len(members), balance, trade))
                if balance is not None:
                    balance -= entry.amount
        if number % STEP_ENTRIES == 0:
            yield
    return tuple(rows)


@dataclass
class _BrowserState:
    query: LedgerQuery = field(default_factory=LedgerQuery)
    entries: list[LedgerEntry] = field(default_factory=list)
    cursor: int | None = None
    more: bool = False
    anchor: Decimal | None = None  # balance after entries[0]
    note: str = ""
    rows: tuple[LedgerRow, ...] = ()  # the rows of entries[:len(rows)], when grouped already
    #: ``entry_key`` of every entry, kept as entries come: "load more" checks a page against it
    #: instead of building the set of 100,000 keys again (and freeing it, 7–10 ms in one step).
    keys: set[EntryKey] = field(default_factory=set)
    order: LedgerOrder = LedgerOrder.NEWEST_FIRST  # the way the pages run
    paging_note: str = ""


class LedgerBrowser:
    """Reads the ledger of ``client``'s account page by page (``pairs``: the service's pairs,
    which pair a trade's legs). Each method returns the new snapshot; ReadFailed when the
    service cannot be read (the loaded entries stay). A load that a newer one overtook is
    dropped, so the last query asked is the one shown."""

    def __init__(self, client: LedgerReader, pairs: PairNames) -> None:
        self.client = client
        self._pairs = pairs
        self._pages = LedgerPages(client)
        self._state = _BrowserState()
        self._loads = 0

    @property
    def query(self) -> LedgerQuery:
        return self._state.query

    def snapshot(self, added: int = 0, *, reset: bool = False) -> LedgerSnapshot:
        state = self._state
        rows = group_rows(state.entries, state.anchor, self._pairs())
        return self._snapshot_of(rows, added, reset)

    def _snapshot_of(self, rows: tuple[LedgerRow, ...], added: int, reset: bool) -> LedgerSnapshot:
        state = self._state
        return LedgerSnapshot(
            rows,
            state.query,
            state.more and state.cursor is not None,
            added,
            state.note,
            reset,
            state.order is LedgerOrder.NEWEST_FIRST,
            state.paging_note,
        )

    async def _snapshot(self, added: int = 0, *, reset: bool = False) -> LedgerSnapshot:
        """``snapshot``, grouped as a sliced job when there are many entries; entries appended
        by "load more" are grouped on their own, after the rows already grouped, unless the
        first of them continues the last transaction shown (a page that split a trade), so a
        page costs its own size, not the whole ledger's."""
        state = self._state
        if len(state.entries) <= SLICED_ENTRIES:
            snapshot = self.snapshot(added, reset=reset)
            state.rows = snapshot.rows
            return snapshot
        pairs = tuple(self._pairs())
        done = state.rows
        entries = list(state.entries)
        if done and len(done) <= len(entries) and _continues(done, entries):
            last = done[-1]
            with localcontext(MONEY_CONTEXT):
                balance = None if last.balance is None else last.balance - last.entry.amount
            tail = entries[len(done) :]
            rows = done + await sliced(group_steps(tail, balance, pairs, last.group + 1))
        else:
            rows = await sliced(group_steps(entries, state.anchor, pairs))
        state.rows = rows
        return self._snapshot_of(rows, added, reset)

    async def load(self, query: LedgerQuery) -> LedgerSnapshot:
        """The first page of ``query`` (LedgerQueryError when it is invalid): the newest
        entries, or from a service that answers oldest first, the oldest."""
        query.validate()
        self._loads += 1
        ticket = self._loads
        try:
            page = await self._page(query, query.start_at_ordering)
            state = _BrowserState(query, cursor=page.next_start, more=page.full, order=page.order)
            state.entries = await _keep_keys(state.keys, await _newest_first(page.entries))
            if state.entries and query.balance_possible:
                state.anchor = await self._anchor(query.asset, state.entries[0].ordering)
        except ServiceError as exc:
            raise ReadFailed(str(exc)) from exc
        if ticket != self._loads:
            return await self._snapshot()  # a newer load was asked for meanwhile
        state.note = _note(query, state.anchor, bool(state.entries))
        self._state = state
        return await self._snapshot(len(state.entries), reset=True)

    async def load_more(self) -> LedgerSnapshot:
        """The next page: older entries, or newer ones from a service that answers oldest
        first (nothing when there is none)."""
        state = self._state
        if not state.more or state.cursor is None:
            return await self._snapshot()
        return await self._advance(state)

    async def _advance(self, state: _BrowserState) -> LedgerSnapshot:
        """Read on from ``state.cursor`` until a page adds entries (a page that sat at one
        ordering steps past it, ``IDLE_PAGES`` at most); a full page of entries already
        shown ends the paging with a note instead of asking for it again and again."""
        fresh: list[LedgerEntry] = []
        full = False
        for _ in range(IDLE_PAGES):
            cursor = state.cursor
            try:
                page = await self._page(state.query, cursor)
            except ServiceError as exc:
                raise ReadFailed(str(exc)) from exc
            if state is not self._state:
                return await self._snapshot()
            fresh = await _keep_keys(state.keys, await _newest_first(page.entries))
            if state is not self._state:
                return await self._snapshot()
            following, full = page.next_start, page.full
            moved = following is not None and _onward(page.order, cursor, following)
            state.more = full and moved
            if moved:
                state.cursor, state.order = following, page.order
            if fresh or not state.more:
                break
        if not fresh and full:
            state.more = False
            state.paging_note = STALLED_NOTE
        self._merge(state, fresh)
        return await self._snapshot(len(fresh))

    def _merge(self, state: _BrowserState, fresh: list[LedgerEntry]) -> None:
        """``fresh`` (newest first) into the entries, newest first: older ones below, newer
        ones on top (the running balance's anchor moves up over them). Where they meet at one
        ordering (a trade a page split), only the entries of that ordering are sorted again."""
        entries = state.entries
        if not fresh:
            return
        if not entries or fresh[0].ordering <= entries[-1].ordering:
            cut, meet = len(entries), fresh[0].ordering
            while cut and entries[cut - 1].ordering == meet:
                cut -= 1
            joined = _joined(fresh, meet)
            entries[cut:] = newest_first([*entries[cut:], *fresh[:joined]])
            entries += fresh[joined:]
            return
        top = entries[0].ordering
        if state.anchor is not None:
            with localcontext(MONEY_CONTEXT):
                newer = (entry.amount for entry in fresh if entry.ordering > top)
                state.anchor += sum(newer, Decimal(0))
        if fresh[-1].ordering >= top:
            cut = 0
            while cut < len(entries) and entries[cut].ordering == top:
                cut += 1
            joined = len(fresh) - _joined(fresh[::-1], top)
            entries[:cut] = [*fresh[:joined], *newest_first([*fresh[joined:], *entries[:cut]])]
        else:
            entries[:] = newest_first([*entries, *fresh])
        state.rows = ()  # groups renumber from the new top

    async def refresh(self) -> LedgerSnapshot:
        """Entries newer than the newest loaded go on top (open-ended queries; others are read
        again); when more than a page arrived, the query starts over. From a service that
        answers oldest first, the pages go on up from the newest loaded."""
        state = self._state
        if not state.query.open_ended or not state.entries:
            return await self.load(state.query)
        if state.order is LedgerOrder.OLDEST_FIRST:
            if state.cursor is None or not state.more:
                state.cursor = state.entries[0].ordering
                state.more = True
            return await self._advance(state)
        top = state.entries[0].ordering
        try:
            page = await self._page(state.query, None)
        except ServiceError as exc:
            raise ReadFailed(str(exc)) from exc
        if state is not self._state:
            return await self._snapshot()
        entries = await _newest_first(page.entries)
        newer = [e for e in entries if e.ordering >= top and entry_key(e) not in state.keys]
        if page.full and len(newer) == len(entries):
            return await self.load(state.query)  # a gap: more new entries than a page
        self._merge(state, newer)
        state.keys.update(entry_key(entry) for entry in newer)
        return await self._snapshot(len(newer))

    async def _page(self, query: LedgerQuery, start_at: int | None) -> Page:
        return await self._pages.page(query.max_transactions, start_at, _filter(query))

    async def _anchor(self, asset: str, top: int) -> Decimal | None:
        """The asset's balance just after ordering ``top``; None when the account and the
        ledger could not be read at one moment (the newest ordering, read before and after
        the account, differs)."""
        pages, where = self._pages, LedgerFilter(asset=asset)
        for _ in range(ANCHOR_TRIES):
            head = await pages.newest(where, floor=top)
            above: list[LedgerEntry] = []
            if head is not None and head > top:
                found = await pages.read_from(top, MAX_TRANSACTIONS, where)
                above = [entry for entry in found if entry.ordering > top]
            account = await self.client.account()
            floor = top if head is None else max(head, top)
            if await pages.newest(where, floor=floor) != head:
                continue  # the ledger moved while the account was read
            balance = account.balances.get(asset)
            with localcontext(MONEY_CONTEXT):
                holding = Decimal(0) if balance is None else balance.free + balance.locked
                return holding - sum((entry.amount for entry in above), Decimal(0))
        return None


def _joined(entries: list[LedgerEntry], ordering: int) -> int:
    """How many of ``entries`` lead with ``ordering``."""
    count = 0
    while count < len(entries) and entries[count].ordering == ordering:
        count += 1
    return count


async def _newest_first(page: list[LedgerEntry]) -> list[LedgerEntry]:
    """``newest_first_steps``: sliced for a big page, at once for a small one."""
    steps = newest_first_steps(page)
    return await sliced(steps) if len(page) > STEP_ENTRIES else run_now(steps)


def _filter(query: LedgerQuery) -> LedgerFilter:
    return LedgerFilter(
        query.asset or None,
        query.event_type or None,
        query.transaction_id or None,
        query.start,
        query.end,
    )


def _onward(order: LedgerOrder, cursor: int | None, following: int) -> bool:
    """Whether ``following`` lies beyond ``cursor`` in ``order`` (None: the first page)."""
    if cursor is None:
        return True
    return following < cursor if order is LedgerOrder.NEWEST_FIRST else following > cursor


def _continues(rows: tuple[LedgerRow, ...], entries: list[LedgerEntry]) -> bool:
    """Whether ``rows`` are the rows of ``entries``' first entries and the next entry starts a
    new transaction."""
    count = len(rows)
    if rows[0].entry is not entries[0] or rows[-1].entry is not entries[count - 1]:
        return False
    if count == len(entries):
        return True
    last, following = entries[count - 1], entries[count]
    return (last.ordering, last.transaction_id) != (following.ordering, following.transaction_id)


async def _keep_keys(keys: set[EntryKey], page: list[LedgerEntry]) -> list[LedgerEntry]:
    """``_fresh``: sliced for a big page, at once for a small one."""
    steps = _fresh(keys, page)
    return await sliced(steps) if len(page) > STEP_ENTRIES else run_now(steps)


def _fresh(keys: set[EntryKey], page: list[LedgerEntry]) -> Steps[list[LedgerEntry]]:
    """The entries of ``page`` whose key is not in ``keys`` (added to it as they are found)."""
    fresh: list[LedgerEntry] = []
    for start in range(0, len(page), STEP_ENTRIES):
        for entry in page[start : start + STEP_ENTRIES]:
            key = entry_key(entry)
            if key not in keys:
                keys.add(key)
                fresh.append(entry)
        yield
    return fresh


def _note(query: LedgerQuery, anchor: Decimal | None, any_entries: bool) -> str:
    if not query.asset:
        return "Running balance: choose one asset"
    if query.event_type or query.transaction_id:
        return "Running balance: clear the type and transaction filters"
    if any_entries and anchor is None:
        return "Running balance: the account kept changing; refresh to try again"
    return ""
