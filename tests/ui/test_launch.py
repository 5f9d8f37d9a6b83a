"""Launch modes as a user runs them: real processes, offscreen."""

from __future__ import annotations

import json
import mmap
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.harness import Faults, SandboxProcess, add_client, digest, new_client

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def launch(
    *args: str, env: dict[str, str], timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("TRADETERM_")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        TRADETERM_CONFIG_DIR=str(tmp_path / "config"),
        TRADETERM_LOG_DIR=str(tmp_path / "log"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path),
    )
    return env


@pytest.mark.slow
def test_sandbox_smoke_test_writes_a_screenshot_and_stops_its_child(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    shot = tmp_path / "shot.png"
    done = launch("--sandbox", "--smoke-test", "--screenshot", str(shot), env=clean_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000
    match = re.search(r"received from (http://\S+);", done.stdout)
    assert match, done.stdout
    with pytest.raises(httpx.ConnectError):  # the child sandbox stopped with the app
        httpx.get(f"{match.group(1)}/api/v1/routing/time", timeout=2)


@pytest.mark.slow
def test_every_file_the_terminal_and_its_sandbox_create_is_private(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    """Settings, logs, the journal and the sandbox's database are 0600 in 0700
    folders (they hold account names, order history and the sandbox's signing secret)."""
    done = launch("--sandbox", "--smoke-test", env=clean_env)
    assert done.returncode == 0, done.stdout + done.stderr
    created = [path for path in tmp_path.rglob("*") if "cache" not in path.parts]
    names = {path.name for path in created}
    assert {"tradeterm.ini", "tradeterm.log", "journal.db", "sandbox.db"} <= names, names
    for path in created:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path}: {oct(mode)}"


@pytest.mark.slow
def test_environment_logs_in_without_the_dialog(
    sandbox: SandboxProcess, clean_env: dict[str, str]
) -> None:
    account = new_client(sandbox)
    env = {
        **clean_env,
        "TRADETERM_BASE_URL": sandbox.url,
        "TRADETERM_USER": account.user,
        "TRADETERM_PASSWORD": account.password,
        "TRADETERM_ACCOUNT": account.account,
    }
    done = launch("--smoke-test", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"received from {sandbox.url}" in done.stdout
    account.close()


@pytest.mark.slow
def test_a_wrong_password_in_the_environment_is_one_clear_line(
    sandbox: SandboxProcess, clean_env: dict[str, str]
) -> None:
    env = {
        **clean_env,
        "TRADETERM_BASE_URL": sandbox.url,
        "TRADETERM_USER": "demo",
        "TRADETERM_PASSWORD": "not-the-password",
        "TRADETERM_ACCOUNT": "demo",
    }
    done = launch("--smoke-test", env=env)
    assert done.returncode == 1
    assert done.stderr.strip() == "error: login failed: Wrong user or password."
    assert "not-the-password" not in done.stdout + done.stderr


@pytest.mark.slow
def test_smoke_test_fails_with_a_reason_when_prices_never_come(
    sandbox: SandboxProcess, clean_env: dict[str, str]
) -> None:
    account = new_client(sandbox)
    faults = Faults(sandbox)
    faults({"kind": "status", "status": 503, "path": f"/account/{account.account}/topofbook"})
    try:
        env = {
            **clean_env,
            "TRADETERM_BASE_URL": sandbox.url,
            "TRADETERM_USER": account.user,
            "TRADETERM_PASSWORD": account.password,
            "TRADETERM_ACCOUNT": account.account,
            "TRADETERM_SMOKE_TIMEOUT": "4",
        }
        done = launch("--smoke-test", env=env)
    finally:
        faults.clear()
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: smoke test: no top of book"), lines
    account.close()


@pytest.mark.slow
def test_a_debug_session_logs_no_password_hash_or_token(
    sandbox: SandboxProcess, clean_env: dict[str, str], tmp_path: Path
) -> None:
    """A whole DEBUG session (login, feeds, smoke test) leaves no secret in the log file."""
    password = "Corr3ct-Horse-" + os.urandom(6).hex()
    user = "secret-check-" + os.urandom(4).hex()
    add_client(sandbox, user, password, {"USD": "1000"})
    token = httpx.post(
        f"{sandbox.url}/api/v1/identity/jwt", json={"user": user, "password": digest(password)}
    ).json()["token"]
    logs = tmp_path / "logs"
    env = {
        **clean_env,
        "TRADETERM_LOG_DIR": str(logs),
        "TRADETERM_BASE_URL": sandbox.url,
        "TRADETERM_USER": user,
        "TRADETERM_PASSWORD": password,
        "TRADETERM_ACCOUNT": f"acct-{user}",
    }
    done = launch("--smoke-test", "--log-level", "debug", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    text = "\n".join(path.read_text() for path in logs.glob("tradeterm.log*"))
    assert "DEBUG   tradeterm.api" in text  # the level took effect
    assert "POST /api/v1/identity/jwt -> 200" in text  # the login request itself was logged
    for secret in (password, digest(password), token.split(".")[2]):
        assert secret not in text
    assert "eyJ" not in text  # no JWT at all (header of any token)
    assert "Bearer" not in text


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcore") is None, reason="gcore (gdb) is not installed")
def test_a_core_of_the_logged_in_terminal_holds_no_password(
    sandbox: SandboxProcess, clean_env: dict[str, str], tmp_path: Path
) -> None:
    """The terminal logged in from the environment, stopped once it shows prices and dumped with
    gcore (as root can, though the process is not dumpable): the plain password is nowhere in
    its memory, in any encoding; the hash the service takes is there (re-logins need it)."""
    password = "Corr3ct-Horse-" + os.urandom(8).hex()
    user = "core-check-" + os.urandom(4).hex()
    add_client(sandbox, user, password, {"USD": "1000"})
    env = {
        **clean_env,
        "TRADETERM_BASE_URL": sandbox.url,
        "TRADETERM_USER": user,
        "TRADETERM_PASSWORD": password,
        "TRADETERM_ACCOUNT": f"acct-{user}",
    }
    terminal = subprocess.Popen(
        [sys.executable, "-m", "app", "--smoke-test"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert terminal.stdout is not None and terminal.stderr is not None
        line = terminal.stdout.readline()  # the first smoke-test line: logged in, prices shown
        assert line.startswith(b"smoke test:"), line + terminal.stderr.read()
        terminal.send_signal(signal.SIGSTOP)
        dumped = subprocess.run(
            [str(shutil.which("gcore")), "-o", str(tmp_path / "core"), str(terminal.pid)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        cores = list(tmp_path.glob("core.*"))
        if not cores:
            pytest.skip(f"gcore could not dump the terminal (not dumpable): {dumped.stderr[-200:]}")
        with (
            cores[0].open("rb") as file,
            mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as core,
        ):
            found = {
                encoding: core.find(password.encode(encoding)) >= 0
                for encoding in ("utf-8", "utf-16-le", "utf-32-le")
            }
            hashed = core.find(digest(password).encode()) >= 0
            size_mib = core.size() >> 20
    finally:
        terminal.send_signal(signal.SIGCONT)
        terminal.communicate(timeout=60)
        for core_file in tmp_path.glob("core.*"):
            core_file.unlink()  # a gigabyte
    print(json.dumps({"core_mib": size_mib, "password_found": found}))
    assert found == {"utf-8": False, "utf-16-le": False, "utf-32-le": False}
    assert hashed
