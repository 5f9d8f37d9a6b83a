"""The sandbox as trustworthy as a venue: execution time, one writer per database,
compare-and-set on orders, idempotency fingerprints and keep-alive, over loopback."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sqlite3
import stat
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api import ClientSettings, OutcomeUnknown, ServiceClient
from app.domain import Amount, parse_timestamp
from app.sandbox.config import SandboxConfig
from app.sandbox.context import Sandbox
from app.sandbox.market import MarketQuote
from app.sandbox.store import DatabaseInUse, LinkedDatabase, Store
from app.services.sandbox_child import SandboxChild, SandboxStartFailed, lock_held
from tests.harness import (
    Faults,
    SandboxProcess,
    Session,
    body,
    digest,
    invariant,
    launch,
    new_client,
    until,
    user_env,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[2]


# -- raw HTTP over loopback -------------------------------------------------------------------


def connect(sandbox: SandboxProcess) -> socket.socket:
    host, port = sandbox.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=15)


def head(method: str, path: str, token: str, length: int, extra: str = "") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: venue-test\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n{extra}\r\n"
    ).encode()


def read_response(sock: socket.socket) -> tuple[int, Any]:
    """One HTTP/1.1 response with a Content-Length: status and decoded JSON body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    header, rest = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1])
        for line in header.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside the body"
        rest += chunk
    return int(header.split(b" ", 2)[1]), json.loads(rest[:length], parse_float=Decimal)


def server_time(sandbox: SandboxProcess) -> datetime:
    return parse_timestamp(httpx.get(f"{sandbox.url}/api/v1/routing/time").json()["time"])


def order_body(session: Session, **fields: Any) -> dict[str, Any]:
    return {
        "accountId": {"value": session.account},
        "type": "limit",
        "source": "USD",
        "destination": "BTC",
        "size": "100",
        **fields,
    }


# -- 1. time of execution ---------------------------------------------------------------------


