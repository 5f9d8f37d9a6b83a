"""Parents and their children on disk: a private SQLite file beside the order journal, so a
crash or a quit loses no parent.

What is stored is what was decided, not what it became: a parent's spec and state, and each
child's clientOrderId, size and limit, written *before* the child is handed to the order
desk. What a child became is the journal's and the server's to say (``restore``): the filled
amount of a parent is never read back from here.

Two terminals on one machine (the window and ``tradeterm algo``, say) share the file, so a
parent is worked by one process at a time: the one holding its lock (``claim``), a file lock
the OS drops when the process dies. A parent another process holds is shown, never worked
or re-stated here.
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

from app.domain import format_timestamp, parse_timestamp
from app.domain.money import format_decimal
from app.file_lock import try_lock
from app.services.algos.parents import Child, Parent, ParentState
from app.services.algos.specs import AlgoSpec
from app.services.local_db import MEMORY, open_private, writing

SCHEMA = """
CREATE TABLE IF NOT EXISTS parents (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    arrival_mid TEXT NOT NULL DEFAULT '',
    best TEXT NOT NULL DEFAULT '',
    fired INTEGER NOT NULL DEFAULT 0,
    linked TEXT NOT NULL DEFAULT '',
    slices_sent INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS children (
    client_order_id TEXT PRIMARY KEY,
    parent_id TEXT NOT NULL REFERENCES parents (id),
    size TEXT NOT NULL,
    limit_price TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    end_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS children_by_parent ON children (parent_id);
"""


def path_beside(journal: Path | None) -> Path | str:
    """The algo store next to the journal file (in memory when the journal is)."""
    return ":memory:" if journal is None else journal.with_name("algos.db")


class AlgoStore:
    def __init__(self, path: Path | str) -> None:
        on_disk = str(path) != MEMORY
        # Not synced on every commit (a sync per child stalled the loop by milliseconds each):
        # a commit survives a crash of the terminal, and what an OS crash could lose of the
        # children, the journal — synced before each send, naming each child's parent in its
        # clientOrderId — gives back at restore.
        self._db = open_private(path, synchronous="NORMAL")
        self._db.executescript(SCHEMA)
        self.path = Path(path) if on_disk else None
        self._claims: dict[str, int] = {}  # parent id -> the open, locked file

    def close(self) -> None:
        for parent_id in list(self._claims):
            self.release(parent_id)
        self._db.close()

    # -- one worker per parent ------------------------------------------------------------------

    def claim(self, parent_id: str) -> bool:
        """Take ``parent_id`` for this process; False when another process works it."""
        if self.path is None or parent_id in self._claims:
            return True
        folder = self.path.with_name(self.path.name + ".locks")
        folder.mkdir(mode=0o700, exist_ok=True)
        handle = os.open(folder / f"{parent_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        if not try_lock(handle):
            os.close(handle)
            return False
        self._claims[parent_id] = handle
        return True

    def release(self, parent_id: str) -> None:
        handle = self._claims.pop(parent_id, None)
        if handle is not None:
            os.close(handle)  # closing the descriptor releases the lock

    def worked_elsewhere(self, parent_id: str) -> bool:
        """Whether another process holds ``parent_id`` now."""
        if parent_id in self._claims:
            return False
        if not self.claim(parent_id):
            return True
        self.release(parent_id)
        return False

    def save_parent(self, parent: Parent) -> None:
        """Insert or update the parent's own row (its children are added one by one)."""
        with writing(self._db):
            self._save_parent(parent)

    def _save_parent(self, parent: Parent) -> None:
        self._db.execute(
            "INSERT INTO parents (id, account, spec, state, note, created_at, arrival_mid, "
            "best, fired, linked, slices_sent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET state = excluded.state, note = excluded.note, "
            "arrival_mid = excluded.arrival_mid, best = excluded.best, "
            "fired = excluded.fired, slices_sent = excluded.slices_sent",
            (
                parent.id,
                parent.account,
                parent.spec.to_json(),
                parent.state,
                parent.note,
                format_timestamp(parent.created_at),
                _number(parent.arrival_mid),
                _number(parent.best),
                int(parent.fired),
                parent.linked,
                parent.slices_sent,
            ),
        )

    def add_child(self, child: Child, parent: Parent) -> None:
        """The child and its parent's row as they are now, in one commit, before the child
        goes to the desk: a crash after this line leaves a child the journal may or may not
        know, and ``restore`` asks it."""
        with writing(self._db):
            self._save_parent(parent)
            self._db.execute(
                "INSERT INTO children (client_order_id, parent_id, size, limit_price, sent_at, "
                "end_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    child.client_order_id,
                    child.parent_id,
                    format_decimal(child.size),
                    format_decimal(child.limit),
                    format_timestamp(child.sent_at),
                    format_timestamp(child.end_at) if child.end_at else "",
                ),
            )

    def parents(self, account: str, parent_id: str | None = None) -> list[Parent]:
        """Every parent of ``account`` (or the one ``parent_id``), oldest first, with its
        children as sent (each marked ``sending``: what it became is for ``restore`` to find
        out)."""
        if parent_id is None:
            rows = self._db.execute(
                "SELECT rowid, * FROM parents WHERE account = ? ORDER BY rowid", (account,)
            ).fetchall()
        else:
            rows = self._db.execute(
                "SELECT rowid, * FROM parents WHERE account = ? AND id = ?", (account, parent_id)
            ).fetchall()
        found = []
        for row in rows:
            parent = Parent(
                row["id"],
                AlgoSpec.from_json(row["spec"]),
                row["account"],
                parse_timestamp(row["created_at"]),
                _state(row["state"]),
                row["note"],
                _decimal(row["arrival_mid"]),
                _decimal(row["best"]),
                bool(row["fired"]),
                row["linked"],
                slices_sent=row["slices_sent"],
            )
            parent.children = [
                Child(
                    child["client_order_id"],
                    parent.id,
                    Decimal(child["size"]),
                    Decimal(child["limit_price"]),
                    parse_timestamp(child["sent_at"]),
                    parse_timestamp(child["end_at"]) if child["end_at"] else None,
                )
                for child in self._db.execute(
                    "SELECT * FROM children WHERE parent_id = ? ORDER BY rowid", (parent.id,)
                )
            ]
            found.append(parent)
        return found


def _number(value: Decimal | None) -> str:
    return "" if value is None else format_decimal(value)


def _decimal(text: str) -> Decimal | None:
    return Decimal(text) if text else None


def _state(text: str) -> ParentState:
    states: tuple[ParentState, ...] = (
        "waiting",
        "armed",
        "working",
        "paused",
        "disarmed",
        "done",
        "stopped",
    )
    for state in states:
        if state == text:
            return state
    return "paused"
