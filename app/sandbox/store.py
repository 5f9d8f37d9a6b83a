"""The sandbox's SQLite store: schema, transactions, balances and the ledger.

One connection, used from the server's event loop only, so requests are serialised; every write
still runs in ``BEGIN IMMEDIATE`` so two processes on one file cannot interleave a trade. Decimals
are stored as TEXT and never pass through a float. ``free + locked`` of every account and asset
equals the sum of its ledger amounts: balances change only through :meth:`Store.book` (which
writes the entry) or :meth:`Store.move_to_locked` (which moves between free and locked).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from app.file_lock import try_lock

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    user_id TEXT PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL,
    pw_salt BLOB NOT NULL, pw_hash BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
    account_id TEXT PRIMARY KEY, owner TEXT NOT NULL REFERENCES users(user_id),
    type TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS balances (
    account_id TEXT NOT NULL REFERENCES accounts(account_id), asset TEXT NOT NULL,
    free TEXT NOT NULL DEFAULT '0', locked TEXT NOT NULL DEFAULT '0',
    credit_limit TEXT NOT NULL DEFAULT '0',
    PRIMARY KEY (account_id, asset));
CREATE TABLE IF NOT EXISTS ledger (
    ordering INTEGER NOT NULL, leg INTEGER NOT NULL, account_id TEXT NOT NULL,
    transaction_id TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL,
    event_type TEXT NOT NULL, sub_event_type TEXT, event_time TEXT NOT NULL,
    PRIMARY KEY (ordering, leg));
CREATE INDEX IF NOT EXISTS ledger_account ON ledger(account_id, ordering);
CREATE TABLE IF NOT EXISTS orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL, user_id TEXT NOT NULL, email TEXT NOT NULL,
    client_order_id TEXT, type TEXT NOT NULL, source TEXT NOT NULL, destination TEXT NOT NULL,
    size TEXT NOT NULL, limit_price TEXT, end_at TEXT, submitted_at TEXT NOT NULL,
    status TEXT NOT NULL, price TEXT, inverted_price TEXT, total TEXT, executed_at TEXT,
    updated_at TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
    http_status INTEGER, error_body TEXT);
CREATE INDEX IF NOT EXISTS orders_client ON orders(account_id, client_order_id);
CREATE INDEX IF NOT EXISTS orders_status ON orders(status);
CREATE TABLE IF NOT EXISTS quotes (
    quote_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, user_id TEXT NOT NULL,
    client_order_id TEXT, pair TEXT NOT NULL, size TEXT NOT NULL, created_at TEXT NOT NULL,
    sides TEXT NOT NULL, accepted_side TEXT);
CREATE TABLE IF NOT EXISTS transfers (
    ordering INTEGER NOT NULL, transfer_id TEXT PRIMARY KEY, kind TEXT NOT NULL,
    account_id TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL, status TEXT NOT NULL,
    method TEXT NOT NULL, network TEXT, address TEXT, hash TEXT,
    created_at TEXT NOT NULL, created_by TEXT NOT NULL,
    completed_at TEXT, completed_by TEXT, complete_after TEXT);
CREATE INDEX IF NOT EXISTS transfers_account ON transfers(account_id, kind, ordering);
CREATE TABLE IF NOT EXISTS instructions (
    account_id TEXT NOT NULL, direction TEXT NOT NULL, position INTEGER NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (account_id, direction, position));
"""


@dataclass(frozen=True)
class BalanceRow:
    asset: str
    free: Decimal
    locked: Decimal
    credit_limit: Decimal

    @property
    def total_credit(self) -> Decimal:
        return -self.credit_limit

    @property
    def used_credit(self) -> Decimal:
        return max(Decimal(0), -self.free)

    @property
    def available_credit(self) -> Decimal:
        return max(Decimal(0), self.total_credit - self.used_credit)

    @property
    def available_funds(self) -> Decimal:
        return max(Decimal(0), self.free)