@pytest.mark.slow
def test_an_accept_whose_body_arrives_after_expiry_is_refused(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    """Headers in time, body after the quote expired: 410, and nothing traded."""
    sandbox = sandbox_factory("--quote-ttl", "1")
    client = new_client(sandbox)
    quoted = client.post(
        "/api/v1/routing/account/{account}/order/rfq", {"assetPair": "BTC/USD", "size": "0.01 BTC"}
    )
    assert quoted.status_code == 200, quoted.text
    quote = quoted.json()
    expires = parse_timestamp(quote["buy"]["expiresAt"])
    payload = json.dumps({"side": "buy"}).encode()
    path = f"/api/v1/routing/account/{client.account}/order/rfq/{quote['orderId']}/accept"
    with connect(sandbox) as sock:
        sock.sendall(head("POST", path, client.token, len(payload)))
        assert server_time(sandbox) < expires  # the headers arrived in time
        wait_until(lambda: server_time(sandbox) > expires, timeout=5)
        sock.sendall(payload)
        status, answer = read_response(sock)
    assert status == 410, answer
    assert "expired" in answer["errors"][0]
    order = client.get(f"/api/v1/routing/order/account/{{account}}/order/{quote['orderId']}")
    assert order.status_code == 404  # no order, no trade
    ledger = client.get("/api/v1/accounting/ledger/{account}", max=10).json()
    assert all(entry["eventType"] != "trade" for entry in ledger), ledger
    client.close()


@pytest.mark.slow
def test_an_order_is_stamped_when_its_body_is_complete(
    sandbox: SandboxProcess, client: Session
) -> None:
    """An order whose body trails its headers by a second is dated when the body finished,
    not when the headers came."""
    payload = json.dumps(order_body(client, type="market", clientOrderId="late-body")).encode()
    path = f"/api/v1/routing/account/{client.account}/order"
    with connect(sandbox) as sock:
        sent_headers = datetime.now(UTC)
        sock.sendall(head("POST", path, client.token, len(payload)))
        wait_until(lambda: (server_time(sandbox) - sent_headers).total_seconds() > 1, timeout=5)
        body_done = datetime.now(UTC)
        sock.sendall(payload)
        status, answer = read_response(sock)
    assert status == 200, answer
    order = answer["order"]
    assert order["result"]["status"] == "filled"
    assert parse_timestamp(order["submittedAt"]) >= body_done
    assert parse_timestamp(order["result"]["executedAt"]) >= body_done
    ledger = client.get("/api/v1/accounting/ledger/{account}", max=1).json()
    assert parse_timestamp(ledger[0]["eventTime"]) >= body_done


def test_a_body_slower_than_the_limit_is_cut_with_408(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    sandbox = sandbox_factory("--body-timeout", "0.5")
    client = new_client(sandbox)
    payload = json.dumps(order_body(client, clientOrderId="never-finished")).encode()
    path = f"/api/v1/routing/account/{client.account}/order/limit"
    with connect(sandbox) as sock:
        started = time.monotonic()
        sock.sendall(head("POST", path, client.token, len(payload)) + payload[:10])
        status, answer = read_response(sock)
        waited = time.monotonic() - started
    assert status == 408, answer
    assert answer["status"] == "requestTimeout" and answer["httpStatusCode"] == 408
    assert 0.4 < waited < 5
    listed = client.get("/api/v1/routing/order/account/{account}", clientOrderId="never-finished")
    assert listed.json()["orders"] == []
    client.close()


# -- 2. one writer per database ---------------------------------------------------------------


@pytest.mark.slow
def test_a_second_sandbox_on_one_database_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "venue.db")
    first = SandboxProcess(db=db).start()
    try:
        url_file = Path(db + ".url")
        assert url_file.read_text().strip() == first.url
        assert stat.S_IMODE(url_file.stat().st_mode) == 0o600
        second = launch("sandbox", "--port", "0", "--db", db, timeout=60)
        assert second.returncode == 1, second.stderr
        assert "Sandbox listening" not in second.stdout
        line = second.stderr.strip()
        assert line.startswith("error: the sandbox database") and "in use" in line, line
        assert first.url in line
        assert httpx.get(f"{first.url}/api/v1/routing/time").status_code == 200  # untouched
    finally:
        assert first.stop() == 0
        first.close()
    assert not Path(db + ".url").exists()  # a stopped sandbox no longer advertises itself
    again = SandboxProcess(db=db).start()  # and the lock went with it
    again.close()


def test_the_store_takes_the_lock_and_memory_needs_none(tmp_path: Path) -> None:
    db = str(tmp_path / "locked.db")
    store = Store(db)
    with pytest.raises(DatabaseInUse, match="in use by another sandbox"):
        Store(db)
    store.close()
    Store(db).close()  # released with close
    Store(":memory:").close()
    Store(":memory:").close()


def _resting_order(sandbox: Sandbox) -> str:
    principal = sandbox.auth.principal("demo")
    assert principal is not None
    body = {
        "accountId": {"value": "demo"},
        "source": "BTC",
        "destination": "USD",
        "size": "0.5",
        "limit": "900000000",
    }
    placed = sandbox.orders.submit(principal, "demo", body, sandbox.now(), "limit")
    order_id: str = placed["order"]["orderId"]
    assert placed["order"]["result"]["status"] == "submitted"
    return order_id


def test_filling_one_order_twice_books_it_once() -> None:
    """The fill is a compare-and-set on ``submitted``: the second call finds the order filled
    and rolls back, whatever price it was called with."""
    sandbox = Sandbox.create(SandboxConfig())
    order_id = _resting_order(sandbox)
    assert order_id in sandbox.orders.resting
    crossing = MarketQuote("BTC/USD", Decimal(10**9), Decimal(1), Decimal(10**9 + 1), Decimal(1))
    higher = MarketQuote("BTC/USD", Decimal(2 * 10**9), Decimal(1), Decimal(3 * 10**9), Decimal(1))
    assert sandbox.orders.fill(order_id, crossing) is True
    assert sandbox.orders.fill(order_id, higher) is False
    trades = sandbox.store.query("SELECT * FROM ledger WHERE transaction_id = ?", (order_id,))
    assert len(trades) == 2  # one trade: two legs
    assert sorted(Decimal(t["amount"]) for t in trades) == [Decimal("-0.5"), Decimal(5 * 10**8)]
    row = sandbox.orders.get_row(order_id)
    assert row["status"] == "filled" and row["price"].startswith("1000000000 ")
    assert sandbox.store.balance("demo", "BTC").locked == 0
    assert order_id not in sandbox.orders.resting
    assert sandbox.orders.cancel_expired(order_id) is False  # no unlock of a filled order
    assert sandbox.store.balance("demo", "BTC").locked == 0
    sandbox.store.close()


def test_a_restart_finds_resting_orders_and_the_matcher_touches_only_crossed_ones(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "restart.db")
    first = Sandbox.create(SandboxConfig(db_path=db))
    order_id = _resting_order(first)
    first.store.close()
    again = Sandbox.create(SandboxConfig(db_path=db))
    assert order_id in again.orders.resting and len(again.orders.resting) == 1
    assert again.orders.match_resting() == 0  # far from the market: untouched
    assert again.orders.get_row(order_id)["status"] == "submitted"
    again.store.close()


@pytest.mark.slow
def test_the_invariant_catches_a_tampered_locked_balance(tmp_path: Path) -> None:
    db = str(tmp_path / "tamper.db")
    sandbox = SandboxProcess(db=db).start()
    try:
        client = new_client(sandbox)
        placed = client.limit_order("BTC", "USD", "0.25", limit="900000000")
        assert placed.json()["order"]["result"]["status"] == "submitted", placed.text
        report = invariant(sandbox, client.account)
        btc = report["assets"]["BTC"]
        assert report["holds"] and btc["locked"] == btc["restingLocked"] == 0.25, report
        with sqlite3.connect(db) as tamper:  # move 0.1 BTC from free to locked behind its back
            tamper.execute(
                "UPDATE balances SET free = ?, locked = ? WHERE account_id = ? AND asset = 'BTC'",
                ("1.65", "0.35", client.account),
            )
        report = invariant(sandbox, client.account)
        btc = report["assets"]["BTC"]
        assert btc["ledgerHolds"] is True  # free + locked still matches the ledger
        assert btc["lockedHolds"] is False and report["holds"] is False, report
        client.close()
    finally:
        sandbox.close()


# -- 3. idempotency ---------------------------------------------------------------------------


def test_a_reused_client_order_id_with_another_limit_or_end_is_409(client: Session) -> None:
    first = client.limit_order("USD", "BTC", "100", limit="0.000001", clientOrderId="fp-1")
    assert first.status_code == 200, first.text
    original = first.json()["order"]
    same = client.limit_order("USD", "BTC", "100", limit="0.000001", clientOrderId="fp-1")
    assert same.status_code == 200 and same.json()["order"]["orderId"] == original["orderId"]
    other_limit = client.limit_order("USD", "BTC", "100", limit="0.000002", clientOrderId="fp-1")
    assert other_limit.status_code == 409, other_limit.text
    message = other_limit.json()["errors"][0]
    assert "limit differs" in message and "size" not in message, message
    ends = "2099-01-01T00:00:00Z"
    other_end = client.limit_order(
        "USD", "BTC", "100", limit="0.000001", endAt=ends, clientOrderId="fp-1"
    )
    assert other_end.status_code == 409
    assert "endAt differs" in other_end.json()["errors"][0]
    both = client.limit_order("USD", "BTC", "101", limit="0.000003", clientOrderId="fp-1")
    message = both.json()["errors"][0]
    assert both.status_code == 409 and "size differs" in message and "limit differs" in message
    listed = client.get("/api/v1/routing/order/account/{account}", clientOrderId="fp-1").json()
    assert [o["orderId"] for o in listed["orders"]] == [original["orderId"]]


def _fiat(client: Session, amount: str, key: str, *, header: bool = False) -> httpx.Response:
    path = "/api/v1/accounting/account/{account}/request/withdraw/fiat"
    if header:
        return client.http.post(
            path.format(account=client.account),
            json={"amount": amount, "method": "wire"},
            headers={**client.headers, "Idempotency-Key": key},
        )
    return client.post(path, {"amount": amount, "method": "wire", "clientRequestId": key})


@pytest.mark.parametrize("header", [False, True], ids=["clientRequestId", "Idempotency-Key"])
def test_a_withdrawal_key_replays_the_same_request_and_refuses_another(
    sandbox: SandboxProcess, header: bool
) -> None:
    client = new_client(sandbox)
    first = _fiat(client, "100 USD", "wd-1", header=header)
    assert first.status_code == 200, first.text
    again = _fiat(client, "100 USD", "wd-1", header=header)
    assert again.status_code == 200
    assert again.json()["withdrawal"] == first.json()["withdrawal"]
    other = _fiat(client, "150 USD", "wd-1", header=header)
    assert other.status_code == 409, other.text
    assert "amount differs" in other.json()["errors"][0]
    listed = client.get("/api/v1/accounting/account/{account}/request/withdraw").json()
    assert [w["amount"] for w in listed] == [100]  # money moved once
    assert invariant(sandbox, client.account)["assets"]["USD"]["free"] == 100000 - 100
    client.close()


def test_a_refused_withdrawal_replays_its_refusal(client: Session) -> None:
    first = _fiat(client, "900000 USD", "wd-broke")
    assert first.status_code == 424
    client.post(
        "/api/v1/sandbox/account/{account}/deposit", {"amount": "900000 USD"}
    ).raise_for_status()
    again = _fiat(client, "900000 USD", "wd-broke")
    assert again.status_code == 424 and body(again) == body(first)  # the original answer


# -- 4. keep-alive ----------------------------------------------------------------------------


@pytest.mark.slow
def test_an_idle_keep_alive_connection_outlives_seven_seconds(sandbox: SandboxProcess) -> None:
    """uvicorn's default drops idle connections after 5 s; the sandbox keeps them 75 s."""
    request = b"GET /api/v1/routing/time HTTP/1.1\r\nHost: venue-test\r\n\r\n"
    with connect(sandbox) as sock:
        sock.sendall(request)
        assert read_response(sock)[0] == 200
        closed, _, _ = select.select([sock], [], [], 7.0)  # readable = the server hung up
        assert not closed
        sock.sendall(request)
        assert read_response(sock)[0] == 200


def test_files_next_to_the_database_are_private(tmp_path: Path) -> None:
    db = str(tmp_path / "private.db")
    store = Store(db)
    store.publish_url("http://127.0.0.1:1")
    for suffix in (".lock", ".url"):
        assert stat.S_IMODE(os.stat(db + suffix).st_mode) == 0o600
    store.close()


# -- 5. a second terminal joins the running sandbox -------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_second_terminal_uses_the_running_sandbox_and_leaves_it_running(
    tmp_path: Path,
) -> None:
    """``tradeterm --sandbox`` twice on one database: the second finds the lock, uses the
    first one's sandbox, and does not stop it when it exits; the first one does."""
    db = str(tmp_path / "shared.db")
    first = SandboxChild(db)
    url = await first.start()
    try:
        second = SandboxChild(db)
        assert await second.start() == url
        assert second.reused and not first.reused
        assert await second.stop() is None  # nothing of its own to stop
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{url}/api/v1/routing/time")
            assert answer.status_code == 200  # still running for the first terminal
    finally:
        assert await first.stop() == 0
    assert not lock_held(db)
    async with httpx.AsyncClient() as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(f"{url}/api/v1/routing/time")


