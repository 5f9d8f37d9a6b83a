"""``tradeterm doctor`` and the terminal's start without a window system.

Every check runs for real, in a child process as a user runs it: Qt's platform plugin loads or
fails in the doctor's own child, ``ldd`` reads a real plugin, the folders are real folders, the
sandbox is a real sandbox holding its database's lock. The "missing library" case loads a copy
of Qt's xcb plugin whose link to ``libxcb-cursor.so.0`` names ``libxcb-cursor.so.9`` instead
(same length, patched in the copy's dynamic section): Qt really fails to load it, ``ldd``
really reports it missing, and the doctor must say which package provides it.
"""

from __future__ import annotations

import fcntl
import os
import re
import sqlite3
from pathlib import Path

import pytest
from PySide6.QtCore import QLibraryInfo

from app.services.qt_platform import missing_libraries
from tests.harness import SandboxProcess, launch, user_env

XCB = "libqxcb.so"
CURSOR = b"libxcb-cursor.so.0\0"


def headless_xcb(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment asking for X11 with no display to talk to."""
    env = {**user_env(home), "QT_QPA_PLATFORM": "xcb", **extra}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def row(output: str, name: str) -> tuple[str, str]:
    """The STATUS and DETAIL of the doctor's row ``name``."""
    found = re.search(rf"^{re.escape(name)}\s+(OK|WARN|FAIL)\s+(.*)$", output, re.MULTILINE)
    assert found, (name, output)
    return found.group(1), found.group(2)


def real_plugins() -> Path:
    """Qt's own platform plugin folder."""
    return Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"


def plugin_missing_a_library(root: Path) -> Path:
    """A Qt plugin tree whose xcb plugin links a libxcb-cursor that no system has."""
    qt = real_plugins().parent.parent
    original = (real_plugins() / XCB).read_bytes()
    assert original.count(CURSOR) == 1, "the xcb plugin no longer links libxcb-cursor itself"
    platforms = root / "plugins" / "platforms"
    platforms.mkdir(parents=True)
    (platforms / XCB).write_bytes(original.replace(CURSOR, b"libxcb-cursor.so.9\0"))
    (root / "lib").symlink_to(qt / "lib")  # the plugin's RUNPATH: $ORIGIN/../../lib
    return platforms


def test_doctor_passes_here_offscreen(tmp_path: Path) -> None:
    done = launch("doctor", env=user_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("CHECK") and "Traceback" not in done.stderr
    assert row(done.stdout, "Qt platform plugin") == ("OK", "offscreen loads")
    status, detail = row(done.stdout, "Fonts")
    assert status == "OK" and "Inter, JetBrains Mono loaded" in detail, detail
    assert row(done.stdout, "Themes") == ("OK", "dark, light")
    assert row(done.stdout, "Keyring")[0] in ("OK", "WARN")  # optional: never a failure
    assert row(done.stdout, "Config folder") == (
        "OK",
        f"{tmp_path / 'config'} (created 0700 at the first start)",
    )
    assert row(done.stdout, "Sandbox database")[0] == "OK"
    assert not list(tmp_path.iterdir()), "the doctor created something"


@pytest.mark.skipif(not os.path.exists("/usr/bin/ldd"), reason="needs ldd (Linux)")
def test_doctor_names_the_missing_library_and_its_packages(tmp_path: Path) -> None:
    platforms = plugin_missing_a_library(tmp_path / "qt")
    env = headless_xcb(tmp_path / "home", QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms))
    done = launch("doctor", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    status, detail = row(done.stdout, "Qt platform plugin")
    assert status == "FAIL" and "missing system libraries: libxcb-cursor.so.9" in detail
    assert re.search(r"^\s+-> Debian/Ubuntu: sudo apt install libxcb-cursor0$", done.stdout, re.M)
    assert re.search(r"^\s+-> Fedora: sudo dnf install xcb-util-cursor$", done.stdout, re.M)
    assert row(done.stdout, "Fonts")[0] == "WARN"
    assert "1 check(s) failed: Qt platform plugin" in done.stdout
    assert "Traceback" not in done.stderr


def test_doctor_without_a_display_says_so(tmp_path: Path) -> None:
    done = launch("doctor", env=headless_xcb(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    status, detail = row(done.stdout, "Qt platform plugin")
    assert status == "FAIL" and "no display: DISPLAY is not set" in detail, detail
    assert "QT_QPA_PLATFORM=offscreen" in done.stdout
    # Qt's own hint blames xcb-cursor even when it is installed: only ldd is trusted.
    installed = not missing_libraries(real_plugins() / XCB)
    assert not installed or "missing" not in detail, detail


def test_doctor_names_the_plugins_qt_has_when_asked_for_one_it_lacks(tmp_path: Path) -> None:
    done = launch("doctor", env={**user_env(tmp_path), "QT_QPA_PLATFORM": "nosuch"})
    assert done.returncode == 1, done.stdout + done.stderr
    status, detail = row(done.stdout, "Qt platform plugin")
    assert status == "FAIL" and detail.endswith(
        'there is no Qt platform plugin "nosuch" (QT_QPA_PLATFORM=nosuch)'
    ), detail
    assert re.search(r"-> Pick one Qt has: .*offscreen.*xcb", done.stdout), done.stdout


def test_the_terminal_without_a_display_prints_the_advice_not_an_abort(tmp_path: Path) -> None:
    done = launch("--sandbox", env=headless_xcb(tmp_path))
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith(
        'error: the terminal cannot open a window. Qt cannot load its platform plugin "xcb": '
    ), done.stderr
    assert "no display: DISPLAY is not set" in lines[0]
    assert lines[-1] == "  Run `tradeterm doctor` to check the whole machine."
    assert "This application failed to start" not in done.stderr
    assert "Traceback" not in done.stderr and "Aborted" not in done.stderr


@pytest.mark.skipif(not os.path.exists("/usr/bin/ldd"), reason="needs ldd (Linux)")
def test_the_terminal_names_the_missing_library_too(tmp_path: Path) -> None:
    platforms = plugin_missing_a_library(tmp_path / "qt")
    env = headless_xcb(tmp_path / "home", QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms))
    done = launch("--sandbox", env=env)
    assert done.returncode == 1, done.stderr
    assert "missing system libraries: libxcb-cursor.so.9" in done.stderr.splitlines()[0]
    assert "  Debian/Ubuntu: sudo apt install libxcb-cursor0" in done.stderr.splitlines()
    assert "  Fedora: sudo dnf install xcb-util-cursor" in done.stderr.splitlines()
    assert "This application failed to start" not in done.stderr


def test_doctor_reports_folders_others_can_read(tmp_path: Path) -> None:
    env = user_env(tmp_path)
    config, log = Path(env["TRADETERM_CONFIG_DIR"]), Path(env["TRADETERM_LOG_DIR"])
    config.mkdir(mode=0o700)
    (config / "tradeterm.ini").write_text("[General]\n")
    (config / "tradeterm.ini").chmod(0o644)
    log.mkdir()
    log.chmod(0o755)
    data = tmp_path / "data" / "tradeterm"
    data.mkdir(parents=True, mode=0o700)
    done = launch("doctor", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    status, detail = row(done.stdout, "Config folder")
    assert status == "FAIL" and f"{config / 'tradeterm.ini'} (0644)" in detail, detail
    assert f"-> chmod -R go-rwx {config}" in done.stdout
    status, detail = row(done.stdout, "Log folder")
    assert status == "FAIL" and f"{log} (0755)" in detail, detail
    assert row(done.stdout, "Data folder") == ("OK", f"{data} (private)")
    assert "2 check(s) failed: Config folder, Log folder" in done.stdout


def test_doctor_sees_the_sandbox_holding_its_database_and_the_service(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    running = SandboxProcess(db=str(db)).start()
    try:
        done = launch(
            "doctor", "--sandbox-db", str(db), "--url", running.url, env=user_env(tmp_path)
        )
    finally:
        running.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    status, detail = row(done.stdout, "Sandbox database")
    assert status == "OK" and f"in use by a running sandbox at {running.url}" in detail
    status, detail = row(done.stdout, "Service URL")
    assert status == "OK" and detail.startswith(f"{running.url} answers in "), detail
    free = launch("doctor", "--sandbox-db", str(db), env=user_env(tmp_path))
    assert row(free.stdout, "Sandbox database") == ("OK", f"{db}: free")


def test_doctor_fails_on_a_service_that_does_not_answer(tmp_path: Path) -> None:
    done = launch("doctor", "--url", "http://127.0.0.1:1", env=user_env(tmp_path))
    assert done.returncode == 1
    status, detail = row(done.stdout, "Service URL")
    assert status == "FAIL" and detail.startswith("http://127.0.0.1:1: cannot reach"), detail
    bad = launch("doctor", "--url", "ftp://example.com", env=user_env(tmp_path))
    assert bad.returncode == 2 and "must start with http:// or https://" in bad.stderr


def test_doctor_fails_on_a_sandbox_database_it_could_not_start_on(tmp_path: Path) -> None:
    """A lock held by a process that publishes no URL (a sandbox hung before listening), and a
    database another program holds locked: either way ``--sandbox`` would fail."""
    held, busy = tmp_path / "held.db", tmp_path / "busy.db"
    sqlite3.connect(held).close()
    lock = os.open(f"{held}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    writer = sqlite3.connect(busy, isolation_level=None)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        writer.execute("CREATE TABLE t (x)")
        writer.execute("BEGIN EXCLUSIVE")
        stale = launch("doctor", "--sandbox-db", str(held), env=user_env(tmp_path))
        locked = launch("doctor", "--sandbox-db", str(busy), env=user_env(tmp_path))
    finally:
        writer.close()
        os.close(lock)
    assert stale.returncode == locked.returncode == 1, stale.stdout + locked.stdout
    status, detail = row(stale.stdout, "Sandbox database")
    assert status == "FAIL" and "does not answer (at no published URL)" in detail, detail
    assert f"-> Stop the process holding {held}.lock" in stale.stdout
    status, detail = row(locked.stdout, "Sandbox database")
    assert (status, detail) == ("FAIL", f"{busy}: locked by another program (not a sandbox)")