class Store:
    """All persistent state of one sandbox; ``path`` is a file or ``:memory:``."""

    def __init__(self, path: str) -> None:
        self._writer = WriterLock.hold(path)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA busy_timeout = 5000")
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(SCHEMA)
        self._depth = 0
        self._on_disk = path != ":memory:"

    def close(self) -> None:
        self._db.close()
        self._writer.release()

    @contextmanager
    def transaction(self, *, durable: bool = False) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction; nested uses join the outer one.

        ``durable``: a commit whose answer acknowledges money to a client (an order, an
        accept, a deposit, a withdrawal) is synced to disk before it is answered
        (``synchronous = FULL``): WAL's NORMAL, enough for the rest, could lose an
        acknowledged order to a power cut."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        if durable and self._on_disk:
            self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")
        finally:
            self._depth = 0
            if durable and self._on_disk:
                self._db.execute("PRAGMA synchronous = NORMAL")

    # -- generic ----------------------------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self._db.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._db.execute(sql, params).fetchone()
        return row

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a write; returns the last row id."""
        cursor = self._db.execute(sql, params)
        return int(cursor.lastrowid or 0)

    def publish_url(self, url: str) -> None:
        """Say where this database's sandbox listens (see :class:`WriterLock`)."""
        self._writer.publish_url(url)

    def update(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an UPDATE; returns how many rows it changed (0 tells a compare-and-set lost)."""
        return int(self._db.execute(sql, params).rowcount)

    def insert(self, table: str, values: dict[str, Any]) -> int:
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        return self.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks})",  # noqa: S608 - names are ours
            [_db_value(v) for v in values.values()],
        )

    def get_meta(self, key: str) -> str | None:
        row = self.query_one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        self.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def next_ordering(self) -> int:
        """The next global ordering value (ledger entries, deposits, withdrawals)."""
        with self.transaction():
            current = int(self.get_meta("ordering") or "0")
            self.set_meta("ordering", str(current + 1))
        return current + 1

    # -- balances and ledger ----------------------------------------------------------------

    def balance(self, account_id: str, asset: str) -> BalanceRow:
        row = self.query_one(
            "SELECT * FROM balances WHERE account_id = ? AND asset = ?", (account_id, asset)
        )
        if row is None:
            return BalanceRow(asset, Decimal(0), Decimal(0), Decimal(0))
        return _balance(row)

    def balances(self, account_id: str) -> list[BalanceRow]:
        rows = self.query(
            "SELECT * FROM balances WHERE account_id = ? ORDER BY asset", (account_id,)
        )
        return [_balance(row) for row in rows]

    def set_credit_limit(self, account_id: str, asset: str, limit: Decimal) -> None:
        if limit > 0:
            raise ValueError("a credit limit is zero or negative")
        self._ensure_balance(account_id, asset)
        self.execute(
            "UPDATE balances SET credit_limit = ? WHERE account_id = ? AND asset = ?",
            (str(limit), account_id, asset),
        )

    def book(
        self,
        *,
        ordering: int,
        leg: int,
        account_id: str,
        transaction_id: str,
        asset: str,
        amount: Decimal,
        event_type: str,
        event_time: str,
        sub_event_type: str | None = None,
        from_locked: bool = False,
    ) -> None:
        """Write one ledger entry and apply it to ``free`` (or to ``locked`` when it settles a
        lock), inside the caller's transaction."""
        self._ensure_balance(account_id, asset)
        self.insert(
            "ledger",
            {
                "ordering": ordering,
                "leg": leg,
                "account_id": account_id,
                "transaction_id": transaction_id,
                "asset": asset,
                "amount": amount,
                "event_type": event_type,
                "sub_event_type": sub_event_type,
                "event_time": event_time,
            },
        )
        column = "locked" if from_locked else "free"
        self._add(account_id, asset, column, amount)

    def move_to_locked(self, account_id: str, asset: str, amount: Decimal) -> None:
        """Move ``amount`` from free to locked (negative: back); the ledger sum is unchanged."""
        self._ensure_balance(account_id, asset)
        self._add(account_id, asset, "free", -amount)
        self._add(account_id, asset, "locked", amount)

    def ledger_sums(self, account_id: str) -> dict[str, Decimal]:
        sums: dict[str, Decimal] = {}
        for row in self.query(
            "SELECT asset, amount FROM ledger WHERE account_id = ?", (account_id,)
        ):
            sums[row["asset"]] = sums.get(row["asset"], Decimal(0)) + Decimal(row["amount"])
        return sums

    def _ensure_balance(self, account_id: str, asset: str) -> None:
        self.execute(
            "INSERT OR IGNORE INTO balances (account_id, asset) VALUES (?, ?)", (account_id, asset)
        )

    def _add(self, account_id: str, asset: str, column: str, delta: Decimal) -> None:
        row = self.query_one(
            f"SELECT {column} FROM balances WHERE account_id = ? AND asset = ?",  # noqa: S608
            (account_id, asset),
        )
        assert row is not None
        self.execute(
            f"UPDATE balances SET {column} = ? WHERE account_id = ? AND asset = ?",  # noqa: S608
            (str(Decimal(row[column]) + delta), account_id, asset),
        )


class DatabaseInUse(Exception):
    """Another process holds the database's writer lock; ``url`` is where it says it listens."""

    def __init__(self, path: str, url: str | None) -> None:
        where = f" and listens on {url}" if url else ""
        super().__init__(
            f"the sandbox database {path} is in use by another sandbox process{where}; "
            "one database has one sandbox: use that one, stop it, or pick another --db"
        )
        self.path = path
        self.url = url


class LinkedDatabase(DatabaseInUse):
    """The database file has more than one hard link: another name for it would take another
    lock and let a second sandbox write it (a corrupted database, every order answered 500)."""

    def __init__(self, path: str, links: int) -> None:
        Exception.__init__(
            self,
            f"the sandbox database {path} has {links} hard links; one database file has one "
            "name: remove the other links or copy the file",
        )
        self.path = path
        self.url = None


def refuse_hard_links(db_path: str) -> None:
    try:
        links = os.stat(db_path).st_nlink
    except FileNotFoundError:
        return
    if links > 1:
        raise LinkedDatabase(db_path, links)


class WriterLock:
    """One writer per database file: an OS lock on ``<db>.lock`` held for the process's life.

    Two sandboxes on one file would each run the matcher and fill a resting order twice; SQLite's
    own locks serialise transactions, not decisions made from reads outside them. ``flock`` (or
    ``msvcrt.locking`` on Windows) is released by the OS when the process dies, so a crash
    never leaves a stale lock. ``:memory:`` needs none. The running sandbox also writes its URL
    to ``<db>.url`` (0600) so a second terminal can join it instead of failing.
    """

    def __init__(self, path: str, handle: int | None) -> None:
        self.path = path
        self._handle = handle

    @staticmethod
    def lock_path(db_path: str) -> str:
        """Beside the file itself, wherever ``db_path`` points: a symlink or another spelling
        of the path takes the same lock."""
        return os.path.realpath(db_path) + ".lock"

    @staticmethod
    def url_path(db_path: str) -> str:
        return os.path.realpath(db_path) + ".url"

    @classmethod
    def hold(cls, db_path: str) -> WriterLock:
        """Take the lock or raise :class:`DatabaseInUse` (:class:`LinkedDatabase` for a file
        with another name that could be opened without this lock)."""
        if db_path == ":memory:":
            return cls(db_path, None)
        refuse_hard_links(db_path)
        handle = os.open(cls.lock_path(db_path), os.O_RDWR | os.O_CREAT, 0o600)
        if not try_lock(handle):
            os.close(handle)
            raise DatabaseInUse(db_path, read_url(db_path))
        return cls(db_path, handle)

    def publish_url(self, url: str) -> None:
        """Write ``<db>.url`` (0600, replaced atomically) for terminals that find the lock."""
        if self._handle is None:
            return
        target = self.url_path(self.path)
        temporary = f"{target}.{os.getpid()}.tmp"
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "w") as out:
            out.write(url + "\n")
        os.replace(temporary, target)

    def release(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            os.remove(self.url_path(self.path))
        os.close(self._handle)  # closing the descriptor releases the lock
        self._handle = None


def read_url(db_path: str) -> str | None:
    """The URL the database's running sandbox published, if any."""
    try:
        with open(WriterLock.url_path(db_path), encoding="utf-8") as text:
            return text.read().strip() or None
    except OSError:
        return None


def _balance(row: sqlite3.Row) -> BalanceRow:
    return BalanceRow(
        row["asset"], Decimal(row["free"]), Decimal(row["locked"]), Decimal(row["credit_limit"])
    )


def _db_value(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value
