"""An exclusive, non-blocking lock between processes on an open file, released by the OS when
the process dies (no stale lock after a crash): ``flock`` on POSIX, ``msvcrt.locking`` on
Windows. Used where two processes must never both act: one sandbox per database, one terminal
working a parent order."""

from __future__ import annotations

import sys


def try_lock(handle: int) -> bool:
    """Lock ``handle`` exclusively; False at once when another process holds it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
