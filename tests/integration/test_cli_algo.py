"""``tradeterm algo``: parents worked by the CLI as a real subprocess against the session's
sandbox over loopback — filled exactly, paused by Ctrl-C, killed with SIGKILL and found again
by a new process with exactly what the sandbox filled.

Waits are on the CLI's own output lines (read with a deadline) or on the sandbox's answers,
never on a sleep.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.harness import SandboxProcess, Session, add_client, body

ROOT = Path(__file__).resolve().parents[2]
CREDENTIAL_VARS = ("TRADETERM_BASE_URL", "TRADETERM_USER", "TRADETERM_PASSWORD")
PAIR = "BTC/USD"
#: A slow TWAP: a child about every half second, so a signal lands mid-way.
SLOW_TWAP = (
    *("twap", "--pair", PAIR, "--side", "buy", "--amount", "2000"),
    *("--slices", "20", "--duration", "10", "--collar-bps", "50"),
)
FILLED_CHILDREN = re.compile(r"children \d+ \((\d+) filled, (\d+) out")
OUTCOME = re.compile(r"^(\w+) — ([\d,.]+) of ([\d,.]+) USD filled; (.+)$")


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line, parse_float=Decimal) for line in self.lines]


@dataclass
class Running:
    """A CLI process whose stdout is read line by line as it comes."""

    proc: subprocess.Popen[bytes]
    lines: list[str] = field(default_factory=list)
    _rest: bytes = b""
    #: What was read of stderr before the end (``err_until``), given back by ``finish``.
    _err: bytes = b""

    def err_until(self, text: str, timeout: float = 30.0) -> None:
        """Read stderr until ``text`` shows up (a notice the next step waits for)."""
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while text.encode() not in self._err and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self._err += chunk
        assert text.encode() in self._err, f"{text!r} not on stderr: {self._err.decode()!r}"

    def until(self, condition: Callable[[str], bool], timeout: float = 30.0) -> str:
        """The first line (seen or to come) that meets ``condition``; fails at the deadline
        or when the process ends without one."""
        for line in self.lines:
            if condition(line):
                return line
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            *complete, self._rest = (self._rest + chunk).split(b"\n")
            for raw in complete:
                line = raw.decode()
                self.lines.append(line)
                if condition(line):
                    return line
        raise AssertionError(f"no such line within {timeout} s; seen: {self.lines}")

    def finish(self, timeout: float = 60.0) -> Done:
        out, err = self.proc.communicate(timeout=timeout)
        text = "\n".join(self.lines) + ("\n" if self.lines else "")
        text += (self._rest + out).decode()
        return Done(self.proc.returncode, text, (self._err + err).decode())


@dataclass
class AlgoCli:
    """``python -m app algo ...`` with a trader's credentials in the environment and a
    journal of the test's own."""

    sandbox: SandboxProcess
    trader: Session
    journal: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRADETERM_")}
        env.update(
            TRADETERM_BASE_URL=self.sandbox.url,
            TRADETERM_USER=self.trader.user,
            TRADETERM_PASSWORD=self.trader.password,
            TRADETERM_ACCOUNT=self.trader.account,
        )
        return env

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "app", "algo", *args, "--journal", str(self.journal)]

    def __call__(self, *args: str, timeout: float = 60.0) -> Done:
        proc = subprocess.run(
            self.argv(*args),
            cwd=ROOT,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return self.checked(Done(proc.returncode, proc.stdout, proc.stderr))

    def start(self, *args: str) -> Running:
        proc = subprocess.Popen(
            self.argv(*args),
            cwd=ROOT,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return Running(proc)

    def checked(self, done: Done) -> Done:
        assert "Traceback" not in done.err, done
        assert self.trader.password not in done.out + done.err, done
        return done

    def listed(self) -> dict[str, dict[str, Any]]:
        """``algo list --json`` from a new process, by parent id."""
        done = self("list", "--json")
        assert done.code == 0, done
        parents = json.loads(done.out, parse_float=Decimal)["parents"]
        return {parent["id"]: parent for parent in parents}

    def stored_children(self, parent_id: str) -> list[str]:
        """The clientOrderIds the algo store holds for a parent (written before each child
        is sent, so a killed process leaves them all)."""
        with sqlite3.connect(self.journal.with_name("algos.db")) as db:
            rows = db.execute(
                "SELECT client_order_id FROM children WHERE parent_id = ?", (parent_id,)
            ).fetchall()
        return [row[0] for row in rows]

    def server_orders(self, client_order_ids: list[str]) -> list[dict[str, Any]]:
        """What the sandbox shows of these orders (each looked up by its clientOrderId)."""
        found = []
        for coid in client_order_ids:
            response = self.trader.get(
                "/api/v1/routing/order/account/{account}", max="10", clientOrderId=coid
            )
            assert response.status_code == 200, response.text
            found += body(response)["orders"]
        return found


def size(order: dict[str, Any]) -> Decimal:
    value, asset = order["size"].split()
    assert asset == "USD", order
    return Decimal(value)


def filled_on_server(orders: list[dict[str, Any]]) -> Decimal:
    return sum((size(o) for o in orders if o["result"]["status"] == "filled"), Decimal(0))


@pytest.fixture
def trader(sandbox: SandboxProcess) -> Iterator[Session]:
    """A fresh account whose password is unlike every name, so a leak would show."""
    name = f"algo-{uuid.uuid4().hex[:10]}"
    password = f"pw-{uuid.uuid4().hex}-secret"
    add_client(sandbox, name, password, {"USD": "100000", "BTC": "2.5"})
    session = Session(sandbox.url, name, password, f"acct-{name}")
    yield session
    session.close()


@pytest.fixture
def cli(sandbox: SandboxProcess, trader: Session, tmp_path: Path) -> AlgoCli:
    return AlgoCli(sandbox, trader, tmp_path / "journal.db")


def children_filled(line: str) -> int:
    match = FILLED_CHILDREN.search(line)
    return 0 if match is None else int(match[1])


def test_a_twap_fills_exactly_its_target_and_exits_0(cli: AlgoCli) -> None:
    done = cli(
        *("twap", "--pair", PAIR, "--side", "buy", "--amount", "1000.01"),
        *("--slices", "3", "--duration", "1", "--collar-bps", "50", "--json"),
    )
    assert done.code == 0, done
    events = done.json_lines()
    summary = events[-1]
    assert summary["event"] == "summary"
    assert all(event["event"] == "progress" for event in events[:-1])
    assert (summary["state"], summary["outcome"], summary["exitCode"]) == ("done", "filled", 0)
    assert (summary["target"], summary["asset"], summary["pair"]) == ("1000.01", "USD", PAIR)
    assert Decimal(summary["filled"]) == Decimal("1000.01")
    assert isinstance(summary["filled"], str) and isinstance(summary["averagePrice"], str)
    # a line per change: the filled amount only grows, a child at a time
    filled = [Decimal(event["filled"]) for event in events]
    assert filled == sorted(filled) and len(set(filled)) == 4
    children = summary["childOrders"]
    assert len(children) == 3 and {c["status"] for c in children} == {"filled"}
    orders = cli.server_orders([c["clientOrderId"] for c in children])
    assert len(orders) == 3 and {o["result"]["status"] for o in orders} == {"filled"}
    assert sum(size(o) for o in orders) == Decimal("1000.01")
    assert cli.stored_children(summary["id"]) == [c["clientOrderId"] for c in children]


def test_ctrl_c_pauses_mid_twap_and_a_new_process_lists_and_resumes_it(cli: AlgoCli) -> None:
    running = cli.start(*SLOW_TWAP)
    running.until(lambda line: children_filled(line) >= 2)
    running.proc.send_signal(signal.SIGINT)
    done = cli.checked(running.finish())
    assert done.code == 130, done
    outcome = OUTCOME.match(done.lines[-2])
    assert outcome is not None, done.lines
    assert outcome[1] == "interrupted"
    assert "nothing in flight" in outcome[4] or "still out" in outcome[4], outcome[4]
    parent_id = done.lines[-1].removeprefix("resume with: tradeterm algo resume ")
    assert re.fullmatch(r"algo-[0-9a-f]{12}", parent_id), done.lines[-1]
    filled = Decimal(outcome[2].replace(",", ""))
    assert Decimal(100) * 2 <= filled < Decimal(2000)

    listed = cli.listed()[parent_id]
    assert listed["state"] == "paused"
    assert Decimal(listed["filled"]) == filled
    orders = cli.server_orders(cli.stored_children(parent_id))
    assert filled_on_server(orders) == filled

    resumed = cli("resume", parent_id, "--json")
    assert resumed.code == 0, resumed
    summary = resumed.json_lines()[-1]
    assert (summary["id"], summary["outcome"]) == (parent_id, "filled")
    orders = cli.server_orders(cli.stored_children(parent_id))
    assert {o["result"]["status"] for o in orders} == {"filled"}
    assert sum(size(o) for o in orders) == Decimal(2000)


def test_ctrl_c_waits_for_a_resting_child_and_a_second_one_stops_waiting(cli: AlgoCli) -> None:
    """A child far from the market rests for an hour: the pause cannot cancel it, waits for
    it, says so, and a second Ctrl-C ends the wait with the child named as still out."""
    running = cli.start(
        *("timed", "--pair", PAIR, "--side", "buy", "--amount", "100", "--limit", "1000"),
        *("--start-at", "2020-01-01T00:00:00Z"),
    )
    running.until(lambda line: "(0 filled, 1 out, 1 resting)" in line)
    running.proc.send_signal(signal.SIGINT)
    running.until(lambda line: " paused: " in line and "1 resting" in line)
    # the second Ctrl-C once the wait has begun (sent sooner, both count before it starts)
    running.err_until("Ctrl-C again to stop waiting")
    running.proc.send_signal(signal.SIGINT)
    done = cli.checked(running.finish())
    assert done.code == 130, done
    assert "waiting up to" in done.err and "Ctrl-C again to stop waiting" in done.err, done
    outcome = OUTCOME.match(done.lines[-2])
    assert outcome is not None, done.lines
    assert outcome.group(1, 2) == ("interrupted", "0.00")
    assert outcome[4].startswith("100 USD still out: 1 resting until its end time"), outcome[4]
    parent_id = done.lines[-1].removeprefix("resume with: tradeterm algo resume ")

    listed = cli.listed()[parent_id]
    assert (listed["state"], listed["filled"]) == ("paused", "0")
    assert [c["status"] for c in listed["childOrders"]] == ["resting"]
    orders = cli.server_orders(cli.stored_children(parent_id))
    assert [o["result"]["status"] for o in orders] == ["submitted"]


def test_after_kill_9_a_new_process_shows_it_paused_with_the_sandboxs_fills(
    cli: AlgoCli,
) -> None:
    running = cli.start(*SLOW_TWAP, "--json")
    started = running.until(lambda line: json.loads(line)["childrenFilled"] >= 2)
    parent_id = json.loads(started)["id"]
    running.proc.send_signal(signal.SIGKILL)
    killed = running.finish()
    assert killed.code == -signal.SIGKILL
    assert not any(json.loads(line)["event"] == "summary" for line in killed.lines)

    listed = cli.listed()[parent_id]
    assert listed["state"] == "paused"
    orders = cli.server_orders(cli.stored_children(parent_id))
    on_server = filled_on_server(orders)
    assert on_server >= Decimal(200)
    assert Decimal(listed["filled"]) == on_server
    assert Decimal(listed["target"]) == Decimal(2000)


def test_a_twap_that_cannot_trade_at_its_limit_ends_unfilled_with_code_4(cli: AlgoCli) -> None:
    done = cli(
        *("twap", "--pair", PAIR, "--side", "buy", "--amount", "500"),
        *("--slices", "2", "--duration", "0.5", "--price-limit", "1"),
    )
    assert done.code == 4, done
    assert done.lines[-1] == "unfilled — 0.00 of 500.00 USD filled; nothing in flight"


def test_refusals_and_bad_values_exit_with_their_codes(cli: AlgoCli) -> None:
    jobs = (
        ("clip", "--pair", "ZZZ/USD", "--side", "sell", "--amount", "1", "--display", "1"),
        (*SLOW_TWAP, "--randomise", "80"),
        ("resume", "algo-000000000000"),
        ("stop", "--pair", PAIR, "--side", "sell", "--amount", "0.1"),
    )
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:  # each start of Python costs ~1 s
        refused, bad, unknown, missing = pool.map(lambda argv: cli(*argv), jobs)
    assert refused.code == 1 and "refused: ZZZ/USD is not a pair" in refused.err, refused
    assert bad.code == 2 and "randomisation is between 0 and 50 %" in bad.err, bad
    assert unknown.code == 2 and "no stored parent algo-000000000000" in unknown.err, unknown
    assert missing.code == 2 and "--trigger" in missing.err, missing
    assert cli.listed() == {}
