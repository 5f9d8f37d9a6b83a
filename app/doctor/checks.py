"""The checks of ``tradeterm doctor``, each one row: a name, OK/WARN/FAIL, and what was found.

FAIL is what stops the terminal or exposes the trader's data (no window system, a folder that
cannot be written or that others can read, a service URL that does not answer); WARN is what
the terminal works around (no keyring: "remember password" is off; a shipped font missing: the
host's fonts are used). The doctor only reads: it creates, fixes and deletes nothing — its
advice says what to run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.services.qt_platform import diagnose

Status = Literal["OK", "WARN", "FAIL"]
PROBE_SECONDS = 60.0
SERVICE_SECONDS = 5.0
#: Entries looked at per folder for their permissions (a data folder stays small).
WALK_LIMIT = 5000
EXPECTED_FAMILIES = ("Inter", "JetBrains Mono")


#: The keyring's backend (None: none usable) and why not, from app.ui.secrets.
KeyringState = tuple[str | None, str]


@dataclass(frozen=True)
class Terminal:
    """What the doctor needs of the terminal's Qt side, handed in by ``app.__main__`` (the one
    module outside app/ui that may import it): where the settings live, what the keyring says."""

    config_dir: Callable[[], Path]
    keyring: Callable[[], KeyringState]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    advice: tuple[str, ...] = ()


# -- Qt: the platform plugin, the fonts and themes (in a child process) -----------------------


@dataclass(frozen=True)
class Probe:
    """What the child ``tradeterm doctor --qt-probe`` said before and after QApplication."""

    returncode: int | None  # None: it did not finish in time
    before: dict[str, Any]
    after: dict[str, Any] | None
    stderr: str


def probe_command() -> list[str]:
    """The child's argv, with the code this process runs (the bundle is its own executable)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "doctor", "--qt-probe"]
    return [sys.executable, "-m", "app", "doctor", "--qt-probe"]


async def run_probe() -> Probe:
    process = await asyncio.create_subprocess_exec(
        *probe_command(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), PROBE_SECONDS)
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        code: int | None = None
    else:
        code = process.returncode
    said = [_json_line(line) for line in out.decode(errors="replace").splitlines()]
    lines = [line for line in said if line is not None]
    return Probe(
        code,
        lines[0] if lines else {},
        lines[1] if len(lines) > 1 and code == 0 else None,
        err.decode(errors="replace"),
    )


