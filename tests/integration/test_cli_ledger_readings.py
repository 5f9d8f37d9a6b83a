"""``tradeterm api ledger`` against the stand-in service (tests/standin) in each fair reading of
Get Transactions' paging: whichever way the service answers, the command prints the entries in
the order its first line says — newest first, or oldest first with ``--asc`` — and the JSON
lists them the same way. Each reading runs the command's handler in this process (through the
ASGI transport); one reading runs the real ``python -m app api`` over loopback."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import uvicorn

from app.api import ClientSettings, ServiceClient
from app.cli import commands, parser
from tests.standin.server import URL, Standin, StandinConfig

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\s*(\d+)\s+\d{4}-")  # a table row starts with its ordering and time
READINGS = [
    pytest.param(StandinConfig(max_counts=counts, order=order), id=f"max={counts}-{order}")
    for counts in ("entries", "transactions")
    for order in ("ascending", "descending")
]


def orderings(text: str) -> list[int]:
    return [int(match.group(1)) for line in text.splitlines() if (match := ROW.match(line))]


async def run_ledger(standin: Standin, *argv: str) -> commands.Output:
    args = parser.build().parse_args(["ledger", *argv])
    async with ServiceClient(ClientSettings(URL), transport=standin.transport()) as client:
        await client.login("trader", "secret", standin.config.account)
        return await commands.ledger(client, args)


@pytest.mark.parametrize("config", READINGS)
@pytest.mark.parametrize("asc", [False, True], ids=["newest-first", "oldest-first"])
def test_the_ledger_prints_every_entry_in_the_order_it_says(
    config: StandinConfig, asc: bool
) -> None:
    standin = Standin(config)
    argv = ["--max", "300", *(["--asc"] if asc else [])]
    output = asyncio.run(run_ledger(standin, *argv))
    said = "oldest first" if asc else "newest first"
    assert output.note == f"Ledger: 300 entries, {said}"
    printed = orderings(output.text)
    assert len(printed) == 300
    assert printed == sorted(printed, reverse=not asc)
    assert sorted(printed) == sorted(entry.ordering for entry in standin.ledger)
    listed = [int(entry["ordering"]) for entry in output.data]
    assert listed == printed
    # A trade's legs sit together, source first, whichever way the service sent them.
    types = [line.split()[2] for line in output.text.splitlines() if ROW.match(line)]
    for above, below, here, there in zip(types, types[1:], printed, printed[1:], strict=False):
        if here == there:
            assert (above, below) == ("trade/source", "trade/destination")


def test_from_an_ordering_the_order_is_the_one_said_not_the_services() -> None:
    """``--start-at-ordering`` on a service that reads it upwards: the entries it answered
    (at and above), printed newest first as the command says."""
    standin = Standin(StandinConfig(order="ascending"))
    start = standin.ledger[200].ordering
    output = asyncio.run(run_ledger(standin, "--start-at-ordering", str(start)))
    printed = orderings(output.text)
    assert printed == sorted(printed, reverse=True) and min(printed) == start
    assert output.note == "Ledger: 100 entries, newest first"


@pytest.fixture
def served() -> Iterator[tuple[Standin, str]]:
    """The stand-in (max counts entries, pages run oldest first) over loopback (uvicorn)."""
    standin = Standin(StandinConfig())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(standin.app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            thread.join(0.01)
        assert server.started
        yield standin, f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_the_command_itself_prints_newest_first_from_an_oldest_first_service(
    served: tuple[Standin, str],
) -> None:
    standin, url = served
    env = dict(os.environ, TRADETERM_BASE_URL=url, TRADETERM_USER="trader")
    env |= {"TRADETERM_PASSWORD": "pw-stand-in", "TRADETERM_ACCOUNT": standin.config.account}
    runs, notes = {}, {}
    for name, extra in (("text", []), ("json", ["--json"])):
        proc = subprocess.run(
            [sys.executable, "-m", "app", "api", *extra, "ledger", "--max", "300"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        runs[name], notes[name] = proc.stdout, proc.stderr
    assert notes == dict.fromkeys(runs, "Ledger: 300 entries, newest first\n")
    assert len(runs["text"].splitlines()) == 301  # the header and 300 entries
    printed = orderings(runs["text"])
    assert len(printed) == 300 and printed == sorted(printed, reverse=True)
    listed = json.loads(runs["json"], parse_float=Decimal)
    assert [int(entry["ordering"]) for entry in listed] == printed
    assert [q.get("startAtOrdering") for q in standin.ledger_queries] == [None, None]
