"""Get Transactions page by page, whichever way the service reads its paging.

The seed leaves two things open, and a real deployment may read either fairly:

- ``max`` is "the maximum number of transactions": both legs of a trade may count once (the
  sandbox) or each entry may count (a page of 100 entries then holds about 87 transactions and
  may end between a trade's two legs). So a page may continue when it is full in entries OR in
  transactions.
- ``startAtOrdering`` "begins at this ordering": going down (newest first, entries at or
  below it) or up (oldest first, at or above it — and then a query without it starts at the
  oldest entry). The order is read from the page itself (its first and last orderings); a page
  of one ordering cannot tell, so the order a bigger page showed is kept, else the ordering
  asked for and the one answered decide, else newest first (the sandbox's reading).

Only a trade's two legs share an ordering. The next page starts one past the far end of a page
when the transaction there is whole, else at the far end again: a server that counts entries
may have split that trade, and the overlap is dropped by ``entry_key``. A page that sat wholly
at the ordering asked for steps one past it (else it would come again).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.domain.records import LedgerEntry
from app.services.feed_inputs import LedgerReader
from app.services.slices import Steps

#: Entries a probe asks for: at least two orderings whichever way ``max`` counts, when the
#: ledger holds that many (a trade has two legs at one ordering).
PROBE_MAX = 3
#: Entries a page asks for when an oldest-first service is read up to its newest entry.
NEWEST_PAGE = 1_000
#: Pages in a row that may add nothing new (a page that sat at one ordering steps past it)
#: before the reading stops: a server that ignores ``startAtOrdering`` must not spin us.
IDLE_PAGES = 2
#: Entries per step of a job over a page.
STEP_ENTRIES = 200
#: Said when a page brought nothing new and the reading stopped.
STALLED_NOTE = "the service answered entries already read again; paging stopped"

EntryKey = tuple[int, str, str, str]


class LedgerOrder(enum.Enum):
    NEWEST_FIRST = "newest first"
    OLDEST_FIRST = "oldest first"


def entry_key(entry: LedgerEntry) -> EntryKey:
    """What makes an entry itself: the two legs of a trade share ordering and transaction."""
    return (entry.ordering, entry.transaction_id, entry.asset, entry.sub_event_type)


def transactions(entries: Iterable[LedgerEntry]) -> int:
    return len({(entry.ordering, entry.transaction_id) for entry in entries})


def is_full(entries: list[LedgerEntry], max_count: int) -> bool:
    """Whether more may follow: the page is full counted either way the server may count."""
    return len(entries) >= max_count or transactions(entries) >= max_count


def newest_first(entries: Iterable[LedgerEntry]) -> list[LedgerEntry]:
    """``entries`` newest first, a trade's source leg before its destination leg (the two legs
    may come in either order, and on two pages)."""
    return sorted(entries, key=lambda entry: (-entry.ordering, entry.sub_event_type != "source"))


def newest_first_steps(entries: list[LedgerEntry]) -> Steps[list[LedgerEntry]]:
    """``newest_first`` of a page as a job (a step per ``STEP_ENTRIES``): a page comes in one
    order or the other, so one pass turns it (legs of one ordering source first) and a sort
    is left for a page in neither order."""
    ordered = entries[::-1] if entries and entries[0].ordering < entries[-1].ordering else entries
    result: list[LedgerEntry] = []
    run: list[LedgerEntry] = []
    sorted_already = True
    for number, entry in enumerate(ordered):
        if run and entry.ordering != run[0].ordering:
            sorted_already = sorted_already and entry.ordering < run[0].ordering
            result += run if len(run) == 1 else sorted(run, key=_source_last)
            run = []
        run.append(entry)
        if number % STEP_ENTRIES == STEP_ENTRIES - 1:
            yield
    result += run if len(run) <= 1 else sorted(run, key=_source_last)
    return result if sorted_already else newest_first(result)


def _source_last(entry: LedgerEntry) -> bool:
    return entry.sub_event_type != "source"


def in_order(entries: Iterable[LedgerEntry], order: LedgerOrder) -> list[LedgerEntry]:
    """``entries`` in ``order``; a trade's source leg first either way."""
    if order is LedgerOrder.NEWEST_FIRST:
        return newest_first(entries)
    return sorted(entries, key=lambda entry: (entry.ordering, entry.sub_event_type != "source"))


@dataclass(frozen=True)
class LedgerFilter:
    """Get Transactions' filters other than ``max`` and ``startAtOrdering``."""

    asset: str | None = None
    event_type: str | None = None
    transaction_id: str | None = None
    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True)
