"""The sandbox process as users run it: start-up line, signals, persistence, options, info."""

from __future__ import annotations

import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import httpx
import platformdirs
import pytest

import app
from tests.harness import SandboxProcess, Session, body, digest

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"^Sandbox listening on (http://127\.0\.0\.1:(\d+))\n$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$")
ACCOUNT = "/api/v1/accounting/account/{account}"

Factory = Callable[..., SandboxProcess]


@dataclass
class Child:
    """A sandbox started here directly, so its whole stdout and its exit can be examined."""

    proc: subprocess.Popen[str]
    first_line: str
    stderr_file: IO[str]

    @property
    def url(self) -> str:
        match = LISTENING.match(self.first_line)
        assert match, self.first_line
        return match.group(1)

    def stderr(self) -> str:
        self.stderr_file.seek(0)
        return self.stderr_file.read()

    def signal_and_wait(self, sig: int, timeout: float) -> tuple[int, float]:
        """Send ``sig``; the exit code and how long the process took to exit."""
        started = time.monotonic()
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        return code, time.monotonic() - started

    def rest_of_stdout(self) -> str:
        """Everything printed after the first line (the process must have exited)."""
        assert self.proc.stdout is not None
        return self.proc.stdout.read()


@pytest.fixture
def launch() -> Iterator[Callable[..., Child]]:
    """``python -m app sandbox --port 0 ARGS`` without the harness's defaults; killed after."""
    children: list[Child] = []

    def start(*args: str, env: dict[str, str] | None = None, expect_line: bool = True) -> Child:
        stderr_file = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed at teardown
        proc = subprocess.Popen(
            [sys.executable, "-m", "app", "sandbox", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        child = Child(proc, "", stderr_file)
        children.append(child)
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if ready:
                child.first_line = proc.stdout.readline()
                break
            if proc.poll() is not None:
                break
        if expect_line:
            assert child.first_line, f"no start-up line; stderr: {child.stderr()}"
        return child

    yield start
    for child in children:
        if child.proc.poll() is None:
            child.proc.kill()
            child.proc.wait()
        if child.proc.stdout:
            child.proc.stdout.close()
        child.stderr_file.close()


def info(url: str, service: str = "routing") -> dict[str, Any]:
    response = httpx.get(f"{url}/api/v1/{service}/info", timeout=30)
    assert response.status_code == 200, response.text
    payload: dict[str, Any] = body(response)
    return payload


def parse_timestamp(text: str) -> datetime:
    assert TIMESTAMP.match(text), text
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# -- start and stop ----------------------------------------------------------------------------


def test_prints_one_listening_line_with_the_real_port(launch: Callable[..., Child]) -> None:
    child = launch("--db", ":memory:")
    match = LISTENING.match(child.first_line)
    assert match, repr(child.first_line)
    assert int(match.group(2)) != 0
    assert info(child.url)["info"]["service"] == "routing"

    code, _ = child.signal_and_wait(signal.SIGTERM, 10)
    assert code == 0, child.stderr()
    assert child.rest_of_stdout() == ""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_with_exit_code_zero(launch: Callable[..., Child], sig: int) -> None:
    child = launch("--db", ":memory:")
    # A client with an open keep-alive connection must not hold the shutdown up.
    with httpx.Client(base_url=child.url, timeout=30) as http:
        assert http.get("/api/v1/routing/time").status_code == 200
        code, elapsed = child.signal_and_wait(sig, 10)
    assert code == 0, child.stderr()
    assert elapsed < 5, elapsed
    assert "Traceback" not in child.stderr()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{child.url}/api/v1/routing/time", timeout=5)


# -- persistence -------------------------------------------------------------------------------


def snapshot(session: Session) -> dict[str, Any]:
    """Everything a client can read about its account that must survive a restart."""
    reads = {
        "account": session.get(ACCOUNT),
        "portfolio": session.get(ACCOUNT + "/portfolio"),
        "ledger": session.get("/api/v1/accounting/ledger/{account}", max="1000"),
        "orders": session.get("/api/v1/routing/order/account/{account}", max="1000"),
        "deposits": session.get(ACCOUNT + "/request/deposit", max="1000"),
        "instructions": session.get(ACCOUNT + "/request/deposit-instructions"),
        "initialBalances": session.get(
            "/api/v1/accounting/ledger/{account}", max="1000", type="initialBalances"
        ),
    }
    for name, response in reads.items():
        assert response.status_code == 200, (name, response.text)
    return {name: body(response) for name, response in reads.items()}


def test_state_survives_a_restart(sandbox_factory: Factory, tmp_path: Path) -> None:
    db = str(tmp_path / "p.db")
    first = sandbox_factory(db=db)
    session = Session(first.url, "demo", "demo", "demo")
    try:
        limit = session.limit_order("BTC", "USD", "0.05")
        assert limit.status_code == 200, limit.text
        limit_order = body(limit)["order"]
        assert limit_order["result"]["status"] == "filled"

        quote = session.post(
            "/api/v1/routing/account/{account}/order/rfq", {"assetPair": "ETH/USD", "size": "1 ETH"}
        )
        assert quote.status_code == 200, quote.text
        quote_id = body(quote)["orderId"]
        accepted = session.post(
            f"/api/v1/routing/account/{{account}}/order/rfq/{quote_id}/accept", {"side": "sell"}
        )
        assert accepted.status_code == 200, accepted.text
        assert body(accepted)["order"]["result"]["status"] == "filled"

        topped = session.post("/api/v1/sandbox/account/{account}/deposit", {"amount": "1234 USDT"})
        assert topped.status_code == 200, topped.text

        before = snapshot(session)
        old_token = session.token
    finally:
        session.close()

    # The snapshot holds the trades and the top-up, so comparing it is not vacuous.
    order_ids = {order["orderId"] for order in before["orders"]["orders"]}
    assert {limit_order["orderId"], quote_id} <= order_ids
    assert {"1234"} <= {str(d["amount"]) for d in before["deposits"]}
    trade_ids = {e["transactionId"] for e in before["ledger"] if e["eventType"] == "trade"}
    assert {limit_order["orderId"], quote_id} <= trade_ids
    assert before["initialBalances"]
    assert all(e["eventType"] == "initialBalances" for e in before["initialBalances"])

    assert first.stop() == 0

    second = sandbox_factory(db=db)
    # A token issued before the restart is still good: the signing secret lives in the DB.
    carried = Session(second.url, "demo", "demo", "demo", token=old_token)
    try:
        after = snapshot(carried)
        assert after == before
        # Not re-seeded: the demo funding was booked once.
        assert len(after["initialBalances"]) == len(before["initialBalances"])
        carried.login()
        assert carried.get(ACCOUNT).status_code == 200
    finally:
        carried.close()


def test_default_db_lives_in_the_user_data_dir(
    launch: Callable[..., Child], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg-data")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    expected = Path(platformdirs.user_data_dir("tradeterm", appauthor=False)) / "sandbox.db"
    assert expected.is_relative_to(tmp_path), expected
    assert not expected.exists()

    child = launch(env=env)
    assert expected.is_file(), sorted(str(p) for p in tmp_path.rglob("*"))
    login = httpx.post(
        f"{child.url}/api/v1/identity/jwt",
        json={"user": "demo", "password": digest("demo")},
        timeout=30,
    )
    assert login.status_code == 200, login.text
    code, _ = child.signal_and_wait(signal.SIGTERM, 10)
    assert code == 0, child.stderr()

    connection = sqlite3.connect(expected)
    try:
        users = {row[0] for row in connection.execute("SELECT user_id FROM users")}
    finally:
        connection.close()
    assert {"demo", "demo2"} <= users


# -- options -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    [
        pytest.param(["--credit-hours", "Funday 9-5"], id="credit-hours-funday"),
        pytest.param(["--credit-hours", "Mon-Fri 17:00-09:00 UTC"], id="credit-hours-backwards"),
        pytest.param(["--credit-hours", "Mon-Fri 09:00-17:00 Mars/Olympus"], id="credit-hours-tz"),
        pytest.param(["--token-ttl", "-1"], id="token-ttl-negative"),
        pytest.param(["--token-ttl", "0"], id="token-ttl-zero"),
        pytest.param(["--token-ttl", "nan"], id="token-ttl-nan"),
        pytest.param(["--token-ttl", "inf"], id="token-ttl-inf"),
        pytest.param(["--quote-ttl", "nan"], id="quote-ttl-nan"),
        pytest.param(["--tick", "nan"], id="tick-nan"),
    ],
)
def test_bad_option_exits_2_with_an_error_line(
    option: list[str], tmp_path: Path, launch: Callable[..., Child]
) -> None:
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    child = launch("--db", ":memory:", *option, env=env, expect_line=False)
    if child.first_line:  # it started anyway: stop it rather than wait for a timeout
        child.signal_and_wait(signal.SIGTERM, 10)
    code = child.proc.wait(20)
    stderr = child.stderr()
    started = child.first_line.startswith("Sandbox listening")
    assert not started, f"started despite {option}: {child.first_line!r}; stderr: {stderr[-800:]}"
    assert code == 2, (code, stderr)
    assert stderr.startswith("error:"), stderr
    assert "Traceback" not in stderr, stderr
    assert child.rest_of_stdout() == ""


# -- service information -----------------------------------------------------------------------


def test_info_reports_version_and_launch_time(sandbox_factory: Factory) -> None:
    before = datetime.now(UTC)
    process = sandbox_factory()
    after = datetime.now(UTC)

    first = info(process.url)
    assert first["status"] == "ok"
    assert first["httpStatusCode"] == 200
    details = first["info"]
    assert details["build"]["version"] == app.version()
    launched = parse_timestamp(details["applicationLaunchTime"])
    slack = timedelta(seconds=1)
    assert before - slack <= launched <= after + slack, (before, launched, after)

    built = parse_timestamp(details["build"]["iso8601"])
    assert details["build"]["unixSeconds"] == int(built.timestamp())

    # The launch time is fixed for the life of the process, and the same for every service.
    for service in ("routing", "accounting", "identity"):
        again = info(process.url, service)["info"]
        assert again["applicationLaunchTime"] == details["applicationLaunchTime"]
        assert again["build"] == details["build"]
