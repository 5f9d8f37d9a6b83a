"""The audit trail: the order journal as a record of the session — every order and
quote accept this terminal sent, with its intent time, send time, last update, outcome and the
server's ids, in the trader's words, so a trader or a compliance officer can reconstruct what
was sent and what became of it.

It reads the journal only (``app.services.journal``), never the server: the journal is written
before each request leaves and updated with its outcome, so it is the terminal's own account of
what it sent, a lost answer included (``unknown``, until the settling service finds the order).

A read is bounded: newest first, at most ``query.limit`` rows, and at most ``MAX_SCAN`` entries
examined for a text search. On a journal file it runs off the GUI thread (``asyncio.to_thread``
with a read-only connection of its own); an in-memory journal (tests) is read in place.

Times are this machine's wall clock as journaled, shown to the millisecond in UTC and in local
time (``utc_ms``, ``local_ms``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from app.domain.display import Precision
from app.domain.pair_terms import PairSide, Trade
from app.services.desks import TradingDesks
from app.services.events import Topic
from app.services.journal import (
    FILL,
    JournalEntry,
    OrderJournal,
    read_facts,
    reading,
    search_entries,
)
from app.services.unknown_outcomes import describe

#: Rows read at first, and added by each "Load more".
PAGE = 500
#: The most rows one read returns (the ledger's page limit too).
MAX_ROWS = 10_000
#: The most journal entries one read examines (a text search that matches little stays bounded).
MAX_SCAN = 100_000

KINDS = ("market", "limit", "accept")
#: Every status the journal writes, in the trader's words.
OUTCOMES = {
    "sending": "sending — no answer yet",
    "filled": "filled",
    "submitted": "resting (submitted)",
    "canceled": "canceled",
    "rejected": "refused by the service",
    "failed": "failed",
    "unknown": "unknown — answer lost",
    "dismissed": "dismissed while unknown",
}
KIND_WORDS = {"market": "market order", "limit": "limit order", "accept": "RFQ accept"}


def utc_ms(moment: datetime | None) -> str:
    """``2026-01-02T03:04:05.123Z`` (milliseconds, truncated); "" for no time."""
    if moment is None:
        return ""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def local_ms(moment: datetime | None) -> str:
    """``2026-01-02 04:04:05.123`` in this machine's time zone; "" for no time."""
    if moment is None:
        return ""
    return moment.astimezone().isoformat(sep=" ", timespec="milliseconds")[:23]


def local_ms_iso(moment: datetime | None) -> str:
    """``2026-01-02T04:04:05.123+01:00``: local time with its offset (exports, details)."""
    if moment is None:
        return ""
    return moment.astimezone().isoformat(timespec="milliseconds")


def both_times(label: str, moment: datetime | None) -> list[tuple[str, str]]:
    """``label (UTC)`` and ``label (local)`` with ``moment`` to the ms: each time of an entry
    is given both ways."""
    return [(f"{label} (UTC)", utc_ms(moment)), (f"{label} (local)", local_ms_iso(moment))]


@dataclass(frozen=True)
class AuditQuery:
    """What the trail shows: ``status`` and ``kind`` exactly when given, ``text`` (every word,
    any case) in the row's words, ids, detail or body, and an intent time from ``since``
    (inclusive) to ``until`` (exclusive)."""

    status: str = ""
    kind: str = ""
    text: str = ""
    since: datetime | None = None
    until: datetime | None = None
    limit: int = PAGE

    def validate(self) -> None:
        """ValueError, in words, for a query that cannot be read."""
        if self.status and self.status not in OUTCOMES:
            raise ValueError(f"no such outcome: {self.status}")
        if self.kind and self.kind not in KINDS:
            raise ValueError(f"no such kind: {self.kind}")
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ValueError("the start time must be before the end time")
        if not 1 <= self.limit <= MAX_ROWS:
            raise ValueError(f"between 1 and {MAX_ROWS:,} rows")

    @property
    def words(self) -> list[str]:
        return self.text.casefold().split()


@dataclass(frozen=True)
class AuditRow:
    """One journal entry as the trail shows it."""

    client_order_id: str
    kind: str  # "market", "limit", "accept"
    account: str
    what: str  # the trader's words: "Buy BTC for 100 USD (market)", "Accept the buy of quote …"
    intent_at: datetime  # journaled before anything was sent
    sent_at: datetime | None  # when the request left (None: never left, or not recorded)
    updated_at: datetime  # the entry's last change (the outcome, a look-up, a dismissal)
    status: str  # the journal's status
    order_id: str  # the server's order id ("" when none is known)
    detail: str  # the server's or the terminal's words about the outcome
    body: str  # the exact JSON text sent (an order) or journaled (an accept)

    @classmethod
    def of(cls, entry: JournalEntry, known_pairs: Iterable[str], precision: Precision) -> AuditRow:
        return cls(
            entry.client_order_id,
            entry.kind,
            entry.account,
            describe(entry, known_pairs, precision),
            entry.created_at,
            entry.sent_at,
            entry.updated_at,
            entry.status,
            entry.order_id,
            entry.detail,
            entry.body,
        )

    @property
    def outcome(self) -> str:
        """The status in the trader's words."""
        return OUTCOMES.get(self.status, self.status)

    def fields(self) -> list[tuple[str, str]]:
        """Every field with its exact text (details, copy): times in UTC and local, to the ms."""
        return [
            ("what", self.what),
            ("status", self.status),
            ("outcome", self.outcome),
            ("kind", self.kind),
            ("account", self.account),
            ("clientOrderId", self.client_order_id),
            ("orderId", self.order_id),
            *both_times("intent time", self.intent_at),
            *both_times("send time", self.sent_at),
            *both_times("last update", self.updated_at),
            ("detail", self.detail),
            ("body sent", self.body),
        ]

    def matches(self, words: Sequence[str]) -> bool:
        if not words:
            return True
        haystack = "\n".join(
            (
                self.what,
                self.status,
                self.outcome,
                self.kind,
                self.account,
                self.client_order_id,
                self.order_id,
                self.detail,
                self.body,
            )
        ).casefold()
        return all(word in haystack for word in words)