def _json_line(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def platform_check(probe: Probe) -> Check:
    name = "Qt platform plugin"
    if probe.after is not None:
        return Check(name, "OK", f"{probe.after['platform']} loads")
    if probe.returncode is None:
        return Check(name, "FAIL", f"Qt did not start within {PROBE_SECONDS:.0f} s")
    plugins = probe.before.get("plugins")
    found = diagnose(probe.stderr, plugins if isinstance(plugins, str) else None)
    return Check(name, "FAIL", found.summary, found.advice)


def font_checks(probe: Probe) -> list[Check]:
    after = probe.after
    if after is None:
        reason = "not checked: Qt could not start (see the platform plugin)"
        return [Check("Fonts", "WARN", reason), Check("Themes", "WARN", reason)]
    fonts: Check
    if not after["families"]:
        fonts = Check(
            "Fonts",
            "FAIL",
            "Qt's font database is empty: no text would show",
            (
                "Debian/Ubuntu: sudo apt install fontconfig fonts-dejavu-core",
                "Fedora: sudo dnf install fontconfig dejavu-sans-fonts",
            ),
        )
    else:
        lacking = [f for f in EXPECTED_FAMILIES if f not in after["loaded_families"]]
        missing = after["missing_fonts"]
        if missing or lacking:
            what = ", ".join(missing) if missing else ", ".join(lacking)
            fonts = Check(
                "Fonts",
                "WARN",
                f"shipped fonts not loaded ({what}) from {after['fonts_folder']}: "
                "the host's fonts are used",
                ("Reinstall Tradeterm: its resources/fonts folder is incomplete.",),
            )
        else:
            shipped = ", ".join(after["loaded_families"])
            fonts = Check("Fonts", "OK", f"{shipped} loaded; {after['families']} families")
    themes = (
        Check("Themes", "OK", ", ".join(after["themes"]))
        if after["themes"]
        else Check(
            "Themes",
            "WARN",
            f"no theme in {after['themes_folder']}: the window uses the palette alone",
            ("Reinstall Tradeterm: its resources/themes folder is missing.",),
        )
    )
    return [fonts, themes]


# -- the keyring --------------------------------------------------------------------------------


def keyring_check(keyring: KeyringState) -> Check:
    """The OS keyring, as the login dialog sees it: optional, so a missing one is a warning —
    the dialog then offers no "remember password"."""
    backend, reason = keyring
    if backend is None:
        return Check("Keyring", "WARN", f"not available: remember password is off ({reason})")
    return Check("Keyring", "OK", backend)


# -- the folders ----------------------------------------------------------------------------


def app_folders(config_dir: Path) -> list[tuple[str, Path]]:
    """The folders the terminal writes, from the helpers it uses itself (their environment
    overrides included: TRADETERM_CONFIG_DIR, TRADETERM_LOG_DIR, XDG_DATA_HOME...)."""
    from app.logs import log_dir
    from app.services.journal import default_path

    return [
        ("Config folder", config_dir),
        ("Data folder", default_path().parent),
        ("Log folder", log_dir()),
    ]


def folder_check(name: str, path: Path) -> Check:
    """Exists (or can be created), is ours, writable, and private: nothing in it open to the
    group or others (the terminal makes its files 0600 and folders 0700, app.private)."""
    if not path.exists():
        parent = next(p for p in path.parents if p.exists())
        if os.access(parent, os.W_OK | os.X_OK):
            return Check(name, "OK", f"{path} (created 0700 at the first start)")
        return Check(
            name,
            "FAIL",
            f"{path} cannot be created: {parent} is not writable",
            (f"Make {parent} writable for you, or set the folder's variable elsewhere.",),
        )
    if not path.is_dir():
        return Check(name, "FAIL", f"{path} is not a folder", (f"Move {path} away.",))
    owner = path.stat().st_uid
    if hasattr(os, "getuid") and owner != os.getuid():
        return Check(
            name,
            "FAIL",
            f"{path} belongs to another user (uid {owner})",
            (f"sudo chown -R $(id -u):$(id -g) {path}",),
        )
    if not os.access(path, os.W_OK | os.X_OK):
        return Check(name, "FAIL", f"{path} is not writable", (f"chmod u+rwx {path}",))
    exposed = _open_to_others(path)
    if exposed:
        shown = ", ".join(f"{p} ({stat.S_IMODE(mode):04o})" for p, mode in exposed[:3])
        more = f" and {len(exposed) - 3} more" if len(exposed) > 3 else ""
        return Check(
            name,
            "FAIL",
            f"not private: {shown}{more} can be read by others",
            (f"chmod -R go-rwx {path}",),
        )
    return Check(name, "OK", f"{path} (private)")


def _open_to_others(folder: Path) -> list[tuple[Path, int]]:
    """Entries (the folder included) with any group or other permission bit; symlinks are
    not followed."""
    found: list[tuple[Path, int]] = []
    seen = 0
    for root, _, files in os.walk(folder):  # each subfolder comes as a root of its own
        for entry in [root, *(os.path.join(root, name) for name in files)]:
            seen += 1
            mode = os.lstat(entry).st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                found.append((Path(entry), mode))
            if seen >= WALK_LIMIT:
                return found
    return found


# -- the sandbox database -----------------------------------------------------------------------


async def sandbox_check(db: str | None) -> Check:
    """Whether ``--sandbox`` can start on its database: free, or held by a running sandbox
    that answers (the terminal then joins it: app.services.sandbox_child), or held by a
    process that does not answer (the start would fail), or locked by some other program."""
    from app.services.sandbox_child import answers, default_db_path, lock_held, published_url

    name = "Sandbox database"
    path = db or default_db_path()
    if path == ":memory:":
        return Check(name, "OK", "in memory: nothing to lock")
    if not Path(path).exists():  # noqa: ASYNC240 - one stat
        return Check(name, "OK", f"{path}: none yet (created at the first --sandbox start)")
    if lock_held(path):
        url = published_url(path)
        if url is not None and await answers(url):
            return Check(
                name, "OK", f"{path}: in use by a running sandbox at {url} (--sandbox joins it)"
            )
        return Check(
            name,
            "FAIL",
            f"{path}: locked by a sandbox process that does not answer "
            f"(at {url or 'no published URL'}): --sandbox would fail",
            (f"Stop the process holding {path}.lock (fuser {path}.lock), or use another --db.",),
        )
    problem = await asyncio.to_thread(_sqlite_problem, path)
    if problem:
        return Check(name, "FAIL", f"{path}: {problem}", (f"Move {path} away to start afresh.",))
    return Check(name, "OK", f"{path}: free")


def _sqlite_problem(path: str) -> str:
    """Why SQLite cannot write ``path`` now ("" if it can): another program's lock, or not a
    database at all. A write transaction is begun and rolled back: nothing changes."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=0.5)
    except sqlite3.Error as exc:
        return f"cannot be opened ({exc})"
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        connection.rollback()
    except sqlite3.Error as exc:
        if "locked" in str(exc):
            return "locked by another program (not a sandbox)"
        return f"not usable ({exc})"
    finally:
        connection.close()
    return ""


# -- the service ------------------------------------------------------------------------------


async def service_check(url: str) -> Check:
    """One request to the service's time endpoint (TLS verified, as always): reachable, and
    speaking the service's language."""
    from app.api import ClientSettings, NetworkError, RetryPolicy, ServiceClient, ServiceError

    name = "Service URL"
    settings = ClientSettings(url, connect_timeout=SERVICE_SECONDS, read_timeout=SERVICE_SECONDS)
    try:
        async with ServiceClient(settings, retry=RetryPolicy(attempts=1)) as client:
            now = await client.service_time()
            trip = client.clock.round_trip
    except NetworkError as exc:
        return Check(name, "FAIL", f"{url}: {exc}")
    except ServiceError as exc:
        return Check(name, "FAIL", f"{url} answers, but not as the trading service: {exc}")
    shown = "" if trip is None else f" in {trip * 1000:.0f} ms"
    return Check(name, "OK", f"{url} answers{shown} (server time {now:%Y-%m-%d %H:%M:%S} UTC)")
