"""The ledger: Get Transactions with every filter of the seed, paged backwards, the legs of a
trade kept together, and a running balance when one asset is shown.

Every filter goes to the server as the seed names it: ``asset``, ``type`` (eventType),
``transactionId``, ``startTimeUtc`` (inclusive), ``endTimeUtc`` (exclusive),
``startAtOrdering`` and ``max`` (required; 1 to 10,000 transactions — both legs of a trade
share one ordering and count once). Results are newest first; "load more" asks for the entries
below the oldest ordering loaded (``startAtOrdering`` = that ordering − 1). ``refresh`` adds
the entries newer than the newest one loaded (only for a query without an upper bound).

Running balance (``LedgerQuery.balance_possible``: one asset, no type or transaction filter):
the balance after the newest entry loaded is anchored on the account's holding of that asset
(free + locked, which equals the ledger's sum) minus the entries newer than it; the account is
read between two reads of the asset's newest ordering, and again if they differ, so the holding
and the ledger describe the same moment. Older entries walk back from there, one amount at a
time, so paging back costs no extra request.

Grouping is a pass over every loaded entry (100,000 at a time in a long session): above
``SLICED_ENTRIES`` entries it runs as a sliced job (``group_steps`` under
``app.services.slices.sliced``: a few ms of work per turn of the event loop, over a copy of the
list), and so does "load more"'s check for entries already loaded, so a page never stalls the
terminal. "Load more" groups only the page it adds (a page never splits a trade).
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
    start_at_ordering: int | None = None  # newest first: entries at or below it

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
    #: ``_key`` of every entry, kept as entries come: "load more" checks a page against it
    #: instead of building the set of 100,000 keys again (and freeing it, 7–10 ms in one step).
    keys: set[tuple[int, str, str, str]] = field(default_factory=set)


class LedgerBrowser:
    """Reads the ledger of ``client``'s account page by page (``pairs``: the service's pairs,
    which pair a trade's legs). Each method returns the new snapshot; ReadFailed when the
    service cannot be read (the loaded entries stay). A load that a newer one overtook is
    dropped, so the last query asked is the one shown."""

    def __init__(self, client: LedgerReader, pairs: PairNames) -> None:
        self.client = client
        self._pairs = pairs
        self._state = _BrowserState()
        self._loads = 0

    @property
    def query(self) -> LedgerQuery:
        return self._state.query

    def snapshot(self, added: int = 0, *, reset: bool = False) -> LedgerSnapshot:
        state = self._state
        return LedgerSnapshot(
            group_rows(state.entries, state.anchor, self._pairs()),
            state.query,
            state.more and state.cursor is not None,
            added,
            state.note,
            reset,
        )

    async def _snapshot(self, added: int = 0, *, reset: bool = False) -> LedgerSnapshot:
        """``snapshot``, grouped as a sliced job when there are many entries; entries appended
        by "load more" are grouped on their own, after the rows already grouped (a page never
        splits a trade), so a page costs its own size, not the whole ledger's."""
        state = self._state
        more = state.more and state.cursor is not None
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
        return LedgerSnapshot(rows, state.query, more, added, state.note, reset)

    async def load(self, query: LedgerQuery) -> LedgerSnapshot:
        """The newest page of ``query`` (LedgerQueryError when it is invalid)."""
        query.validate()
        self._loads += 1
        ticket = self._loads
        try:
            entries, more = await self._page(query, query.start_at_ordering)
            state = _BrowserState(query, entries, _below(entries, query.start_at_ordering), more)
            await _keep_keys(state.keys, entries)
            if entries and query.balance_possible:
                state.anchor = await self._anchor(query.asset, entries[0].ordering)
        except ServiceError as exc:
            raise ReadFailed(str(exc)) from exc
        if ticket != self._loads:
            return await self._snapshot()  # a newer load was asked for meanwhile
        state.note = _note(query, state.anchor, bool(entries))
        self._state = state
        return await self._snapshot(len(entries), reset=True)

    async def load_more(self) -> LedgerSnapshot:
        """The page before the oldest entry loaded (nothing when there is none)."""
        state = self._state
        if not state.more or state.cursor is None:
            return await self._snapshot()
        try:
            entries, more = await self._page(state.query, state.cursor)
        except ServiceError as exc:
            raise ReadFailed(str(exc)) from exc
        if state is not self._state:
            return await self._snapshot()
        fresh = await _keep_keys(state.keys, entries)
        if state is not self._state:
            return await self._snapshot()
        state.entries.extend(fresh)
        state.cursor = _below(entries, state.cursor)
        state.more = more
        return await self._snapshot(len(fresh))

    async def refresh(self) -> LedgerSnapshot:
        """Entries newer than the newest loaded go on top (open-ended queries; others are read
        again); when more than a page arrived, the query starts over."""
        state = self._state
        if not state.query.open_ended or not state.entries:
            return await self.load(state.query)
        top = state.entries[0].ordering
        try:
            entries, more = await self._page(state.query, None)
        except ServiceError as exc:
            raise ReadFailed(str(exc)) from exc
        if state is not self._state:
            return await self._snapshot()
        newer = [entry for entry in entries if entry.ordering > top]
        if more and len(newer) == len(entries):
            return await self.load(state.query)  # a gap: more new entries than a page
        if state.anchor is not None:
            with localcontext(MONEY_CONTEXT):
                state.anchor += sum((entry.amount for entry in newer), Decimal(0))
        state.entries[:0] = newer
        state.keys.update(_key(entry) for entry in newer)
        if newer:
            state.rows = ()  # groups renumber from the new top
        return await self._snapshot(len(newer))

    async def _page(
        self, query: LedgerQuery, start_at: int | None
    ) -> tuple[list[LedgerEntry], bool]:
        entries = await self.client.ledger(
            query.max_transactions,
            asset=query.asset or None,
            event_type=query.event_type or None,
            transaction_id=query.transaction_id or None,
            start_at_ordering=start_at,
            start=query.start,
            end=query.end,
        )
        transactions = len({(entry.ordering, entry.transaction_id) for entry in entries})
        return entries, transactions >= query.max_transactions

    async def _anchor(self, asset: str, top: int) -> Decimal | None:
        """The asset's balance just after ordering ``top``; None when the account and the
        ledger could not be read at one moment."""
        client = self.client
        for _ in range(ANCHOR_TRIES):
            before = await client.ledger(1, asset=asset)
            account = await client.account()
            after = await client.ledger(1, asset=asset)
            head = before[0].ordering if before else None
            if head != (after[0].ordering if after else None):
                continue  # the ledger moved while the account was read
            balance = account.balances.get(asset)
            with localcontext(MONEY_CONTEXT):
                holding = Decimal(0) if balance is None else balance.free + balance.locked
                if head is None or head <= top:
                    return holding
                return holding - await self._sum_between(asset, top, head)
        return None

    async def _sum_between(self, asset: str, low: int, high: int) -> Decimal:
        """Sum of the asset's entries with ``low`` < ordering <= ``high``."""
        client = self.client
        total = Decimal(0)
        cursor: int | None = high
        while cursor is not None and cursor > low:
            page = await client.ledger(MAX_TRANSACTIONS, asset=asset, start_at_ordering=cursor)
            with localcontext(MONEY_CONTEXT):
                total += sum((e.amount for e in page if e.ordering > low), Decimal(0))
            cursor = _below(page, None) if len(page) >= MAX_TRANSACTIONS else None
        return total


