"""Keeping the terminal's secrets private: every file it creates is readable by its
user only, core dumps (which would hold the password, its hash and tokens) are off, and a
password read from the environment leaves the environment at once.

``harden_process`` runs first thing in ``main``: a ``077`` umask makes every file and folder the
process (and the sandbox child it starts) creates ``0600``/``0700``; ``keep_private`` also
tightens the terminal's own files and folders that an older version created more open.
"""

from __future__ import annotations

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
    """The four ``TRADETERM_*`` login values when all are set (the password from
    ``take_password``: it leaves the environment as it is read)."""
    url, user, _, account = (os.environ.get(key, "") for key in ENV_LOGIN)
    password = take_password()
    if not (url and user and password and account):
        return None
    return url, user, password, account


def take_password() -> str:
    """The login password: read from the file descriptor ``TRADETERM_PASSWORD_FD`` names (its
    first line; the descriptor is closed), else from ``TRADETERM_PASSWORD``. Either way the
    variable is erased — its bytes in the process's original environment block overwritten,
    not only dropped from ``os.environ``, which would leave them in ``/proc/self/environ`` and
    in a core for the whole session — and never passed to a child. "" when neither is set."""
    password = os.environ.get(ENV_PASSWORD, "")
    scrub_environment(ENV_PASSWORD)
    descriptor = os.environ.pop(ENV_PASSWORD_FD, "").strip()
    if descriptor.isdigit():
        with os.fdopen(int(descriptor), encoding="utf-8") as source:
            password = source.readline().rstrip("\r\n")
    return password


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
