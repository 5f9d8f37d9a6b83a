"""The order journal: every order and quote accept is written down before it is sent and
updated with its outcome, in a local SQLite file, so nothing the trader sent is lost from view,
even after a crash. On start, entries whose outcome is unknown are reconciled against the
server's order list.

Statuses: ``sending`` (written, answer not yet known — a crash leaves it so), ``filled``,
``submitted`` (resting), ``canceled``, ``rejected`` (the server refused it), ``failed`` (never
left this machine, or refused before execution), ``unknown`` (answer lost and not settled).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import platformdirs

from app.api import NotFound, ServiceClient
from app.domain import format_timestamp, parse_timestamp, utc_now
from app.domain.records import Order
from app.services.log_events import LogLevel
from app.services.session import TerminalSession

OPEN_STATUSES = ("sending", "unknown")
SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_order_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    account TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    order_id TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
);
"""


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("tradeterm", appauthor=False)) / "journal.db"


@dataclass(frozen=True)
class JournalEntry:
    client_order_id: str
    kind: str  # "limit", "market", "accept"
    account: str
    request: dict[str, Any]
    created_at: datetime
    status: str
    order_id: str
    detail: str
    updated_at: datetime


Lookup = Callable[[JournalEntry], Awaitable[Order | None]]


class OrderJournal:
    def __init__(self, path: Path | str | None = None) -> None:
        target = Path(path) if path is not None else default_path()
        if str(target) != ":memory:":
            target.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(target), isolation_level=None)
        self._db.row_factory = sqlite3.Row
        if str(target) != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")  # an entry must survive a crash
        self._db.executescript(SCHEMA)

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
        self, client_order_id: str, kind: str, account: str, request: dict[str, Any]
    ) -> None:
        """Written (and synced) before the request leaves. Sending the same clientOrderId again
        (the same ticket after a lost or failed answer: the server replays, never duplicates)
        marks the existing entry ``sending`` again and keeps its first creation time."""
        stamp = format_timestamp(utc_now())
        with self._write():
            self._db.execute(
                "INSERT INTO journal (client_order_id, kind, account, request, created_at, "
                "status, updated_at) VALUES (?, ?, ?, ?, ?, 'sending', ?) "
                "ON CONFLICT (client_order_id) DO UPDATE SET status = 'sending', "
                "detail = '', updated_at = excluded.updated_at",
                (client_order_id, kind, account, json.dumps(request, default=_text), stamp, stamp),
            )

    def record_outcome(
        self, client_order_id: str, status: str, *, order_id: str = "", detail: str = ""
    ) -> None:
        with self._write():
            self._db.execute(
                "UPDATE journal SET status = ?, order_id = CASE WHEN ? = '' THEN order_id "
                "ELSE ? END, detail = ?, updated_at = ? WHERE client_order_id = ?",
                (status, order_id, order_id, detail, format_timestamp(utc_now()), client_order_id),
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

    def unsettled(self, account: str) -> list[JournalEntry]:
        marks = ", ".join("?" for _ in OPEN_STATUSES)
        rows = self._db.execute(
            f"SELECT * FROM journal WHERE account = ? AND status IN ({marks}) "  # noqa: S608
            "ORDER BY id",
            (account, *OPEN_STATUSES),
        )
        return [_entry(row) for row in rows]

    async def reconcile(self, account: str, lookup: Lookup) -> list[JournalEntry]:
        """Settle this account's ``sending``/``unknown`` entries with ``lookup`` (the server's
        order list); entries the server does not know become ``failed``. Lookup errors leave an
        entry as it was (tried again next start). Returns the entries that changed."""
        changed = []
        for entry in self.unsettled(account):
            try:
                order = await lookup(entry)
            except Exception as exc:
                self.record_outcome(
                    entry.client_order_id,
                    "unknown",
                    detail=f"could not check with the server: {exc}",
                )
                continue
            if order is None:
                self.record_outcome(
                    entry.client_order_id,
                    "failed",
                    detail="not on the server's order list: never placed",
                )
            else:
                self.record_order(entry.client_order_id, order)
            updated = self.entry(entry.client_order_id)
            if updated is not None:
                changed.append(updated)
        return changed


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
    )


def _text(value: object) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return format_timestamp(value)
    return str(value)


def server_lookup(client: ServiceClient) -> Lookup:
    """Find a journal entry's order on the server: by quote id for accepts, by clientOrderId
    for orders (or source, destination and size when the server does not echo ids)."""

    async def lookup(entry: JournalEntry) -> Order | None:
        if entry.kind == "accept":
            try:
                return await client.order(str(entry.request["orderId"]))
            except NotFound:
                return None
        orders = await client.orders(
            max_orders=200,
            submitted_start=entry.created_at - timedelta(minutes=10),
            client_order_id=entry.client_order_id,
        )
        for order in orders:
            if order.client_order_id == entry.client_order_id:
                return order
        if any(order.client_order_id for order in orders):
            return None
        size = Decimal(str(entry.request.get("size", "0")))
        same = [
            o
            for o in orders
            if o.source == entry.request.get("source")
            and o.destination == entry.request.get("destination")
            and o.size.value == size
        ]
        return same[0] if len(same) == 1 else None

    return lookup


async def reconcile_on_start(session: TerminalSession, journal: OrderJournal) -> list[JournalEntry]:
    """At start: settle what a crash or a lost answer left open, and tell the trader."""
    account = session.environment.account
    open_entries = journal.unsettled(account)
    if not open_entries:
        return []
    session.log(LogLevel.INFO, f"checking {len(open_entries)} order(s) whose outcome was not known")
    changed = await journal.reconcile(account, server_lookup(session.client))
    for entry in changed:
        level = LogLevel.WARNING if entry.status in ("unknown", "failed") else LogLevel.INFO
        what = entry.order_id or entry.client_order_id
        session.log(
            level,
            f"order {what} ({entry.kind}, sent {format_timestamp(entry.created_at)}"
            f"): {entry.status}{' — ' + entry.detail if entry.detail else ''}",
        )
    return changed
