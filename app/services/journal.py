"""The order journal: every order and quote accept is written down before it is sent and
updated with its outcome, in a local SQLite file, so nothing the trader sent is lost from view,
even after a crash. Pure storage: what an open entry became is found out by the settling
service (``app.services.settling``), live and at the next start.

An order's ``request`` is the JSON text of the body the client sent, verbatim
(``OrderRequest.body_text``); an accept's is ``{"orderId": <quote id>, "side": ...}``. Times are
this machine's wall clock (the settler translates them to server time), stored with
microseconds.

Two times per entry: ``created_at``, the intent (written, and synced, before anything is sent),
and ``sent_at``, stamped by ``record_sent`` right before the request leaves (after the desk's
last checks: for an accept, once its last-moment deadline check passed). An entry whose request
never got that far (refused locally) has no ``sent_at``; an entry written by an older version
neither (the column is added to an existing journal on open). A resend of the same clientOrderId
clears it, and the new send stamps it again: ``sent_at`` is the latest send.

Statuses: ``sending`` (written, answer not yet known — a crash leaves it so), ``filled``,
``submitted`` (resting), ``canceled``, ``rejected`` (the server refused it), ``failed`` (never
left this machine, or refused before execution), ``unknown`` (answer lost and not settled).

Frozen facts (table ``facts``): figures about an order or a quote that are computed once, when
they are settled, and must read the same ever after — a fill's mid at fill and its basis points
against it, an RFQ quote's markup at accept or at expiry. One row per (``subject``, ``name``):
the subject is the server's order id (a fill, whether or not this terminal sent it) or the
quote's id; the value is JSON with Decimals as strings. The first write wins (``INSERT OR
IGNORE``): a fact is never recomputed over, so it is identical after a restart. Journals
written before facts were kept get the table when opened; nothing else changes for them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import platformdirs

from app.domain import format_timestamp, parse_timestamp, utc_now
from app.domain.records import Order
from app.services.local_db import MEMORY, open_private, writing

OPEN_STATUSES = ("sending", "unknown")
#: The journal's columns from its first version on (``sent_at`` came later).
FIRST_COLUMNS = """
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_order_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    account TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    order_id TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL"""
SENT_AT_COLUMN = "sent_at TEXT NOT NULL DEFAULT ''"
#: The send time by the server's clock as the client tracked it: what a later look-up reads,
#: since this machine's clock may be stepped between a crash and the next start.
SENT_SERVER_AT_COLUMN = "sent_server_at TEXT NOT NULL DEFAULT ''"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS journal ({FIRST_COLUMNS},
    {SENT_AT_COLUMN},
    {SENT_SERVER_AT_COLUMN}
);
"""
#: Journals written before send times were kept get the columns when opened.
ADD_SENT_AT = f"ALTER TABLE journal ADD COLUMN {SENT_AT_COLUMN}"
ADD_SENT_SERVER_AT = f"ALTER TABLE journal ADD COLUMN {SENT_SERVER_AT_COLUMN}"
#: Frozen facts (see the module); created in journals of every earlier version when opened.
FACTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    subject TEXT NOT NULL,
    name TEXT NOT NULL,
    account TEXT NOT NULL DEFAULT '',
    value TEXT NOT NULL,
    settled_at TEXT NOT NULL,
    PRIMARY KEY (subject, name)
);
"""
#: The fact name of a fill's amounts (``record_order``).
FILL = "fill"
#: Subjects read per query (SQLite's bound on ``?`` parameters is 999 in old builds).
FACTS_PER_READ = 500


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("tradeterm", appauthor=False)) / "journal.db"


@dataclass(frozen=True)
class JournalEntry:
    client_order_id: str
    kind: str  # "limit", "market", "accept"
    account: str
    request: dict[str, Any]  # ``body`` decoded
    created_at: datetime
    status: str
    order_id: str
    detail: str
    updated_at: datetime
    body: str  # the JSON text as written: for an order, exactly the body that was sent
    sent_at: datetime | None = None  # when the request last left (None: not sent, or unknown)
    sent_server_at: datetime | None = None  # the same, by the server's clock (when known)


@dataclass(frozen=True)
class Fact:
    """A settled figure about ``subject`` (an order id or a quote id), stored once."""

    subject: str
    name: str  # e.g. "fill_mid", "rfq_markup_buy"
    value: Mapping[str, Any]  # JSON-encodable; Decimals and times are written as text
    account: str = ""


class OrderJournal:
    def __init__(
        self, path: Path | str | None = None, *, now: Callable[[], datetime] = utc_now
    ) -> None:
        """``now``: the local wall clock the entries are stamped with (injectable so tests can
        run it minutes off, as a machine's clock may be)."""
        self._now = now
        target = Path(path) if path is not None else default_path()
        on_disk = str(target) != MEMORY
        # FULL: an entry must survive a crash of the machine, not only of the terminal
        self._db = open_private(target, synchronous="FULL")
        self._db.executescript(SCHEMA)
        columns = {row["name"] for row in self._db.execute("PRAGMA table_info(journal)")}
        if "sent_at" not in columns:
            self._db.execute(ADD_SENT_AT)
        if "sent_server_at" not in columns:
            self._db.execute(ADD_SENT_SERVER_AT)
        self._db.executescript(FACTS_SCHEMA)
        self.path: Path | None = target if on_disk else None

    def close(self) -> None:
        self._db.close()

    def record_intent(
        self, client_order_id: str, kind: str, account: str, request: str | Mapping[str, Any]
    ) -> None:
        """Written (and synced) before the request leaves. ``request`` is the JSON text sent
        (stored verbatim) or a mapping (encoded here). Sending the same clientOrderId again
        (the same ticket after a lost or failed answer: the server replays, never duplicates)
        marks the existing entry ``sending`` again and keeps its first creation time."""
        if isinstance(request, str):
            json.loads(request)  # ValueError now rather than an unreadable entry later
            text = request
        else:
            text = json.dumps(request, default=_text)
        stamp = format_timestamp(self._now())
        with writing(self._db):
            self._db.execute(
                "INSERT INTO journal (client_order_id, kind, account, request, created_at, "
                "status, updated_at) VALUES (?, ?, ?, ?, ?, 'sending', ?) "
                "ON CONFLICT (client_order_id) DO UPDATE SET status = 'sending', "
                "detail = '', sent_at = '', sent_server_at = '', "
                "updated_at = excluded.updated_at",
                (client_order_id, kind, account, text, stamp, stamp),
            )

    def record_sent(self, client_order_id: str, server_at: datetime | None = None) -> None:
        """The request leaves now (called by the desks right before it goes): its send time,
        distinct from the intent written before the last checks, and ``server_at``, the same
        moment by the server's clock as the client tracks it. Not flushed to disk on its own
        (it must not delay the send; the intent already is): it survives a crash of the
        terminal, and the outcome's write flushes it with itself."""
        stamp = format_timestamp(self._now())
        server = "" if server_at is None else format_timestamp(server_at)
        self._db.execute("PRAGMA synchronous = NORMAL")
        try:
            with writing(self._db):
                self._db.execute(
                    "UPDATE journal SET sent_at = ?, sent_server_at = ? WHERE client_order_id = ?",
                    (stamp, server, client_order_id),
                )
        finally:
            self._db.execute("PRAGMA synchronous = FULL")

    def record_outcome(
        self, client_order_id: str, status: str, *, order_id: str = "", detail: str = ""
    ) -> None:
        stamp = format_timestamp(self._now())
        with writing(self._db):
            self._db.execute(
                "UPDATE journal SET status = ?, order_id = CASE WHEN ? = '' THEN order_id "
                "ELSE ? END, detail = ?, updated_at = ? WHERE client_order_id = ?",
                (status, order_id, order_id, detail, stamp, client_order_id),
            )

    def record_order(self, client_order_id: str, order: Order) -> None:
        """The outcome as the server's order says it; a fill's amounts (what its price is
        computed from, ``app.domain.fill_price``) are kept as the ``FILL`` fact of the order,
        so the audit trail states the fill at the price every other view shows."""
        status = order.result.status or "unknown"
        detail = order.result.error or ""
        self.record_outcome(client_order_id, status, order_id=order.order_id, detail=detail)
        total = order.result.total
        if order.result.status == "filled" and total is not None and order.order_id:
            amounts = {
                "source": order.source,
                "destination": order.destination,
                "size": order.size.value,
                "total": total.value,
            }
            self.record_facts([Fact(order.order_id, FILL, amounts, order.account_id)])

    def record_facts(self, facts: Iterable[Fact]) -> int:
        """Store settled facts; one already stored for the same subject and name is kept as it
        was (a fact is written once). Returns how many were new. Flushed like a send time
        (``synchronous = NORMAL``: it survives a crash of the terminal; it is not an order)."""
        stamp = format_timestamp(self._now())
        rows = [
            (
                fact.subject,
                fact.name,
                fact.account,
                json.dumps(dict(fact.value), default=_text, sort_keys=True),
                stamp,
            )
            for fact in facts
        ]
        if not rows:
            return 0
        self._db.execute("PRAGMA synchronous = NORMAL")
        try:
            with writing(self._db):
                before = self._db.total_changes
                self._db.executemany(
                    "INSERT OR IGNORE INTO facts (subject, name, account, value, settled_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
                return self._db.total_changes - before
        finally:
            self._db.execute("PRAGMA synchronous = FULL")

    def facts(self, name: str, subjects: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored ``name`` facts of ``subjects``, by subject (absent: none stored)."""
        return read_facts(self._db, name, subjects)

    def entry(self, client_order_id: str) -> JournalEntry | None:
        row = self._db.execute(
            "SELECT * FROM journal WHERE client_order_id = ?", (client_order_id,)
        ).fetchone()
        return None if row is None else _entry(row)

    def entries(self, limit: int = 500) -> list[JournalEntry]:
        rows = self._db.execute("SELECT * FROM journal ORDER BY id DESC LIMIT ?", (limit,))
        return [_entry(row) for row in rows]

    def search(
        self,
        *,
        status: str = "",
        kind: str = "",
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Iterator[JournalEntry]:
        """``search_entries`` on this connection (this thread; see ``reading`` for another)."""
        return search_entries(self._db, status=status, kind=kind, since=since, until=until)

    def entries_starting(self, prefix: str) -> list[JournalEntry]:
        """Entries whose clientOrderId begins with ``prefix`` (a parent order's children carry
        its id in theirs), oldest first."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._db.execute(
            "SELECT * FROM journal WHERE client_order_id LIKE ? ESCAPE '\\' ORDER BY id",
            (pattern,),
        )
        return [_entry(row) for row in rows]

    def unsettled(self, account: str) -> list[JournalEntry]:
        marks = ", ".join("?" for _ in OPEN_STATUSES)
        rows = self._db.execute(
            f"SELECT * FROM journal WHERE account = ? AND status IN ({marks}) "  # noqa: S608
            "ORDER BY id",
            (account, *OPEN_STATUSES),
        )
        return [_entry(row) for row in rows]


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection of its own to the journal at ``path``, for a read off the GUI
    thread (a connection serves only the thread that made it; WAL lets it read beside the
    writer)."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        yield db
    finally:
        db.close()


def search_entries(
    db: sqlite3.Connection,
    *,
    status: str = "",
    kind: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> Iterator[JournalEntry]:
    """Entries newest first (as written), lazily: the caller stops reading when it has enough.
    ``status``, ``kind``: equal when given; ``since`` (inclusive) and ``until`` (exclusive)
    bound the intent time."""
    clauses, values = [], []
    for column, wanted in (("status", status), ("kind", kind)):
        if wanted:
            clauses.append(f"{column} = ?")
            values.append(wanted)
    if since is not None:
        clauses.append("created_at >= ?")
        values.append(format_timestamp(since))
    if until is not None:
        clauses.append("created_at < ?")
        values.append(format_timestamp(until))
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    cursor = db.execute(f"SELECT * FROM journal {where}ORDER BY id DESC", values)  # noqa: S608
    return (_entry(row) for row in cursor)


def read_facts(
    db: sqlite3.Connection, name: str, subjects: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """``OrderJournal.facts`` on a connection of its own (a read off the GUI thread)."""
    wanted = list(dict.fromkeys(subjects))
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), FACTS_PER_READ):
        chunk = wanted[start : start + FACTS_PER_READ]
        marks = ", ".join("?" for _ in chunk)
        try:
            rows = db.execute(
                f"SELECT subject, value FROM facts WHERE name = ? AND subject IN ({marks})",  # noqa: S608
                (name, *chunk),
            )
        except sqlite3.OperationalError:  # a journal no version with facts has opened yet
            return found
        for row in rows:
            found[row[0]] = json.loads(row[1])
    return found


def _entry(row: sqlite3.Row) -> JournalEntry:
    return JournalEntry(
        row["client_order_id"],
        row["kind"],
        row["account"],
        json.loads(row["request"]),
        parse_timestamp(row["created_at"]),
        row["status"],
        row["order_id"],
        row["detail"],
        parse_timestamp(row["updated_at"]),
        row["request"],
        parse_timestamp(row["sent_at"]) if row["sent_at"] else None,
        parse_timestamp(row["sent_server_at"]) if row["sent_server_at"] else None,
    )


def _text(value: object) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return format_timestamp(value)
    return str(value)
