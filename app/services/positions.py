"""Positions and P&L, the service: the account's whole ledger, the unit values its
entries need, the book (``app.domain.positions``), a local cache and the CSV of the table.

**The ledger.** Read in pages of ``page_size`` (``app.services.ledger_pages``: ``max`` counted
as entries or as transactions; pages newest first down to the newest ordering already cached,
or oldest first up from it, as the service answers), each entry once. Quantity = the ledger's
sum = free + locked.

**Unit values of the time** (valuation currency per unit), for every entry that needs one
(``marks_needed``: deposits, withdrawals, initial balances and other flows not in the valuation
currency, and both legs of a cross), first that applies:

1. a cost the trader entered for that transaction and asset (``set_cost``);
2. the mark recorded when the terminal first saw the entry: the service has no price history,
   so the first time an entry is seen without a value, the current top-of-book mid, valued as
   the balances total is (``valuation_rate``: the direct pair, the inverse, one hop through USD
   then USDT), is written to the cache with the time it was seen and used from then on —
   restarts and rebuilds included. A terminal that runs while money moves sees each entry
   within a refresh of its time; entries older than the terminal (initial balances, deposits
   made before its first start) enter at the first mark it saw, i.e. the day positions were
   first computed. The trader can correct any of them with an entered cost;
3. none: no market values the asset now either; the entry stays unpriced (its asset's cost
   figures are blank) and a mark is looked for again at the next refresh.

Trades with a leg in the valuation currency need no mark: that leg's amount is their value.

**The cache** (SQLite, ``positions.db`` in the user data directory, folder 0700, file 0600)
holds, per service and account: the ledger entries read so far (so a restart reads only the
new ones), the marks first seen (per valuation currency) and the costs entered. Each refresh
checks it against the service: the cached newest entry must still be on the ledger as cached,
and every asset's cached + new sum must equal the account's free + locked read at the same
moment (the ledger's newest ordering read again after the account). When either disagrees
(another database behind the same name, a reset sandbox, a damaged file) the entries are
dropped and the whole ledger is read again; marks and costs are kept (their keys include the
entry's ordering and time, so a different ledger never matches them).

``today`` is the start of the trader's local day; ``since`` a moment the trader chooses.
"""

from __future__ import annotations

import asyncio
import csv
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from itertools import islice
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from app.api import ServiceError
from app.domain import format_decimal, format_timestamp, parse_timestamp, utc_now
from app.domain.positions import (
    BOOK_CONTEXT,
    STEP_ENTRIES,
    CostMethod,
    Event,
    MarkKey,
    PositionBook,
    PositionsTable,
    Steps,
    book_steps,
    event_steps,
    finish,
    marks_needed,
)
from app.domain.records import Account, Balances, LedgerEntry, TopOfBook
from app.domain.valuation import valuation_rate
from app.services.errors import ReadFailed
from app.services.events import Topic
from app.services.feed_inputs import MarketReader, PairNames, Subscribable
from app.services.ledger_pages import LedgerPages
from app.services.market import MarketSnapshot
from app.services.session import Environment
from app.services.slices import sliced

