"""Secrets: the environment's password leaves the environment when read, and the
terminal's process writes no core dump and creates private files."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.private import ENV_LOGIN, keep_private, take_env_login


def test_the_environment_password_is_gone_once_read(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in zip(ENV_LOGIN, ("http://x", "alice", "s3cret", "acct"), strict=True):
        monkeypatch.setenv(key, value)
    digest = hashlib.sha256(b"s3cret").hexdigest()
    assert take_env_login() == ("http://x", "alice", digest, "acct")
    assert "TRADETERM_PASSWORD" not in os.environ
    assert take_env_login() is None  # nothing to log in with a second time


@pytest.mark.slow
def test_main_disables_core_dumps_and_makes_new_files_private(tmp_path: Path) -> None:
    script = (
        "import os, resource, sys\n"
        "from app.__main__ import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(resource.getrlimit(resource.RLIMIT_CORE))\n"
        f"open({str(tmp_path / 'new.txt')!r}, 'w').close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "(0, 0)"
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o600


def test_files_an_older_version_left_open_are_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    folder.mkdir(mode=0o755)
    loose = folder / "tradeterm.ini"
    loose.write_text("x")
    loose.chmod(0o644)
    keep_private(folder, loose, tmp_path / "missing")
    assert folder.stat().st_mode & 0o777 == 0o700
    assert loose.stat().st_mode & 0o777 == 0o600


SECRET = "correct-horse-battery-staple-31337"
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()


def run_python(script: str, env: dict[str, str], **options: object) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, **env},
        **options,  # type: ignore[call-overload]
    )
    assert done.returncode == 0, done.stderr
    return str(done.stdout)


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and prctl are Linux's")
def test_the_password_leaves_the_processs_own_environment_block() -> None:
    """Not only ``os.environ``: the block the process started with, which /proc/self/environ
    and a core show, no longer holds it once taken."""
    script = (
        "from app.private import take_password_digest\n"
        "before = open('/proc/self/environ', 'rb').read()\n"
        f"print({SECRET!r}.encode() in before)\n"
        "print(take_password_digest())\n"
        "after = open('/proc/self/environ', 'rb').read()\n"
        f"print({SECRET!r}.encode() in after)\n"
    )
    lines = run_python(script, {"TRADETERM_PASSWORD": SECRET}).splitlines()
    assert lines == ["True", DIGEST, "False"]


@pytest.mark.skipif(sys.platform != "linux", reason="pipes as descriptors, Linux's /proc")
def test_the_password_can_come_from_a_descriptor_and_never_be_in_the_environment() -> None:
    read, write = os.pipe()
    os.write(write, f"{SECRET}\r\nthe next line is not read\n".encode())
    os.close(write)
    script = (
        "from app.private import take_password_digest\n"
        "print(take_password_digest())\n"
        f"print({SECRET!r}.encode() in open('/proc/self/environ', 'rb').read())\n"
    )
    try:
        lines = run_python(
            script, {"TRADETERM_PASSWORD_FD": str(read)}, pass_fds=(read,)
        ).splitlines()
    finally:
        os.close(read)
    assert lines == [DIGEST, "False"]


@pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux's")
def test_the_terminal_process_is_not_dumpable() -> None:
    script = (
        "import ctypes\n"
        "from app.private import harden_process\n"
        "harden_process()\n"
        "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"  # PR_GET_DUMPABLE
    )
    assert run_python(script, {}).strip() == "0"