@pytest.mark.anyio
async def test_a_locked_database_without_an_answering_sandbox_is_a_clear_failure(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "silent.db")
    holder = Store(db)  # holds the lock, publishes nothing
    try:
        with pytest.raises(SandboxStartFailed, match="in use by another process"):
            await SandboxChild(db, join_seconds=0.3).start()
    finally:
        holder.close()


@pytest.mark.slow
def test_tradeterm_sandbox_logs_in_to_the_sandbox_already_running_on_its_database(
    tmp_path: Path,
) -> None:
    """The terminal as users start it, while a sandbox already runs on the default database:
    it logs in there (no second sandbox) and leaves it running when it exits."""
    running = SandboxProcess(db=str(tmp_path / "data" / "tradeterm" / "sandbox.db")).start()
    try:
        done = launch("--sandbox", "--smoke-test", env=user_env(tmp_path))
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"received from {running.url};" in done.stdout
        assert httpx.get(f"{running.url}/api/v1/routing/time").status_code == 200
    finally:
        running.close()


@pytest.mark.anyio
async def test_a_lost_withdrawal_resent_with_its_key_withdraws_once(
    sandbox: SandboxProcess, client: Session, faults: Faults
) -> None:
    """The client's promise after an unknown outcome: resend with the same key. The sandbox
    answers with the withdrawal it already made, and the money moved once."""
    async with ServiceClient(ClientSettings(sandbox.url)) as api:
        await api.login(client.user, client.password, client.account)
        faults({"kind": "drop_after_commit", "path": "/request/withdraw/fiat$", "count": 1})
        with pytest.raises(OutcomeUnknown):
            await api.withdraw_fiat(Amount(Decimal("40"), "USD"), idempotency_key="tt-wd-resent")
        faults.clear()
        resent = await api.withdraw_fiat(
            Amount(Decimal("40"), "USD"), idempotency_key="tt-wd-resent"
        )
        listed = await api.withdrawals()
    assert [(w.transaction_id, w.amount) for w in listed] == [(resent.transaction_id, Decimal(40))]