#: Transactions per ledger page (the service's maximum).
PAGE_SIZE = 10_000
#: Tries to read the account and the ledger at one moment before leaving a refresh unchecked.
SYNC_TRIES = 3
#: Cache rows per statement batch, and how long a write runs before it commits and lets the
#: loop turn (s): 250 rows took about 0.5 ms.
WRITE_BATCH = 250
WRITE_SLICE_S = 0.002
SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    service TEXT NOT NULL, account TEXT NOT NULL, ordering INTEGER NOT NULL,
    transaction_id TEXT NOT NULL, asset TEXT NOT NULL, sub_event_type TEXT NOT NULL,
    amount TEXT NOT NULL, event_type TEXT NOT NULL, event_time TEXT NOT NULL,
    PRIMARY KEY (service, account, ordering, transaction_id, asset, sub_event_type)
);
CREATE TABLE IF NOT EXISTS marks (
    service TEXT NOT NULL, account TEXT NOT NULL, currency TEXT NOT NULL,
    ordering INTEGER NOT NULL, transaction_id TEXT NOT NULL, asset TEXT NOT NULL,
    event_time TEXT NOT NULL, unit TEXT NOT NULL, seen_at TEXT NOT NULL,
    PRIMARY KEY (service, account, currency, ordering, transaction_id, asset, event_time)
);
CREATE TABLE IF NOT EXISTS costs (
    service TEXT NOT NULL, account TEXT NOT NULL, currency TEXT NOT NULL,
    transaction_id TEXT NOT NULL, asset TEXT NOT NULL, unit TEXT NOT NULL,
    PRIMARY KEY (service, account, currency, transaction_id, asset)
);
"""


def default_cache_path() -> Path:
    return Path(platformdirs.user_data_dir("tradeterm", appauthor=False)) / "positions.db"


def service_key(environment: Environment) -> str:
    """The cache's name for a service: ``sandbox`` for the embedded one (its port changes every
    start, its database stays), else the host and port."""
    if environment.sandbox:
        return "sandbox"
    where = urlsplit(environment.base_url)
    return "".join(c if c.isalnum() or c in ".-:" else "_" for c in where.netloc) or "service"


@dataclass(frozen=True)
class FirstMark:
    """A mark recorded when the terminal first saw an entry."""

    unit: Decimal
    seen_at: datetime


class PositionsCache:
    """The local cache: ledger entries read, marks first seen, costs entered."""

    def __init__(self, path: Path | str | None = None) -> None:
        target = Path(path) if path is not None else default_cache_path()
        if str(target) != ":memory:":
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            target.parent.chmod(0o700)
            if not target.exists():
                target.touch(mode=0o600)  # private before its first byte: it holds the ledger
            target.chmod(0o600)
        self._path = None if str(target) == ":memory:" else target
        self._db = sqlite3.connect(str(target), isolation_level=None)
        if self._path is not None:
            # WAL: a commit appends to the log (0.16 ms median, 0.46 ms at most here, durable:
            # synchronous stays FULL, as costs entered and first marks are not read again
            # from the service); a rollback-journal commit took up to 20 ms. The WAL is copied
            # back by ``checkpoint`` off the GUI thread, not by the commit that fills it
            # (8–9 ms each 4 MB during a 100,000-entry write). WAL files get the database
            # file's mode (0600) from SQLite. Where WAL is refused, the default journal is kept.
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() == "wal":
                self._db.execute("PRAGMA wal_autocheckpoint = 0")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def checkpoint(self) -> None:
        """Copy the WAL back into the database file, on a connection of its own: meant for a
        worker thread (``asyncio.to_thread``); PASSIVE, so it never waits for or blocks the
        GUI thread's connection."""
        if self._path is None:
            return
        with closing(sqlite3.connect(str(self._path), isolation_level=None)) as db:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _write(self, statements: Iterable[tuple[str, tuple[object, ...]]]) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for sql, args in statements:
                self._db.execute(sql, args)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _write_steps(self, sql: str, rows: Iterable[tuple[object, ...]]) -> Steps[None]:
        """``sql`` for each of ``rows`` in batches of ``WRITE_BATCH``, committed and handed back
        to the loop every ``WRITE_SLICE_S``: no transaction stays open across a step (a cost
        entered meanwhile writes between two), and what a crash leaves is a prefix of what was
        written, which the next refresh's checks find and complete or rebuild."""
        batches = iter(rows)
        while True:
            started = time.perf_counter()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                while batch := list(islice(batches, WRITE_BATCH)):
                    self._db.executemany(sql, batch)
                    if time.perf_counter() - started >= WRITE_SLICE_S:
                        break
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            if not batch:
                return
            yield

    def _drop_entry_steps(self, service: str, account: str) -> Steps[None]:
        """The account's cached entries deleted a batch at a time, newest first (one statement
        for 100,000 rows held the loop 68 ms): what a crash leaves is the oldest part, a
        prefix of the ledger as cached, which the next refresh checks like any other."""
        while True:
            gone = self._db.execute(
                "DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries "
                "WHERE service = ? AND account = ? ORDER BY ordering DESC LIMIT ?)",
                (service, account, WRITE_BATCH * 4),
            ).rowcount
            if gone < WRITE_BATCH * 4:
                return
            yield

    def entries(self, service: str, account: str) -> list[LedgerEntry]:
        """The cached entries in ledger order."""
        return finish(self.entry_steps(service, account))

    def entry_steps(self, service: str, account: str) -> Steps[list[LedgerEntry]]:
        """``entries`` in steps of ``STEP_ENTRIES`` rows (100,000 take about a second)."""
        rows = self._db.execute(
            "SELECT ordering, transaction_id, asset, amount, event_type, sub_event_type, "
            "event_time FROM entries WHERE service = ? AND account = ? "
            "ORDER BY ordering, transaction_id, sub_event_type DESC, asset",
            (service, account),
        )
        found: list[LedgerEntry] = []
        while batch := rows.fetchmany(STEP_ENTRIES):
            found += [
                LedgerEntry(o, account, tx, asset, Decimal(amount), kind, sub, parse_timestamp(t))
                for o, tx, asset, amount, kind, sub, t in batch
            ]
            yield
        return found

    def add_entries(self, service: str, account: str, entries: Iterable[LedgerEntry]) -> None:
        finish(self.add_entry_steps(service, account, entries))

    def add_entry_steps(
        self, service: str, account: str, entries: Iterable[LedgerEntry]
    ) -> Steps[None]:
        """``entries`` written in steps (100,000 held the loop 0.45 s written at once)."""
        yield from self._write_steps(INSERT_ENTRY, _entry_rows(service, account, entries))

    def replace_entry_steps(
        self, service: str, account: str, entries: Iterable[LedgerEntry]
    ) -> Steps[None]:
        """The account's entries dropped and ``entries`` written, in steps."""
        yield from self._drop_entry_steps(service, account)
        yield from self.add_entry_steps(service, account, entries)

    def marks(self, service: str, account: str, currency: str) -> dict[MarkKey, FirstMark]:
        return finish(self.mark_steps(service, account, currency))

    def mark_steps(
        self, service: str, account: str, currency: str
    ) -> Steps[dict[MarkKey, FirstMark]]:
        """``marks`` in steps of ``STEP_ENTRIES`` rows (each parses two times and a Decimal)."""
        rows = self._db.execute(
            "SELECT ordering, transaction_id, asset, event_time, unit, seen_at FROM marks "
            "WHERE service = ? AND account = ? AND currency = ?",
            (service, account, currency),
        )
        found: dict[MarkKey, FirstMark] = {}
        while batch := rows.fetchmany(STEP_ENTRIES):
            for o, tx, asset, t, u, seen in batch:
                found[MarkKey(o, tx, asset, parse_timestamp(t))] = FirstMark(
                    Decimal(u), parse_timestamp(seen)
                )
            yield
        return found

    def record_marks(
        self, service: str, account: str, currency: str, marks: Mapping[MarkKey, FirstMark]
    ) -> None:
        finish(self.record_mark_steps(service, account, currency, marks))

    def record_mark_steps(
        self, service: str, account: str, currency: str, marks: Mapping[MarkKey, FirstMark]
    ) -> Steps[None]:
        """Keep the first mark of each key: one already recorded is never replaced."""
        yield from self._write_steps(
            "INSERT OR IGNORE INTO marks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    service,
                    account,
                    currency,
                    key.ordering,
                    key.transaction_id,
                    key.asset,
                    format_timestamp(key.time),
                    format_decimal(mark.unit),
                    format_timestamp(mark.seen_at),
                )
                for key, mark in marks.items()
            ),
        )

    def costs(self, service: str, account: str, currency: str) -> dict[tuple[str, str], Decimal]:
        """Costs entered by the trader: (transaction id, asset) -> unit cost."""
        rows = self._db.execute(
            "SELECT transaction_id, asset, unit FROM costs "
            "WHERE service = ? AND account = ? AND currency = ?",
            (service, account, currency),
        )
        return {(tx, asset): Decimal(unit) for tx, asset, unit in rows}

    def set_cost(
        self,
        service: str,
        account: str,
        currency: str,
        transaction_id: str,
        asset: str,
        unit: Decimal | None,
    ) -> None:
        """Enter (or with None, forget) the trader's unit cost of one transaction's asset."""
        key = (service, account, currency, transaction_id, asset)
        if unit is None:
            sql = (
                "DELETE FROM costs WHERE service = ? AND account = ? AND currency = ? "
                "AND transaction_id = ? AND asset = ?"
            )
            self._write([(sql, key)])
        else:
            sql = "INSERT OR REPLACE INTO costs VALUES (?, ?, ?, ?, ?, ?)"
            self._write([(sql, (*key, format_decimal(unit)))])