def _key(entry: LedgerEntry) -> tuple[int, str, str, str]:
    return (entry.ordering, entry.transaction_id, entry.asset, entry.sub_event_type)


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


async def _keep_keys(
    keys: set[tuple[int, str, str, str]], page: list[LedgerEntry]
) -> list[LedgerEntry]:
    """``_fresh``: sliced for a big page, at once for a small one."""
    steps = _fresh(keys, page)
    return await sliced(steps) if len(page) > STEP_ENTRIES else run_now(steps)


def _fresh(
    keys: set[tuple[int, str, str, str]], page: list[LedgerEntry]
) -> Steps[list[LedgerEntry]]:
    """The entries of ``page`` whose key is not in ``keys`` (added to it as they are found)."""
    fresh: list[LedgerEntry] = []
    for start in range(0, len(page), STEP_ENTRIES):
        for entry in page[start : start + STEP_ENTRIES]:
            key = _key(entry)
            if key not in keys:
                keys.add(key)
                fresh.append(entry)
        yield
    return fresh


def _below(entries: list[LedgerEntry], current: int | None) -> int | None:
    """``startAtOrdering`` of the page before ``entries``."""
    return min(entry.ordering for entry in entries) - 1 if entries else current


def _note(query: LedgerQuery, anchor: Decimal | None, any_entries: bool) -> str:
    if not query.asset:
        return "Running balance: choose one asset"
    if query.event_type or query.transaction_id:
        return "Running balance: clear the type and transaction filters"
    if any_entries and anchor is None:
        return "Running balance: the account kept changing; refresh to try again"
    return ""
