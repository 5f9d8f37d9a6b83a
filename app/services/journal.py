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
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import platformdirs

from app.domain import format_timestamp, parse_timestamp, utc_now
from app.domain.records import Order

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
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS journal ({FIRST_COLUMNS},
    {SENT_AT_COLUMN}
);
"""
#: Journals written before send times were kept get the column when opened.
ADD_SENT_AT = f"ALTER TABLE journal ADD COLUMN {SENT_AT_COLUMN}"


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


class OrderJournal:
    def __init__(
        self, path: Path | str | None = None, *, now: Callable[[], datetime] = utc_now
    ) -> None:
        """``now``: the local wall clock the entries are stamped with (injectable so tests can
        run it minutes off, as a machine's clock may be)."""
        self._now = now
        target = Path(path) if path is not None else default_path()
        on_disk = str(target) != ":memory:"
        if on_disk:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not target.exists():
                target.touch(mode=0o600)  # private before the first byte (issue 14)
            target.chmod(0o600)
        self._db = sqlite3.connect(str(target), isolation_level=None)
        self._db.row_factory = sqlite3.Row
        if on_disk:
            self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")  # an entry must survive a crash
        self._db.executescript(SCHEMA)
        columns = {row["name"] for row in self._db.execute("PRAGMA table_info(journal)")}
        if "sent_at" not in columns:
            self._db.execute(ADD_SENT_AT)
        self.path: Path | None = target if on_disk else None

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

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
        with self._write():
            self._db.execute(
                "INSERT INTO journal (client_order_id, kind, account, request, created_at, "
                "status, updated_at) VALUES (?, ?, ?, ?, ?, 'sending', ?) "
                "ON CONFLICT (client_order_id) DO UPDATE SET status = 'sending', "
                "detail = '', sent_at = '', updated_at = excluded.updated_at",
                (client_order_id, kind, account, text, stamp, stamp),
            )

    def record_sent(self, client_order_id: str) -> None:
        """The request leaves now (called by the desks right before it goes): its send time,
        distinct from the intent written before the last checks. Not flushed to disk on its
        own (it must not delay the send; the intent already is): it survives a crash of the
        terminal, and the outcome's write flushes it with itself."""
        stamp = format_timestamp(self._now())
        self._db.execute("PRAGMA synchronous = NORMAL")
        try:
            with self._write():
                self._db.execute(
                    "UPDATE journal SET sent_at = ? WHERE client_order_id = ?",
                    (stamp, client_order_id),
                )
        finally:
            self._db.execute("PRAGMA synchronous = FULL")

    def record_outcome(
        self, client_order_id: str, status: str, *, order_id: str = "", detail: str = ""
    ) -> None:
        stamp = format_timestamp(self._now())
        with self._write():
            self._db.execute(
                "UPDATE journal SET status = ?, order_id = CASE WHEN ? = '' THEN order_id "
                "ELSE ? END, detail = ?, updated_at = ? WHERE client_order_id = ?",
                (status, order_id, order_id, detail, stamp, client_order_id),
            )

    def record_order(self, client_order_id: str, order: Order) -> None:
        """The outcome as the server's order says it."""
        status = order.result.status or "unknown"
        detail = order.result.error or ""
        self.record_outcome(client_order_id, status, order_id=order.order_id, detail=detail)

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
    )


def _text(value: object) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return format_timestamp(value)
    return str(value)
