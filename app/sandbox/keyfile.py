"""The sandbox's secrets at rest: the token signing key and the database file modes.

The signing key lives in its own ``0600`` file next to the database (``<db>.key``), not in the
database: a copy of ``sandbox.db`` (a backup, a bug report) then cannot mint tokens. The file
holds a generation number and a secret; ``tradeterm sandbox rotate-key --db PATH`` writes the
next generation, and a running sandbox notices the new file (by its inode and mtime): it looks
at most once a millisecond, so every request that starts after the command has ended refuses
the tokens signed before the rotation. A ``:memory:`` sandbox
keeps a fresh key in memory only.

The database and its ``-wal``/``-shm`` files are ``0600`` (SQLite gives the side files the mode
of the database), in a ``0700`` folder when the sandbox creates the folder or it is the default
data folder.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700
KEY_SUFFIX = ".key"
#: The key file is looked at again at most this often (s).
CHECK_EVERY = 0.001
DB_SIDE_FILES = ("", "-wal", "-shm", "-journal")


@dataclass(frozen=True)
class SigningKey:
    """One generation of the HS256 secret; tokens name the generation in their ``gen`` claim."""

    generation: int
    secret: str


def key_path(db_path: str) -> Path | None:
    """Where the key of ``db_path`` lives (``None`` for an in-memory database)."""
    if db_path == ":memory:":
        return None
    return Path(db_path + KEY_SUFFIX)


def private_folder_for(db_path: str, *, tighten: bool) -> None:
    """Create the database's folder ``0700``; ``tighten`` also narrows an existing one (the
    default data folder is ours; a folder the operator named is left as they keep it)."""
    if db_path == ":memory:":
        return
    folder = Path(db_path).parent
    if not folder.exists():
        folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        folder.chmod(FOLDER_MODE)
    elif tighten and stat.S_IMODE(folder.stat().st_mode) != FOLDER_MODE:
        folder.chmod(FOLDER_MODE)


def private_database(db_path: str) -> None:
    """The database file exists ``0600`` before SQLite opens it (so the WAL and shared-memory
    files SQLite creates get ``0600`` too); files an older version left wider are narrowed."""
    if db_path == ":memory:":
        return
    fd = os.open(db_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    os.close(fd)
    for suffix in DB_SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            path = Path(db_path + suffix)
            if stat.S_IMODE(path.stat().st_mode) != FILE_MODE:
                path.chmod(FILE_MODE)


def read_key(path: Path) -> SigningKey:
    data = json.loads(path.read_text())
    generation, secret = data.get("generation"), data.get("secret")
    if not isinstance(generation, int) or not isinstance(secret, str) or len(secret) < 32:
        raise ValueError(f"{path} is not a sandbox key file")
    return SigningKey(generation, secret)


def write_key(path: Path, key: SigningKey) -> None:
    """Atomically: a ``0600`` temporary file, flushed to disk, renamed over the key."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        if hasattr(os, "fchmod"):  # POSIX; Windows keeps its own ACLs
            os.fchmod(fd, FILE_MODE)
        os.write(fd, json.dumps({"generation": key.generation, "secret": key.secret}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def new_key(generation: int) -> SigningKey:
    return SigningKey(generation, secrets.token_hex(32))


def rotate_key(db_path: str) -> SigningKey:
    """The next generation of the key of ``db_path`` (``tradeterm sandbox rotate-key``)."""
    path = key_path(db_path)
    if path is None:
        raise ValueError("an in-memory sandbox has no key file to rotate")
    current = read_key(path) if path.exists() else SigningKey(0, "")
    key = new_key(current.generation + 1)
    private_folder_for(db_path, tighten=False)
    write_key(path, key)
    return key


class KeyFile:
    """The current signing key of one sandbox, re-read when the file is replaced."""

    def __init__(self, db_path: str, legacy_secret: Callable[[], str | None]) -> None:
        self._path = key_path(db_path)
        self._name = "" if self._path is None else str(self._path)
        self._seen: tuple[int, int] | None = None
        self._checked = -math.inf  # monotonic time of the last look at the file
        if self._path is None:
            self._key = new_key(1)
            return
        if not self._path.exists():
            # A database from before the key file: carry its secret over as generation 0, the
            # ``gen`` its tokens carry (tokens of users never revoked stay good).
            legacy = legacy_secret()
            write_key(self._path, SigningKey(0, legacy) if legacy else new_key(1))
        self._key = self._load()

    def _load(self) -> SigningKey:
        assert self._path is not None
        info = self._path.stat()
        if stat.S_IMODE(info.st_mode) != FILE_MODE:
            self._path.chmod(FILE_MODE)
        self._seen = (info.st_ino, info.st_mtime_ns)
        return read_key(self._path)

    def current(self) -> SigningKey:
        """The key in force: a rotation by another process shows up here within
        ``CHECK_EVERY`` seconds. Every request verifies its token against it, and a ``stat``
        per request was 12 % of the server's time under load (7 µs of a top-of-book answer);
        at most one a millisecond keeps a rotation effective for every request that starts
        after the rotating command has ended (a process start takes far longer)."""
        if self._path is not None:
            now = time.monotonic()
            if now - self._checked < CHECK_EVERY:
                return self._key
            self._checked = now
            try:
                info = os.stat(self._name)
            except FileNotFoundError:
                return self._key
            if (info.st_ino, info.st_mtime_ns) != self._seen:
                self._key = self._load()
        return self._key
