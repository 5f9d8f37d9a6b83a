"""The terminal's own SQLite files (the order journal, the algo store): created private (0600 in
a 0700 folder) before the first byte is written, in WAL mode on disk, with autocommit off so
every write is one explicit ``BEGIN IMMEDIATE`` transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MEMORY = ":memory:"


def open_private(path: Path | str, *, synchronous: str) -> sqlite3.Connection:
    """A connection to ``path`` (``":memory:"`` for none on disk), rows by name, with the
    ``synchronous`` setting the caller's writes need ("FULL": each commit synced)."""
    on_disk = str(path) != MEMORY
    if on_disk:
        target = Path(path)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not target.exists():
            target.touch(mode=0o600)  # private before the first byte
        target.chmod(0o600)
    db = sqlite3.connect(str(path), isolation_level=None)
    db.row_factory = sqlite3.Row
    if on_disk:
        db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous}")
    return db


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[None]:
    """One ``BEGIN IMMEDIATE`` transaction: committed at the end, rolled back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