def test_a_post_that_declares_no_body_is_refused_at_once_and_the_connection_kept(
    sandbox: SandboxProcess, client: Session
) -> None:
    """Without Content-Length or Transfer-Encoding a request has no body: the sandbox skips
    the timed body read and judges the empty order at once, on a connection that
    serves the next request."""
    path = f"/api/v1/routing/account/{client.account}/order/limit"
    bare = (
        f"POST {path} HTTP/1.1\r\nHost: venue-test\r\nAuthorization: Bearer {client.token}\r\n"
        "Content-Type: application/json\r\n\r\n"
    ).encode()
    with connect(sandbox) as sock:
        started = time.monotonic()
        sock.sendall(bare)
        status, answer = read_response(sock)
        assert status == 400, answer
        assert time.monotonic() - started < 2
        sock.sendall(bare)
        again, _ = read_response(sock)
        assert again == 400


def test_a_symlink_to_a_database_in_use_takes_the_same_lock(tmp_path: Path) -> None:
    db = tmp_path / "real.db"
    store = Store(str(db))
    alias = tmp_path / "alias.db"
    alias.symlink_to(db)
    try:
        with pytest.raises(DatabaseInUse, match="in use by another sandbox"):
            Store(str(alias))
    finally:
        store.close()


def test_a_hard_linked_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "real.db"
    Store(str(db)).close()
    os.link(db, tmp_path / "second-name.db")
    with pytest.raises(LinkedDatabase, match="2 hard links"):
        Store(str(db))
    with pytest.raises(LinkedDatabase):
        Store(str(tmp_path / "second-name.db"))


