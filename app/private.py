"""Keeping the terminal's secrets private: every file it creates is readable by its
user only, core dumps (which would hold the password, its hash and tokens) are off, and a
password read from the environment leaves the environment at once.

``harden_process`` runs first thing in ``main``: a ``077`` umask makes every file and folder the
process (and the sandbox child it starts) creates ``0600``/``0700``; ``keep_private`` also
tightens the terminal's own files and folders that an older version created more open.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

PRIVATE_UMASK = 0o077
FILE_MODE = 0o600
FOLDER_MODE = 0o700
ENV_LOGIN = ("TRADETERM_BASE_URL", "TRADETERM_USER", "TRADETERM_PASSWORD", "TRADETERM_ACCOUNT")
ENV_PASSWORD = ENV_LOGIN[2]


#: The file descriptor to read the login password from (a pipe, say), instead of the
#: variable: nothing of it is ever in the environment.
ENV_PASSWORD_FD = "TRADETERM_PASSWORD_FD"  # noqa: S105 - the variable's name
#: The longest password line read from ``TRADETERM_PASSWORD_FD``.
MAX_PASSWORD_BYTES = 4096
#: prctl(2): whether the process may be dumped or traced by its user (gcore, ptrace).
PR_SET_DUMPABLE = 4


def harden_process() -> None:
    """Private file modes from here on, no core dump of this process, and on Linux not
    dumpable at all: no core, and no ``gcore``/ptrace by another process of the same user,
    which would read the password's hash and the token out of memory."""
    os.umask(PRIVATE_UMASK)
    if sys.platform != "win32":
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def keep_private(*paths: Path) -> None:
    """Tighten existing files to ``0600`` and folders to ``0700`` (missing ones are skipped)."""
    for path in paths:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            continue
        wanted = FOLDER_MODE if stat.S_ISDIR(mode) else FILE_MODE
        if stat.S_IMODE(mode) != wanted:
            path.chmod(wanted)


def private_folder(path: Path) -> Path:
    """``path`` created (with its parents) and kept ``0700``."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    keep_private(path)
    return path


def take_env_login() -> tuple[str, str, str, str] | None:
    """The four ``TRADETERM_*`` login values when all are set, the password as its SHA-256 hex
    (``take_password_digest``: it leaves the environment as it is read, never as a string)."""
    url, user, _, account = (os.environ.get(key, "") for key in ENV_LOGIN)
    digest = take_password_digest()
    if not (url and user and digest and account):
        return None
    return url, user, digest, account


def take_password_digest() -> str:
    """The login password's SHA-256 hex (what the service takes), "" when none is given.

    Read from the file descriptor ``TRADETERM_PASSWORD_FD`` names (its first line; the
    descriptor is closed), else from ``TRADETERM_PASSWORD``. The plain bytes are hashed where
    they are and wiped — never decoded to a string, which Python can neither wipe nor free
    wiped, and never in a buffer that grows (a move leaves the old copy behind) — and the
    variable is erased: its bytes in the process's original environment block and the
    interpreter's copy of them overwritten, so neither ``/proc/self/environ`` nor a core holds
    the password for the session, and no child inherits it."""
    buffer = _take_env_bytes(ENV_PASSWORD)
    length = len(buffer)
    descriptor = os.environ.pop(ENV_PASSWORD_FD, "").strip()
    if descriptor.isdigit():
        _wipe(buffer)
        buffer, length = _read_line(int(descriptor))
    try:
        if not length:
            return ""
        with memoryview(buffer) as view:
            return hashlib.sha256(view[:length]).hexdigest()
    finally:
        _wipe(buffer)


def scrub_environment(key: str) -> None:
    """Remove ``key`` from the environment, overwriting its value where the C library keeps it
    (the block the process started with) on Linux."""
    if sys.platform == "linux":
        import ctypes

        getenv = ctypes.CDLL(None).getenv
        getenv.restype = ctypes.c_void_p
        getenv.argtypes = [ctypes.c_char_p]
        address = getenv(key.encode())
        if address:
            ctypes.memset(address, 0, len(ctypes.string_at(address)))
    os.environ.pop(key, None)


def _take_env_bytes(key: str) -> bytearray:
    """``key``'s value as a wipeable copy; the variable scrubbed everywhere it lived."""
    value = os.environb.get(key.encode()) if sys.platform != "win32" else None
    copy = bytearray(value) if value is not None else bytearray(os.environ.get(key, "").encode())
    scrub_environment(key)
    if value is not None:
        _wipe_bytes(value)
    return copy


def _read_line(descriptor: int) -> tuple[bytearray, int]:
    """A buffer holding the first line of ``descriptor`` (without its line end) and that
    line's length; the descriptor is closed. Read straight into one fixed buffer."""
    buffer = bytearray(MAX_PASSWORD_BYTES)
    filled = 0
    try:
        with memoryview(buffer) as view:
            while filled < len(buffer) and buffer.find(b"\n", 0, filled) < 0:
                count = os.readv(descriptor, [view[filled:]])
                if count == 0:
                    break
                filled += count
    finally:
        os.close(descriptor)
    end = buffer.find(b"\n", 0, filled)
    length = filled if end < 0 else end
    if length and buffer[length - 1] == ord("\r"):
        length -= 1
    return buffer, length


def _wipe(buffer: bytearray) -> None:
    buffer[:] = bytes(len(buffer))


def _wipe_bytes(value: bytes) -> None:
    """Overwrite the interpreter's own ``bytes`` object holding a secret, when nothing else can
    see it. CPython allocates ``os.environ``'s values at start-up and, dropped, their memory is
    reused unwiped; a ``bytes`` object is immutable only by convention at this level, and one
    only this call refers to is never read again. Short values are skipped: CPython shares
    one-byte objects."""
    # references: the caller's variable, this parameter and getrefcount's own argument
    if sys.implementation.name != "cpython" or len(value) < 2 or sys.getrefcount(value) > 3:
        return
    import ctypes

    ctypes.memset(id(value) + bytes.__basicsize__ - 1, 0, len(value))