INSERT_ENTRY = "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _entry_rows(
    service: str, account: str, entries: Iterable[LedgerEntry]
) -> Iterator[tuple[object, ...]]:
    """The cache's rows of ``entries``, made as they are written (formatting 100,000 took
    0.24 s)."""
    for e in entries:
        yield (
            service,
            account,
            e.ordering,
            e.transaction_id,
            e.asset,
            e.sub_event_type,
            format_decimal(e.amount),
            e.event_type,
            format_timestamp(e.event_time),
        )


@dataclass(frozen=True)
class UnitValue:
    """The unit value an entry entered at: ``cost`` (entered by the trader) or ``first mark``
    (recorded when first seen, at ``seen_at``)."""

    unit: Decimal
    source: str
    seen_at: datetime | None = None


@dataclass(frozen=True)
class PositionsReport:
    """The positions table and how it was made."""

    table: PositionsTable
    last_ordering: int | None  # the newest ledger entry counted
    fetched: int  # entries newer than the cache read from the service by this refresh
    rebuilt: bool  # the cache disagreed with the ledger and was read again in full
    verified: bool  # the holdings were checked against the account's balances
    values: Mapping[MarkKey, UnitValue]  # every entry that needed a value, and what it got
    unpriced: tuple[MarkKey, ...]  # entries no value could be found for