class Page:
    entries: list[LedgerEntry]  # as the service answered
    asked_at: int | None  # the startAtOrdering sent
    order: LedgerOrder  # its own, else the last one a page showed, else newest first
    full: bool  # more may follow in ``order``
    one_asset: bool = False  # the query named one asset: a trade shows one leg

    @property
    def next_start(self) -> int | None:
        """``startAtOrdering`` of the page after this one in its order (None: no entries): one
        past the far end when the transaction there is whole, else the far end again."""
        if not self.entries:
            return None
        orderings = [entry.ordering for entry in self.entries]
        asked = self.asked_at
        if self.order is LedgerOrder.NEWEST_FIRST:
            low = min(orderings)
            if (asked is not None and low >= asked) or self.whole(low):
                return low - 1
            return low
        high = max(orderings)
        if (asked is not None and high <= asked) or self.whole(high):
            return high + 1
        return high

    def whole(self, ordering: int) -> bool:
        """Whether the page holds every entry at ``ordering``: only a trade's two legs share
        one, so anything but a trade is whole, and so is a trade with both legs (or the one
        leg a query of one asset can show)."""
        at = [entry for entry in self.entries if entry.ordering == ordering]
        if any(entry.event_type != "trade" for entry in at) or self.one_asset:
            return True
        return {entry.sub_event_type for entry in at} >= {"source", "destination"}


def shown_order(entries: list[LedgerEntry], asked_at: int | None) -> LedgerOrder | None:
    """The order ``entries`` came in, when they show it."""
    if not entries:
        return None
    first, last = entries[0].ordering, entries[-1].ordering
    if first != last:
        return LedgerOrder.NEWEST_FIRST if first > last else LedgerOrder.OLDEST_FIRST
    if asked_at is not None and first != asked_at:
        return LedgerOrder.NEWEST_FIRST if first < asked_at else LedgerOrder.OLDEST_FIRST
    return None


class LedgerPages:
    """Reads ``reader``'s ledger in pages and remembers the order the service answers in."""

    def __init__(self, reader: LedgerReader) -> None:
        self.reader = reader
        self.order: LedgerOrder | None = None  # None until a page showed it

    async def page(
        self, max_count: int, start_at: int | None, where: LedgerFilter = LedgerFilter()
    ) -> Page:
        entries = await self.reader.ledger(
            max_count,
            asset=where.asset,
            event_type=where.event_type,
            transaction_id=where.transaction_id,
            start_at_ordering=start_at,
            start=where.start,
            end=where.end,
        )
        shown = shown_order(entries, start_at)
        if shown is not None:
            self.order = shown
        order = shown or self.order or LedgerOrder.NEWEST_FIRST
        full = is_full(entries, max_count)
        return Page(entries, start_at, order, full, where.asset is not None)

    async def newest(
        self, where: LedgerFilter = LedgerFilter(), floor: int | None = None
    ) -> int | None:
        """The newest ordering (None: no entry): one small read from a newest-first service;
        from an oldest-first one, the entries at or above ``floor`` (a known ordering) read up
        to the last."""
        probe = await self.page(PROBE_MAX, None, where)
        if not probe.entries:
            return None
        if not probe.full or probe.order is LedgerOrder.NEWEST_FIRST:
            return max(entry.ordering for entry in probe.entries)
        found = await self.read_up(floor, NEWEST_PAGE, where)
        return max((entry.ordering for entry in found), default=None)

    async def read_up(
        self, floor: int | None, max_count: int, where: LedgerFilter = LedgerFilter()
    ) -> list[LedgerEntry]:
        """Every entry at or above ``floor`` (all when None) from an oldest-first service."""
        found = _Collected()
        start = floor
        while True:
            page = await self.page(max_count, start, where)
            if not found.add(page.entries) or not page.full:
                return found.entries
            following = page.next_start
            if following is None or (start is not None and following <= start):
                return found.entries
            start = following

    async def read_from(
        self, top: int | None, max_count: int, where: LedgerFilter = LedgerFilter()
    ) -> list[LedgerEntry]:
        """Every entry with an ordering at or above ``top`` (the whole ledger when None), each
        once, newest first, in pages of ``max_count``."""
        if self.order is LedgerOrder.OLDEST_FIRST:
            return newest_first(await self.read_up(top, max_count, where))
        found = _Collected()
        start: int | None = None
        while True:
            page = await self.page(max_count, start, where)
            if page.order is LedgerOrder.OLDEST_FIRST:
                return newest_first(await self.read_up(top, max_count, where))
            if not found.add(page.entries) or not page.full:
                break
            low = min(entry.ordering for entry in page.entries)
            if top is not None and (low < top or (low == top and page.whole(top))):
                break  # the entries at ``top`` are whole
            following = page.next_start
            if following is None or (start is not None and following >= start):
                break
            start = following
        return newest_first(
            entry for entry in found.entries if top is None or entry.ordering >= top
        )


class _Collected:
    """Entries read so far, each once; ``add`` says whether a page brought anything new
    (``IDLE_PAGES`` pages in a row without ends it)."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []
        self.keys: set[EntryKey] = set()
        self.idle = 0

    def add(self, page: list[LedgerEntry]) -> bool:
        before = len(self.entries)
        for entry in page:
            key = entry_key(entry)
            if key not in self.keys:
                self.keys.add(key)
                self.entries.append(entry)
        self.idle = 0 if len(self.entries) > before else self.idle + 1
        return bool(page) and self.idle < IDLE_PAGES