@dataclass(frozen=True)
class AuditPage:
    """The rows one read found, newest first."""

    query: AuditQuery
    rows: tuple[AuditRow, ...]
    more: bool  # older entries may match: the limit (or the scan bound) was reached
    scanned: int  # journal entries examined


FactReader = Callable[[str, list[str]], dict[str, dict[str, Any]]]


def fill_words(amounts: Mapping[str, Any], known_pairs: Sequence[str], precision: Precision) -> str:
    """A journaled fill (``journal.FILL``: the order's size and total) as every view says it:
    ``Sold 0.1 BTC at an average fill price of 90,999.60 USD (received 9,099.96 USD)``."""
    try:
        source, destination = str(amounts["source"]), str(amounts["destination"])
        sold, received = Decimal(str(amounts["size"])), Decimal(str(amounts["total"]))
    except (KeyError, InvalidOperation):
        return ""
    if not sold or not received:
        return ""
    pair_side = PairSide.of(source, destination, known_pairs)
    base, quote = (sold, received) if pair_side.side == "sell" else (received, sold)
    return Trade(pair_side, base, quote).sentence(precision)


def collect(
    entries: Iterator[JournalEntry],
    query: AuditQuery,
    known_pairs: Sequence[str],
    precision: Precision,
    facts: FactReader | None = None,
) -> AuditPage:
    """The first ``query.limit`` entries matching the query's text, reading at most
    ``MAX_SCAN``; a filled entry without other words gets its fill's sentence (``facts``: the
    journal's) as its detail."""
    words = query.words
    rows: list[AuditRow] = []
    scanned = 0
    more = False
    for entry in entries:
        if len(rows) >= query.limit or scanned >= MAX_SCAN:
            more = True
            break
        scanned += 1
        row = AuditRow.of(entry, known_pairs, precision)
        if row.matches(words):
            rows.append(row)
    if facts is not None:
        wanted = [row.order_id for row in rows if row.status == "filled" and not row.detail]
        fills = facts(FILL, wanted) if wanted else {}
        rows = [
            replace(row, detail=fill_words(fills[row.order_id], known_pairs, precision))
            if row.order_id in fills and not row.detail
            else row
            for row in rows
        ]
    return AuditPage(query, tuple(rows), more, scanned)


class AuditTrail:
    """Reads the journal for the audit trail. ``sources``: the topics whose every value means
    the journal changed (the desks' results, the unknown outcomes): a view reads again then."""

    def __init__(self, journal: OrderJournal, sources: Sequence[Topic[Any]] = ()) -> None:
        self.journal = journal
        self.sources = tuple(sources)

    @classmethod
    def of(cls, desks: TradingDesks) -> AuditTrail:
        """The trail of the desks' journal, read again on each of their results."""
        return cls(
            desks.journal,
            (desks.orders.results, desks.rfq.history, desks.outcomes.changed),
        )

    async def read(
        self, query: AuditQuery, known_pairs: Iterable[str], precision: Precision
    ) -> AuditPage:
        """The page ``query`` asks for (ValueError for an invalid query); a journal file is
        read on a worker thread, with copies of the pairs and precision."""
        query.validate()
        pairs = tuple(known_pairs)
        mine = Precision(dict(precision.assets), dict(precision.prices))
        path = self.journal.path
        if path is None:
            return self.read_now(query, pairs, mine)
        return await asyncio.to_thread(_read_file, path, query, pairs, mine)

    def read_now(
        self, query: AuditQuery, known_pairs: Iterable[str], precision: Precision
    ) -> AuditPage:
        """The same read on this thread (an in-memory journal; the command line)."""
        query.validate()
        entries = self.journal.search(
            status=query.status, kind=query.kind, since=query.since, until=query.until
        )
        return collect(entries, query, tuple(known_pairs), precision, self.journal.facts)


def _read_file(
    path: Path, query: AuditQuery, known_pairs: Sequence[str], precision: Precision
) -> AuditPage:
    with reading(path) as db:
        entries = search_entries(
            db, status=query.status, kind=query.kind, since=query.since, until=query.until
        )
        return collect(
            entries, query, known_pairs, precision, lambda name, ids: read_facts(db, name, ids)
        )