def running(child: SandboxChild) -> bool:
    """Now (a plain call: mypy would narrow the property between two asserts)."""
    return child.running


@pytest.mark.anyio
async def test_a_sandbox_child_killed_is_said_at_once_and_restarts_on_its_database(
    tmp_path: Path,
) -> None:
    """kill -9 of the embedded sandbox: the terminal hears of it at once, in words, and
    Restart brings it back on the same database and the same URL (tokens still valid)."""
    db = str(tmp_path / "supervised.db")
    child = SandboxChild(db)
    url = await child.start()
    said: list[str] = []
    child.stopped.subscribe(said.append)
    try:
        async with httpx.AsyncClient(base_url=url) as http:
            login = await http.post(
                "/api/v1/identity/jwt", json={"user": "demo", "password": digest("demo")}
            )
            token = login.json()["token"]
        assert child._process is not None
        os.kill(child._process.pid, signal.SIGKILL)
        started = time.monotonic()
        await until(lambda: said != [], timeout=5)
        assert time.monotonic() - started < 2
        assert said == ["The embedded sandbox stopped: killed by signal 9 (SIGKILL)"]
        assert not running(child)
        assert await child.restart() == url  # same port, same database
        assert running(child)
        async with httpx.AsyncClient(base_url=url) as http:
            account = await http.get(
                "/api/v1/accounting/account/demo", headers={"Authorization": f"Bearer {token}"}
            )
            assert account.status_code == 200  # the token issued before still holds
    finally:
        assert await child.stop() == 0
    assert said == ["The embedded sandbox stopped: killed by signal 9 (SIGKILL)"]  # asked: silent


def test_a_commit_that_acknowledges_money_is_synced_before_the_answer(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "durable.db"))
    said: list[str] = []
    store._db.set_trace_callback(said.append)
    try:
        with store.transaction(durable=True):
            store.query("SELECT 1")
        with store.transaction():
            store.query("SELECT 1")
    finally:
        store._db.set_trace_callback(None)
        store.close()
    pragmas = [line for line in said if line.startswith(("PRAGMA", "BEGIN", "COMMIT"))]
    assert pragmas == [
        "PRAGMA synchronous = FULL",
        "BEGIN IMMEDIATE",
        "COMMIT",
        "PRAGMA synchronous = NORMAL",
        "BEGIN IMMEDIATE",  # the rest: WAL's NORMAL
        "COMMIT",
    ]