def local_day_start(moment: datetime) -> datetime:
    """Midnight of ``moment``'s day on this machine's clock, as an aware datetime."""
    local = moment.astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


class PositionsService:
    """The positions of one account, derived from its ledger.

    ``refresh`` reads the service (ReadFailed when it cannot: the last report stays valid) and
    returns the new report. Between refreshes the service follows the market itself
    (``market``: the session's ``market.changed``): every new top of book re-values the last
    book (no request, no pass over the ledger) and the report is published on ``reports``,
    while ``active`` (a view that nobody sees needs none). ``report`` makes one at once.

    ``moved`` says the ledger has moved since the last refresh, so a refresh is due: a fill
    (``fills``), or balances whose holdings no longer match the book (a deposit or a
    withdrawal credited). When to read is the view's choice (it reads only while shown)."""

    def __init__(
        self,
        client: MarketReader,
        cache: PositionsCache,
        *,
        service: str,
        account: str,
        pairs: PairNames,
        market: Subscribable[MarketSnapshot] | None = None,
        fills: Subscribable[None] | None = None,
        currency: str = "USD",
        method: CostMethod = CostMethod.AVERAGE,
        page_size: int = PAGE_SIZE,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.client = client
        self.cache = cache
        self.currency = currency
        self.method = method
        self.page_size = page_size
        self._now = now
        self.service = service
        self.account = account
        self._pairs = pairs
        self._pages = LedgerPages(client)
        self._fetched_pairs: list[str] = []  # read here when the session knows none
        self._entries: list[LedgerEntry] = []
        self._books: dict[str, TopOfBook] = {}
        self._last: tuple[int, bool, bool] = (0, False, False)  # fetched, rebuilt, verified
        self._lock = asyncio.Lock()
        self._needed: list[MarkKey] = []
        self._values: dict[MarkKey, UnitValue] = {}
        self._book = PositionBook(currency, method)
        self._refreshed = False
        self.active = True
        self.since: datetime | None = None  # the "since" day of the reports published
        #: The book re-valued at each new top of book, after the first refresh.
        self.reports: Topic[PositionsReport] = Topic("positions")
        self.moved: Topic[None] = Topic("positions.moved")
        self._balances: Balances | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        if market is not None:
            self._unsubscribe.append(market.subscribe(self._on_market))
        if fills is not None:
            self._unsubscribe.append(fills.subscribe(lambda _: self.moved.publish(None)))

    def close(self) -> None:
        """Stop following the market and the fills."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    def _on_market(self, snapshot: MarketSnapshot) -> None:
        if snapshot.balances is not None and snapshot.balances is not self._balances:
            self._balances = snapshot.balances
            if self._refreshed and not self._holds(snapshot.balances):
                self.moved.publish(None)
        if not snapshot.tops or snapshot.tops.items() <= self._books.items():
            return  # no price moved (a balances answer)
        # A poll may carry only the watched pairs: newer prices over those already known.
        self._books.update(snapshot.tops)
        if self._refreshed and self.active:
            self.reports.publish(self.report(since=self.since))

    def _holds(self, balances: Balances) -> bool:
        """Whether the book's quantities are the account's free + locked, asset by asset."""
        rows = {asset: quantity for asset, (quantity, _) in self._book.positions().items()}
        held = {a: b.free + b.locked for a, b in balances.account.balances.items()}
        return all(rows.get(a, 0) == held.get(a, 0) for a in {*rows, *held})

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """The ledger entries the book was made from, in ledger order."""
        return tuple(self._entries)

    @property
    def book(self) -> PositionBook:
        """The book as of the last refresh (or cost, method or currency change)."""
        return self._book

    # -- reading ------------------------------------------------------------------------------

    async def refresh(
        self, *, today: datetime | None = None, since: datetime | None = None
    ) -> PositionsReport:
        """Read the new ledger entries (checking the cache), the current prices, and record
        the first marks of entries seen for the first time. One refresh at a time.
        ``since`` is kept for the reports published between refreshes."""
        self.since = since
        async with self._lock:
            try:
                await self._sync()
                self._books = await self._top_of_book()
            except ServiceError as exc:
                raise ReadFailed(str(exc)) from exc
            events = await sliced(event_steps(self._entries))
            await sliced(self._record_first_marks(events))
            await sliced(self._rebuild_steps(events))
            self._refreshed = True
        return self.report(today=today, since=since)

    async def rebuild(self) -> None:
        """The book made again in slices of the event loop (after ``set_*`` with
        ``rebuild=False``): 100,000 entries take about a second, which must not freeze the
        terminal. After the refresh under way, if one is."""
        async with self._lock:
            events = await sliced(event_steps(self._entries))
            await sliced(self._rebuild_steps(events))

    def report(
        self, *, today: datetime | None = None, since: datetime | None = None
    ) -> PositionsReport:
        """The table at the newest prices known (the refresh's, and the market's since): a
        re-valuation of the last book, no request and no pass over the ledger (cheap enough
        for every tick)."""
        book = self._book
        marks = {a: valuation_rate(a, self.currency, self._books) for a in book.assets}
        table = book.table(marks, today=today or local_day_start(self._now()), since=since)
        fetched, rebuilt, verified = self._last
        return PositionsReport(
            table,
            self._entries[-1].ordering if self._entries else None,
            fetched,
            rebuilt,
            verified,
            self._values,
            tuple(key for key in self._needed if key not in self._values),
        )

    def set_cost(
        self, transaction_id: str, asset: str, unit: Decimal | None, *, rebuild: bool = True
    ) -> None:
        """The trader's unit cost (valuation currency per unit) of one transaction's asset,
        kept in the cache; None goes back to the first mark seen. ``rebuild=False``: the
        caller awaits ``rebuild()`` (in slices) instead of a rebuild here and now."""
        self.cache.set_cost(self.service, self.account, self.currency, transaction_id, asset, unit)
        if rebuild:
            self._rebuild()

    def set_method(self, method: CostMethod, *, rebuild: bool = True) -> None:
        """Another cost method (a setting): the book is made again from the same entries."""
        self.method = method
        if rebuild:
            self._rebuild()

    def set_currency(self, currency: str, *, rebuild: bool = True) -> None:
        """Another valuation currency: entries get their first marks in it at the next
        refresh (marks are kept per currency; until then they are unpriced)."""
        self.currency = currency
        if rebuild:
            self._rebuild()

    def _rebuild(self) -> None:
        """The book from the entries read and the unit values known now, at once."""
        finish(self._rebuild_steps(finish(event_steps(self._entries))))

    def _rebuild_steps(self, events: list[Event]) -> Steps[None]:
        needed = marks_needed(events, self.currency)
        values = yield from self._unit_values(needed)
        yield
        units = {key: value.unit for key, value in values.items()}
        book = yield from book_steps(events, self.currency, self.method, units)
        self._needed, self._values, self._book = needed, values, book

    def _unit_values(self, needed: list[MarkKey]) -> Steps[dict[MarkKey, UnitValue]]:
        costs = self.cache.costs(self.service, self.account, self.currency)
        first = yield from self.cache.mark_steps(self.service, self.account, self.currency)
        values: dict[MarkKey, UnitValue] = {}
        for number, key in enumerate(needed, 1):
            cost = costs.get((key.transaction_id, key.asset))
            if cost is not None:
                values[key] = UnitValue(cost, "cost")
            elif key in first:
                values[key] = UnitValue(first[key].unit, "first mark", first[key].seen_at)
            if number % STEP_ENTRIES == 0:
                yield
        return values

    def _record_first_marks(self, events: list[Event]) -> Steps[None]:
        """The current mark of every entry that needs one and has none yet, written in steps."""
        first = yield from self.cache.mark_steps(self.service, self.account, self.currency)
        seen_at = self._now()
        fresh: dict[MarkKey, FirstMark] = {}
        for number, key in enumerate(marks_needed(events, self.currency), 1):
            if key not in first:
                unit = valuation_rate(key.asset, self.currency, self._books)
                if unit is not None:
                    fresh[key] = FirstMark(unit, seen_at)
            if number % STEP_ENTRIES == 0:
                yield
        if not fresh:
            return
        yield from self.cache.record_mark_steps(self.service, self.account, self.currency, fresh)

    async def _top_of_book(self) -> dict[str, TopOfBook]:
        """Every pair's top of book, read with the ledger: a first mark is kept for good, and
        the market's polls carry only the watched pairs (an asset valued through a pair
        nobody watches would get no mark at all)."""
        pairs = list(self._pairs()) or self._fetched_pairs
        if not pairs:
            self._fetched_pairs = pairs = [str(info.pair) for info in await self.client.pairs()]
        return await self.client.top_of_book(pairs)

    # -- the ledger and the cache ---------------------------------------------------------------

    async def _sync(self) -> None:
        cached = await sliced(self.cache.entry_steps(self.service, self.account))
        entries, fresh, agreed, verified = await self._read_newer(cached)
        rebuilt = not agreed
        if agreed:
            await sliced(self.cache.add_entry_steps(self.service, self.account, fresh))
        else:
            entries, fresh, agreed, verified = await self._read_newer([])
            verified = verified and agreed  # the ledger itself disagrees with the balances
            await sliced(self.cache.replace_entry_steps(self.service, self.account, entries))
        await asyncio.to_thread(self.cache.checkpoint)
        self._entries = entries
        self._last = (len(fresh), rebuilt, verified)

    async def _read_newer(
        self, known: list[LedgerEntry]
    ) -> tuple[list[LedgerEntry], list[LedgerEntry], bool, bool]:
        """``known`` and the entries newer than it: (all, new, agreed, verified)."""
        entries, fresh = list(known), list[LedgerEntry]()
        for _ in range(SYNC_TRIES):
            top = entries[-1].ordering if entries else None
            page = await self._pages.read_from(top, self.page_size)
            if top is not None and not _same(
                [e for e in page if e.ordering == top], [e for e in entries if e.ordering == top]
            ):
                return entries, fresh, False, False
            newer = sorted(
                (e for e in page if top is None or e.ordering > top),
                key=lambda e: (e.ordering, e.transaction_id, e.sub_event_type != "source"),
            )
            entries += newer
            fresh += newer
            account = await self.client.account()
            newest = entries[-1].ordering if entries else None
            if await self._pages.newest(floor=newest) == newest:
                agreed = await sliced(_holdings_agree(entries, account))
                return entries, fresh, agreed, True
        return entries, fresh, True, False  # the ledger kept moving: checked next time


def _identity(entry: LedgerEntry) -> tuple[str, str, str, Decimal, str, datetime]:
    return (
        entry.transaction_id,
        entry.asset,
        entry.sub_event_type,
        entry.amount,
        entry.event_type,
        entry.event_time,
    )


def _same(read: list[LedgerEntry], cached: list[LedgerEntry]) -> bool:
    return sorted(map(_identity, read)) == sorted(map(_identity, cached))


def _holdings_agree(entries: list[LedgerEntry], account: Account) -> Steps[bool]:
    """Every asset's ledger sum equals the account's free + locked (in steps)."""
    sums: dict[str, Decimal] = {}
    for start in range(0, len(entries), STEP_ENTRIES):
        with localcontext(BOOK_CONTEXT):
            for entry in entries[start : start + STEP_ENTRIES]:
                sums[entry.asset] = sums.get(entry.asset, Decimal(0)) + entry.amount
        yield
    with localcontext(BOOK_CONTEXT):
        held = {a: b.free + b.locked for a, b in account.balances.items()}
    return all(sums.get(a, 0) == held.get(a, 0) for a in {*sums, *held})


# -- CSV ----------------------------------------------------------------------------------------


def csv_rows(table: PositionsTable) -> list[list[str]]:
    """The table as CSV cells: a header naming the valuation currency and the cost method,
    one row per asset, a totals row; every number exact (plain decimal text), unknown empty."""
    cur = table.currency
    method = "FIFO" if table.method is CostMethod.FIFO else "average cost"
    since = "ever" if table.since is None else format_timestamp(table.since)
    header = [
        "Asset",
        "Quantity",
        f"Average cost ({cur}, {method})",
        f"Cost basis ({cur}, {method})",
        f"Mark ({cur})",
        f"Market value ({cur})",
        f"Unrealised P&L ({cur})",
        f"Realised P&L today since {format_timestamp(table.today)} ({cur})",
        f"Realised P&L since {since} ({cur})",
        f"Realised P&L total ({cur})",
        "Share of portfolio",
    ]
    rows = [header]
    for row in table.rows:
        rows.append(
            [
                row.asset,
                *map(
                    _text,
                    (
                        row.quantity,
                        row.average_cost,
                        row.cost_basis,
                        row.mark,
                        row.market_value,
                        row.unrealised,
                        row.realised_today,
                        row.realised_since,
                        row.realised_total,
                        row.share,
                    ),
                ),
            ]
        )
    totals = table.totals
    rows.append(
        [
            "Total",
            "",
            "",
            _text(totals.cost_basis),
            "",
            _text(totals.market_value),
            _text(totals.unrealised),
            _text(totals.realised_today),
            _text(totals.realised_since),
            _text(totals.realised_total),
            "1" if totals.market_value > 0 else "",
        ]
    )
    return rows


def _text(value: Decimal | None) -> str:
    return "" if value is None else format_decimal(value)


def write_csv(table: PositionsTable, path: Path) -> int:
    """Write the table to ``path`` (UTF-8, RFC 4180 quoting); returns the asset rows written.
    Blocking: run it off the GUI thread."""
    rows = csv_rows(table)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return len(rows) - 2
