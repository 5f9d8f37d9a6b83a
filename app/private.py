"""Keeping the terminal's secrets private (issue 14): every file it creates is readable by its
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


def harden_process() -> None:
    """Private file modes from here on, and no core dump of this process."""
    os.umask(PRIVATE_UMASK)
    if sys.platform != "win32":
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


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
    """The four ``TRADETERM_*`` login values when all are set; the password is removed from
    the environment as it is read (never left there for the session, nor passed to children)."""
    values = [os.environ.get(key, "") for key in ENV_LOGIN]
    os.environ.pop(ENV_PASSWORD, None)
    if not all(values):
        return None
    url, user, password, account = values
    return url, user, password, account
