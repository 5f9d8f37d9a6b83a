"""Every endpoint of the sandbox over real HTTP: documented shapes, prices, errors, the ledger.

The shapes and error rows come from the interface spec (the seed) and the price convention from
design.md section 2. Price-sensitive checks run on a sandbox whose market never ticks
(``--tick 3600``), so the top of book read before an order is the one the order trades at; the
rest runs on the shared session sandbox. Money is compared as Decimal, never as float.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal
from enum import IntEnum, StrEnum
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import app.sandbox.server  # noqa: F401  (importing the server registers every route)
from app.domain.money import format_trimmed
from app.domain.records import FIAT_FIELDS, PORTFOLIO_FIELDS
from app.sandbox import wire
from app.sandbox.api import ENDPOINTS
from tests.harness import (
    SandboxProcess,
    Session,
    body,
    digest,
    fresh_client,
    invariant,
    new_client,
    own_sandbox,
    wait_until,
)

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{1,9}Z$")
LIMIT = "/api/v1/routing/account/{account}/order/limit"
MARKET = "/api/v1/routing/account/{account}/order"
ACCOUNT = "/api/v1/accounting/account/{account}"
PORTFOLIO = "/api/v1/accounting/account/{account}/portfolio"
LEDGER = "/api/v1/accounting/ledger/{account}"
DEPOSITS = "/api/v1/accounting/account/{account}/request/deposit"
WITHDRAWALS = "/api/v1/accounting/account/{account}/request/withdraw"
TOP_OF_BOOK_PATHS = (
    "/api/v1/routing/account/{account}/topofbook",
    "/api/v1/routing/ops/account/{account}/topofbook",
)
ORDER_QUERY_PATHS = (
    "/api/v1/routing/order/account/{account}",
    "/api/v1/routing/ops/order/account/{account}/orders",
)
ESTIMATE = "/api/v1/routing/account/{account}/order/estimate"
RFQ = "/api/v1/routing/account/{account}/order/rfq"
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"
PAIRS = "/api/v1/routing/account/{account}/pairs"
REFUSAL_KEYS = {"tradesSubmitted", "orderId", "trades", "errors", "status", "httpStatusCode"}
CREDIT_REFUSAL_KEYS = {"orderId", "errors", "status", "httpStatusCode"}
ERROR_KEYS = {"errors", "status", "httpStatusCode"}
BALANCE_FIELDS = ("free", "locked", "limit", "pendingDeposit", "available")
RELATIVE_ROUNDING = Decimal("1e-11")  # inverted prices carry 12 significant digits


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def frozen() -> Iterator[SandboxProcess]:
    """A sandbox whose prices never move during the module (one tick per hour)."""
    yield from own_sandbox("--tick", "3600")


@pytest.fixture
def frozen_client(frozen: SandboxProcess) -> Iterator[Session]:
    session = new_client(frozen)
    yield session
    assert_invariant(frozen, session.account)
    session.close()


@pytest.fixture(scope="module")
def idle_client(sandbox: SandboxProcess) -> Iterator[Session]:
    """A funded client that only ever receives refused (400) requests."""
    yield from fresh_client(sandbox)


@pytest.fixture(scope="module")
def reader(sandbox: SandboxProcess) -> Iterator[Session]:
    """The seeded demo user, logged in once, for read-only queries that must be refused."""
    session = Session(sandbox.url, "demo", "demo", "demo")
    yield session
    session.close()


@pytest.fixture(autouse=True)
def _client_ledger_holds(request: pytest.FixtureRequest) -> Iterator[None]:
    """After every test that used ``client``: free + locked equals the ledger sum per asset."""
    if "client" not in request.fixturenames:
        yield
        return
    session: Session = request.getfixturevalue("client")
    process: SandboxProcess = request.getfixturevalue("sandbox")
    yield
    assert_invariant(process, session.account)


# -- helpers --------------------------------------------------------------------------------


def num(value: Any) -> Decimal:
    """A JSON number as decoded by ``body`` (int or Decimal, never float or bool)."""
    assert isinstance(value, int | Decimal), f"expected a number, got {value!r}"
    assert not isinstance(value, bool), f"expected a number, got {value!r}"
    return Decimal(value)


def amount(text: Any) -> tuple[Decimal, str]:
    """``"<amount> <ASSET>"`` as (Decimal, asset)."""
    assert isinstance(text, str), text
    value, asset = text.split(" ")
    return Decimal(value), asset


def price(text: Any) -> tuple[Decimal, str, str]:
    """``"<price> <A>/<B>"`` as (Decimal, A, B)."""
    assert isinstance(text, str), text
    value, unit = text.split(" ")
    first, second = unit.split("/")
    return Decimal(value), first, second


def moment(text: Any) -> datetime:
    assert isinstance(text, str), text
    assert TIMESTAMP.match(text), f"not an ISO 8601 UTC timestamp with fraction and Z: {text!r}"
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ok_body(response: httpx.Response) -> Any:
    """The decoded success body; it must carry ``status: ok`` and ``httpStatusCode: 200``."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    decoded = body(response)
    if isinstance(decoded, dict):
        assert decoded["status"] == "ok", decoded
        assert decoded["httpStatusCode"] == 200, decoded
    return decoded


def assert_error(response: httpx.Response, status_code: int, word: str) -> list[str]:
    """The generic failure body: exactly ``errors``, ``status`` and ``httpStatusCode``."""
    assert response.status_code == status_code, response.text
    assert response.headers["content-type"].startswith("application/json")
    decoded = body(response)
    assert set(decoded) == ERROR_KEYS, decoded
    assert decoded["status"] == word
    assert decoded["httpStatusCode"] == status_code
    errors = decoded["errors"]
    assert isinstance(errors, list) and errors and all(isinstance(e, str) and e for e in errors)
    return errors


def assert_order_refusal(response: httpx.Response, status_code: int, *, trades: bool) -> str:
    """A limit-order refusal of the seed's Errors table; returns its (single) message."""
    assert response.status_code == status_code, response.text
    decoded = body(response)
    assert set(decoded) == (REFUSAL_KEYS if trades else CREDIT_REFUSAL_KEYS), decoded
    if trades:
        assert decoded["tradesSubmitted"] is False
        assert decoded["trades"] == []
    assert isinstance(decoded["orderId"], str) and decoded["orderId"]
    assert decoded["status"] == "failedDependency"
    assert decoded["httpStatusCode"] == status_code
    errors = decoded["errors"]
    assert isinstance(errors, list) and len(errors) >= 1
    assert all(isinstance(e, str) and e for e in errors)
    message: str = errors[0]
    return message


def balances(session: Session) -> dict[str, dict[str, Decimal]]:
    account = ok_body(session.get(ACCOUNT))["account"]
    return {
        asset: {name: num(value) for name, value in fields.items()}
        for asset, fields in account["balances"].items()
    }


def portfolio(session: Session) -> dict[str, dict[str, Decimal]]:
    account = ok_body(session.get(PORTFOLIO))["account"]
    return {
        asset: {name: num(value) for name, value in fields.items()}
        for asset, fields in account["balances"].items()
    }


def assert_invariant(process: SandboxProcess, account: str) -> None:
    result = invariant(process, account)
    assert result["holds"] is True, result


def top(session: Session, pair: str) -> tuple[Decimal, Decimal]:
    """(bid, ask) of ``pair``."""
    book = ok_body(session.get(TOP_OF_BOOK_PATHS[0], assetPairs=pair))["topOfBooks"][pair]
    return num(book["bid"][0]), num(book["ask"][0])


def decimals(session: Session) -> dict[str, int]:
    """Decimal places per asset, from the pairs endpoint."""
    places: dict[str, int] = {}
    for item in ok_body(session.get(PAIRS))["assetPairs"]:
        places[item["base"]] = item["baseDecimals"]
        places[item["quote"]] = item["quoteDecimals"]
    return places


def quantum(places: int) -> Decimal:
    return Decimal(1).scaleb(-places)


def orders(session: Session, path: str = ORDER_QUERY_PATHS[0], **params: Any) -> list[Any]:
    result = ok_body(session.get(path, **params))
    assert isinstance(result["orders"], list)
    return list(result["orders"])


def fill(session: Session, source: str, destination: str, size: str) -> dict[str, Any]:
    order: dict[str, Any] = ok_body(session.limit_order(source, destination, size))["order"]
    assert order["result"]["status"] == "filled", order
    return order


def assert_full_order(order: dict[str, Any], session: Session, *, order_type: str) -> None:
    """The Order of the seed with the query fields, filled."""
    assert isinstance(order["orderId"], str) and order["orderId"]
    assert isinstance(order["ordering"], int) and not isinstance(order["ordering"], bool)
    assert order["accountId"] == session.account
    assert order["userId"] == session.user
    assert isinstance(order["email"], str) and "@" in order["email"]
    size, size_asset = amount(order["size"])
    assert size > 0 and size_asset == order["source"]
    assert order["type"] == order_type
    submitted = moment(order["submittedAt"])
    result = order["result"]
    assert result["status"] == "filled"
    assert result["error"] == ""
    assert moment(result["executedAt"]) >= submitted
    assert moment(result["updatedAt"]) >= submitted
    value, first, second = price(result["price"])
    assert (first, second) == (order["source"], order["destination"])
    inverse, inv_first, inv_second = price(result["invertedPrice"])
    assert (inv_first, inv_second) == (order["destination"], order["source"])
    assert abs(value * inverse - 1) <= RELATIVE_ROUNDING
    total, total_asset = amount(result["total"])
    assert total_asset == order["destination"]
    assert total > 0


# -- identity and service information -------------------------------------------------------


def test_login_issues_a_jwt_that_authorises_calls(sandbox: SandboxProcess, client: Session) -> None:
    credentials = {"user": client.user, "password": digest(client.user)}
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        token = ok_body(http.post("/api/v1/identity/jwt", json=credentials))["token"]
        assert isinstance(token, str) and len(token.split(".")) == 3
        headers = {"Authorization": f"Bearer {token}"}
        path = f"/api/v1/accounting/account/{client.account}"
        assert ok_body(http.get(path, headers=headers))["account"]["accountId"] == client.account

        wrong = {"user": client.user, "password": digest("not the password")}
        assert_error(http.post("/api/v1/identity/jwt", json=wrong), 401, "unauthorized")
        plain = {"user": client.user, "password": client.user}  # not a SHA-256 digest
        assert_error(http.post("/api/v1/identity/jwt", json=plain), 400, "badRequest")
        assert_error(http.post("/api/v1/routing/jwt", json=credentials), 404, "notFound")


def test_calls_need_a_valid_token_for_their_own_account(
    sandbox: SandboxProcess, client: Session
) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        path = f"/api/v1/accounting/account/{client.account}"
        assert_error(http.get(path), 401, "unauthorized")
        assert_error(http.get(path, headers={"Authorization": "Bearer x.y.z"}), 401, "unauthorized")
        assert_error(
            http.get(path, headers={"Authorization": f"Basic {client.token}"}), 401, "unauthorized"
        )
    assert_error(client.get("/api/v1/accounting/account/demo"), 403, "forbidden")
    assert_error(client.post("/api/v1/routing/account/demo/order/limit", {}), 403, "forbidden")


@pytest.mark.parametrize("service", ["accounting", "identity", "routing"])
def test_service_info_needs_no_token(sandbox: SandboxProcess, service: str) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        info = ok_body(http.get(f"/api/v1/{service}/info"))["info"]
    assert info["service"] == service
    assert isinstance(info["application"], str) and info["application"]
    assert isinstance(info["instance"], str) and info["instance"]
    launched = moment(info["applicationLaunchTime"])
    assert launched <= datetime.now(UTC) + timedelta(seconds=5)
    build = info["build"]
    for name in ("version", "commit", "branch"):
        assert isinstance(build[name], str) and build[name]
    seconds = build["unixSeconds"]
    assert isinstance(seconds, int) and not isinstance(seconds, bool)
    assert int(moment(build["iso8601"]).timestamp()) == seconds


def test_service_info_of_an_unknown_service_is_404(sandbox: SandboxProcess) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        errors = assert_error(http.get("/api/v1/trading/info"), 404, "notFound")
    assert "trading" in errors[0]


def test_service_time_needs_no_token(sandbox: SandboxProcess) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        before = datetime.now(UTC)
        result = ok_body(http.get("/api/v1/routing/time"))
        after = datetime.now(UTC)
    served = moment(result["time"])
    assert before - timedelta(seconds=2) <= served <= after + timedelta(seconds=2)
    millis = result["unixMillis"]
    assert isinstance(millis, int)
    assert millis == (served - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


# -- accounting -----------------------------------------------------------------------------


def test_get_account_shape(client: Session) -> None:
    account = ok_body(client.get(ACCOUNT))["account"]
    assert account["accountId"] == client.account
    assert account["type"] == "client"
    assert isinstance(account["name"], str) and account["name"]
    rows = account["balances"]
    assert {"USD", "BTC", "ETH", "USDT", "SOL"} <= set(rows)
    for fields in rows.values():
        assert set(fields) == set(BALANCE_FIELDS)
        for name in BALANCE_FIELDS:
            num(fields[name])
    assert num(rows["USD"]["free"]) == Decimal(100000)
    assert num(rows["BTC"]["free"]) == Decimal(2)
    assert num(rows["ETH"]["free"]) == 0
    for asset in ("USD", "BTC"):
        assert num(rows[asset]["locked"]) == 0
        assert num(rows[asset]["limit"]) == 0
        assert num(rows[asset]["pendingDeposit"]) == 0
        assert num(rows[asset]["available"]) == num(rows[asset]["free"])


def test_portfolio_shape(client: Session) -> None:
    account = ok_body(client.get(PORTFOLIO))["account"]
    assert account["accountId"] == client.account
    assert account["type"] == "client"
    assert isinstance(account["name"], str)
    for fields in account["balances"].values():
        assert set(fields) == set(PORTFOLIO_FIELDS)
    usd = portfolio(client)["USD"]
    assert usd == {
        "availableToTrade": Decimal(100000),
        "totalFunds": Decimal(100000),
        "availableFunds": Decimal(100000),
        "lockedFunds": Decimal(0),
        "totalCredit": Decimal(0),
        "availableCredit": Decimal(0),
        "usedCredit": Decimal(0),
    }


def test_ledger_is_a_bare_array_with_paired_trade_legs_and_working_filters(
    client: Session,
) -> None:
    initial = body(client.get(LEDGER, max=10))
    assert isinstance(initial, list) and len(initial) == 2
    assert {e["eventType"] for e in initial} == {"initialBalances"}
    assert {(e["asset"], num(e["amount"])) for e in initial} == {
        ("USD", Decimal(100000)),
        ("BTC", Decimal(2)),
    }

    order = fill(client, "BTC", "USD", "0.25")
    total, _ = amount(order["result"]["total"])
    entries = body(client.get(LEDGER, max=10))
    assert isinstance(entries, list) and len(entries) == 4
    for entry in entries:
        assert {"ordering", "accountId", "transactionId", "asset", "amount", "eventType"} <= set(
            entry
        )
        assert "eventTime" in entry
        assert isinstance(entry["ordering"], int)
        assert entry["accountId"] == client.account
        assert isinstance(entry["transactionId"], str) and entry["transactionId"]
        num(entry["amount"])
        moment(entry["eventTime"])
    orderings = [e["ordering"] for e in entries]
    assert orderings == sorted(orderings, reverse=True)  # newest first

    source_leg, destination_leg = entries[0], entries[1]
    assert {source_leg["subEventType"], destination_leg["subEventType"]} == {
        "source",
        "destination",
    }
    legs = {e["subEventType"]: e for e in entries[:2]}
    assert legs["source"]["ordering"] == legs["destination"]["ordering"]
    assert legs["source"]["eventTime"] == legs["destination"]["eventTime"]
    assert legs["source"]["eventType"] == legs["destination"]["eventType"] == "trade"
    assert legs["source"]["transactionId"] == order["orderId"]
    assert legs["destination"]["transactionId"] == order["orderId"]
    assert (legs["source"]["asset"], num(legs["source"]["amount"])) == ("BTC", Decimal("-0.25"))
    assert (legs["destination"]["asset"], num(legs["destination"]["amount"])) == ("USD", total)
    assert all("subEventType" not in e for e in entries[2:])
    trade_ordering = legs["source"]["ordering"]
    trade_time = legs["source"]["eventTime"]

    # max counts transactions: the newest one is a trade, so both legs come back.
    assert {e["subEventType"] for e in body(client.get(LEDGER, max=1))} == {"source", "destination"}
    assert [e["eventType"] for e in body(client.get(LEDGER, max=10, type="trade"))] == [
        "trade",
        "trade",
    ]
    assert len(body(client.get(LEDGER, max=10, type="initialBalances"))) == 2
    assert {num(e["amount"]) for e in body(client.get(LEDGER, max=10, asset="BTC"))} == {
        Decimal(2),
        Decimal("-0.25"),
    }
    by_id = body(client.get(LEDGER, max=10, transactionId=order["orderId"]))
    assert {e["subEventType"] for e in by_id} == {"source", "destination"}
    oldest = body(client.get(LEDGER, max=10, asc="true"))
    assert [e["ordering"] for e in oldest] == sorted(orderings)
    earlier = body(client.get(LEDGER, max=10, startAtOrdering=trade_ordering - 1))
    assert {e["eventType"] for e in earlier} == {"initialBalances"}
    since = body(client.get(LEDGER, max=10, startTimeUtc=trade_time))
    assert {e["eventType"] for e in since} == {"trade"}
    before = body(client.get(LEDGER, max=10, endTimeUtc=trade_time))
    assert {e["eventType"] for e in before} == {"initialBalances"}

    sums: dict[str, Decimal] = {}
    for entry in entries:
        sums[entry["asset"]] = sums.get(entry["asset"], Decimal(0)) + num(entry["amount"])
    rows = balances(client)
    for asset, total_sum in sums.items():
        assert rows[asset]["free"] + rows[asset]["locked"] == total_sum


def test_seeded_demo_deposits_newest_first_and_asc_max_honoured(demo: Session) -> None:
    newest = body(demo.get(DEPOSITS))
    assert isinstance(newest, list) and len(newest) >= 3
    orderings = [d["ordering"] for d in newest]
    assert orderings == sorted(orderings, reverse=True) and len(set(orderings)) == len(orderings)
    oldest = body(demo.get(DEPOSITS, asc="true"))
    assert [d["ordering"] for d in oldest] == sorted(orderings)
    assert [(d["asset"], num(d["amount"]), d["network"]) for d in oldest[:3]] == [
        ("BTC", Decimal("2.5"), "bitcoin"),
        ("USDT", Decimal(100000), "tron"),
        ("ETH", Decimal(25), "ethereum"),
    ]
    assert [d["ordering"] for d in body(demo.get(DEPOSITS, max=1))] == orderings[:1]
    assert [d["ordering"] for d in body(demo.get(DEPOSITS, max=2, asc="true"))] == sorted(
        orderings
    )[:2]
    assert [d["ordering"] for d in body(demo.get(DEPOSITS, max=2, asc="false"))] == orderings[:2]
    for record in oldest[:3]:
        assert record["accountId"] == "demo"
        assert isinstance(record["transactionId"], str) and record["transactionId"]
        assert record["status"] == "completed"
        assert isinstance(record["hash"], str) and len(record["hash"]) >= 32
        for stage in ("created", "completed"):
            moment(record[stage]["at"])
            user = record[stage]["user"]
            assert set(user) == {"id", "email", "name"}
            assert all(isinstance(user[k], str) and user[k] for k in ("id", "email", "name"))


def test_deposit_instructions_blockchain_and_fiat(client: Session) -> None:
    result = ok_body(client.get(DEPOSITS + "-instructions"))
    assert result["accountId"] == client.account
    items = result["instructions"]
    chains = {(i["asset"], i["networkType"]) for i in items if i["assetType"] == "blockchain"}
    assert {("USDT", "ethereum"), ("USDT", "tron"), ("BTC", "bitcoin")} <= chains
    for item in items:
        if item["assetType"] == "blockchain":
            assert set(item) == {"asset", "assetType", "networkType", "address"}
            assert isinstance(item["address"], str) and item["address"]
    addresses = [i["address"] for i in items if i["assetType"] == "blockchain"]
    assert len(set(addresses)) == len(addresses)
    fiat = [i for i in items if i["assetType"] == "fiat"]
    assert [i["asset"] for i in fiat] == ["USD"]
    assert set(fiat[0]) == {"asset", "assetType", *FIAT_FIELDS}
    for name in FIAT_FIELDS:
        assert isinstance(fiat[0][name], str) and fiat[0][name], name
    assert fiat[0]["method"] == "wire"


def test_withdraw_instructions_are_blockchain_only(client: Session) -> None:
    result = ok_body(client.get(WITHDRAWALS + "-instructions"))
    assert result["accountId"] == client.account
    items = result["instructions"]
    assert items
    for item in items:
        assert set(item) == {"asset", "assetType", "networkType", "address"}
        assert item["assetType"] == "blockchain"
        assert isinstance(item["address"], str) and item["address"]
    assert "BTC" in {i["asset"] for i in items}


def test_withdrawals_blockchain_and_fiat_debit_and_are_queryable(client: Session) -> None:
    items = ok_body(client.get(WITHDRAWALS + "-instructions"))["instructions"]
    btc = next(i for i in items if i["asset"] == "BTC")
    target = {"networkType": btc["networkType"], "address": btc["address"]}
    chain = ok_body(client.post(WITHDRAWALS + "/blockchain", {"amount": "0.5 BTC", **target}))
    record = chain["withdrawal"]
    assert (record["asset"], num(record["amount"]), record["status"]) == (
        "BTC",
        Decimal("0.5"),
        "completed",
    )
    assert record["network"] == btc["networkType"]
    assert record["address"] == btc["address"]
    assert record["accountId"] == client.account
    wire = ok_body(client.post(WITHDRAWALS + "/fiat", {"amount": "1000 USD", "method": "wire"}))
    assert (wire["withdrawal"]["asset"], num(wire["withdrawal"]["amount"])) == (
        "USD",
        Decimal(1000),
    )
    assert wire["withdrawal"]["status"] == "completed"

    rows = balances(client)
    assert rows["BTC"]["free"] == Decimal("1.5")
    assert rows["USD"]["free"] == Decimal(99000)
    listed = body(client.get(WITHDRAWALS))
    assert [w["transactionId"] for w in listed] == [
        wire["withdrawal"]["transactionId"],
        record["transactionId"],
    ]
    assert [w["transactionId"] for w in body(client.get(WITHDRAWALS, asc="true", max=1))] == [
        record["transactionId"]
    ]
    ledger = body(client.get(LEDGER, max=10, type="withdrawal"))
    assert sorted((e["asset"], num(e["amount"])) for e in ledger) == [
        ("BTC", Decimal("-0.5")),
        ("USD", Decimal(-1000)),
    ]

    before = balances(client)
    elsewhere = {"amount": "0.1 BTC", "networkType": "bitcoin", "address": "bc1qnotwhitelisted"}
    assert_error(client.post(WITHDRAWALS + "/blockchain", elsewhere), 400, "badRequest")
    assert_error(client.post(WITHDRAWALS + "/fiat", {"amount": "1 BTC"}), 400, "badRequest")
    too_much = client.post(WITHDRAWALS + "/blockchain", {"amount": "5 BTC", **target})
    assert too_much.status_code == 424, too_much.text
    assert body(too_much)["errors"][0].startswith(
        "Insufficient Funds: Requested 5 BTC but only 1.5 BTC is available"
    )
    assert balances(client) == before


def test_sandbox_top_up_credits_at_once(client: Session) -> None:
    result = ok_body(client.post(TOP_UP, {"amount": "0.5 BTC"}))["deposit"]
    assert (result["asset"], num(result["amount"]), result["status"]) == (
        "BTC",
        Decimal("0.5"),
        "completed",
    )
    assert result["network"] == "bitcoin"
    tron = ok_body(client.post(TOP_UP, {"amount": "250 USDT", "network": "tron"}))["deposit"]
    assert tron["network"] == "tron"
    rows = balances(client)
    assert rows["BTC"]["free"] == Decimal("2.5")
    assert rows["USDT"]["free"] == Decimal(250)
    listed = body(client.get(DEPOSITS))
    assert [d["transactionId"] for d in listed] == [tron["transactionId"], result["transactionId"]]
    assert_error(client.post(TOP_UP, {"amount": "1 BTC", "network": "tron"}), 400, "badRequest")
    assert_error(client.post(TOP_UP, {"amount": "1 DOGE"}), 400, "badRequest")
    assert_error(client.post(TOP_UP, {"amount": "-1 BTC"}), 400, "badRequest")


@pytest.mark.slow
def test_sandbox_top_up_with_pending_seconds_stays_pending_until_completed(
    client: Session,
) -> None:
    pending = ok_body(client.post(TOP_UP, {"amount": "1000 USD", "pendingSeconds": 1}))["deposit"]
    assert pending["status"] == "pending"
    assert "completed" not in pending
    usd = balances(client)["USD"]
    assert usd["pendingDeposit"] == Decimal(1000)
    assert usd["free"] == Decimal(100000)

    def completed() -> bool:
        return balances(client)["USD"]["pendingDeposit"] == 0

    wait_until(completed, timeout=10)
    assert balances(client)["USD"]["free"] == Decimal(101000)
    record = body(client.get(DEPOSITS, max=1))[0]
    assert record["transactionId"] == pending["transactionId"]
    assert record["status"] == "completed"
    assert moment(record["completed"]["at"]) >= moment(record["created"]["at"])
    deposits = body(client.get(LEDGER, max=5, type="deposit"))
    assert [(e["asset"], num(e["amount"])) for e in deposits] == [("USD", Decimal(1000))]


def test_sandbox_top_up_with_fractional_pending_seconds_is_pending(client: Session) -> None:
    """pendingSeconds is a number (OpenAPI: number, 0-3600): 0.5 s must not complete at once."""
    pending = ok_body(client.post(TOP_UP, {"amount": "1 BTC", "pendingSeconds": 0.5}))["deposit"]
    assert pending["status"] == "pending", pending
    wait_until(lambda: balances(client)["BTC"]["pendingDeposit"] == 0, timeout=10)
    assert balances(client)["BTC"]["free"] == Decimal(3)


# -- market data and estimates --------------------------------------------------------------


@pytest.mark.parametrize("path", TOP_OF_BOOK_PATHS)
def test_top_of_book_both_paths(client: Session, path: str) -> None:
    pairs = ["BTC/USD", "ETH/BTC", "USDT/USD"]
    books = ok_body(client.get(path, assetPairs=",".join(pairs)))["topOfBooks"]
    assert sorted(books) == sorted(pairs)
    for name in pairs:
        entry = books[name]
        assert set(entry) == {"spread", "ask", "bid"}
        assert len(entry["ask"]) == 2 and len(entry["bid"]) == 2
        ask, ask_size = num(entry["ask"][0]), num(entry["ask"][1])
        bid, bid_size = num(entry["bid"][0]), num(entry["bid"][1])
        assert ask > bid > 0
        assert ask_size > 0 and bid_size > 0
        assert num(entry["spread"]) == ask - bid
    every = ok_body(client.get(path))["topOfBooks"]
    listed = ok_body(client.get(PAIRS))["assetPairs"]
    assert sorted(every) == sorted(p["assetPair"] for p in listed)


def test_pairs_list_increments_and_precisions(client: Session) -> None:
    listed = ok_body(client.get(PAIRS))["assetPairs"]
    names = {p["assetPair"] for p in listed}
    assert {"BTC/USD", "ETH/USD", "ETH/BTC", "USDT/USD"} <= names
    for item in listed:
        assert item["assetPair"] == f"{item['base']}/{item['quote']}"
        assert num(item["priceIncrement"]) > 0
        assert isinstance(item["baseDecimals"], int) and isinstance(item["quoteDecimals"], int)
    places = decimals(client)
    assert places["USD"] == 2 and places["BTC"] == 8


def test_order_book_sorted_levels_honoured(frozen_client: Session) -> None:
    path = "/api/v1/routing/account/{account}/book"
    book = ok_body(frozen_client.get(path, assetPair="BTC/USD"))
    assert book["assetPair"] == "BTC/USD"
    moment(book["timestamp"])
    bids = [(num(p), num(s)) for p, s in book["bids"]]
    asks = [(num(p), num(s)) for p, s in book["asks"]]
    assert len(bids) == 25 and len(asks) == 25
    assert [p for p, _ in bids] == sorted({p for p, _ in bids}, reverse=True)
    assert [p for p, _ in asks] == sorted({p for p, _ in asks})
    assert all(s > 0 for _, s in bids + asks)
    bid, ask = top(frozen_client, "BTC/USD")
    assert (bids[0][0], asks[0][0]) == (bid, ask)
    five = ok_body(frozen_client.get(path, assetPair="ETH/BTC", levels=5))
    assert len(five["bids"]) == 5 and len(five["asks"]) == 5
    assert num(five["bids"][0][0]) < num(five["asks"][0][0])
    for bad in ({"assetPair": "BTC/USD", "levels": "0"}, {"assetPair": "BTC/USD", "levels": "x"}):
        assert_error(frozen_client.get(path, **bad), 400, "badRequest")
    assert_error(frozen_client.get(path), 400, "badRequest")
    assert_error(frozen_client.get(path, assetPair="DOGE/USD"), 400, "badRequest")


@pytest.mark.parametrize("pairs", ["DOGE/USD", "BTC/USD,ETH/USD", "BTC/USD,"])
def test_order_book_of_anything_but_one_known_pair_is_400(demo: Session, pairs: str) -> None:
    response = demo.get("/api/v1/routing/account/{account}/book", assetPair=pairs)
    assert_error(response, 400, "badRequest")


@pytest.mark.parametrize(
    ("source", "destination", "size"),
    [("BTC", "USD", "0.75"), ("USD", "BTC", "1000"), ("BTC", "ETH", "1"), ("ETH", "BTC", "10")],
)
def test_estimate_units_and_consistency_with_top_of_book(
    frozen_client: Session, source: str, destination: str, size: str
) -> None:
    names = {p["assetPair"] for p in ok_body(frozen_client.get(PAIRS))["assetPairs"]}
    source_is_base = f"{source}/{destination}" in names
    pair = f"{source}/{destination}" if source_is_base else f"{destination}/{source}"
    bid, ask = top(frozen_client, pair)
    places = decimals(frozen_client)[destination]
    size_value = Decimal(size)
    # What selling ``size`` of source fetches at the top of book, destination per source.
    book_rate = bid if source_is_base else 1 / ask
    expected_total = (size_value * book_rate).quantize(quantum(places), ROUND_DOWN)

    for quote in (destination, source):
        result = ok_body(
            frozen_client.get(
                ESTIMATE, source=source, destination=destination, size=size, quote=quote
            )
        )
        assert amount(result["source"]) == (size_value, source)
        total, total_asset = amount(result["destination"])
        assert total_asset == destination
        assert total == expected_total
        value, first, second = price(result["price"])
        if quote == destination:
            # "<p> SOURCE/DESTINATION": one source is worth p destination.
            assert (first, second) == (source, destination)
            rate = value
        else:
            # "<p> DESTINATION/SOURCE": one destination is worth p source.
            assert (first, second) == (destination, source)
            rate = 1 / value
        # Better than or equal to the top of book (within the 12-digit display rounding).
        assert rate >= book_rate * (1 - RELATIVE_ROUNDING)
        assert abs(rate - book_rate) <= book_rate * RELATIVE_ROUNDING
        assert abs(size_value * rate - total) < quantum(places) + size_value * rate * (
            RELATIVE_ROUNDING
        )


# -- orders ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "destination", "size"), [("BTC", "USD", "0.5"), ("USD", "BTC", "1000")]
)
def test_limit_order_fills_with_the_full_order_shape(
    frozen_client: Session, source: str, destination: str, size: str
) -> None:
    bid, ask = top(frozen_client, "BTC/USD")
    places = decimals(frozen_client)[destination]
    before = balances(frozen_client)
    response = frozen_client.limit_order(source, destination, size)
    result = ok_body(response)
    assert set(result) == {"order", "status", "httpStatusCode"}
    order = result["order"]
    assert_full_order(order, frozen_client, order_type="limit")
    assert amount(order["size"]) == (Decimal(size), source)
    assert (order["source"], order["destination"]) == (source, destination)
    value, _, _ = price(order["result"]["price"])
    inverse, _, _ = price(order["result"]["invertedPrice"])
    total, _ = amount(order["result"]["total"])
    size_value = Decimal(size)
    if source == "BTC":
        assert value == bid  # selling BTC hits the bid
    else:
        assert inverse == ask  # buying BTC lifts the ask
    tolerance = size_value * value * RELATIVE_ROUNDING
    assert -tolerance <= size_value * value - total < quantum(places) + tolerance

    after = balances(frozen_client)
    assert after[source]["free"] == before[source]["free"] - size_value
    assert after[destination]["free"] == before[destination]["free"] + total
    fetched = ok_body(
        frozen_client.get(f"/api/v1/routing/order/account/{{account}}/order/{order['orderId']}")
    )["order"]
    assert fetched["orderId"] == order["orderId"]
    assert fetched["result"]["total"] == order["result"]["total"]
    assert fetched["result"]["price"] == order["result"]["price"]


def test_limit_order_that_cannot_fill_rests_with_funds_locked(client: Session) -> None:
    order = ok_body(client.limit_order("BTC", "USD", "1", limit="10000000"))["order"]
    assert order["result"]["status"] == "submitted"
    assert "total" not in order["result"]
    rows = balances(client)
    assert (rows["BTC"]["free"], rows["BTC"]["locked"]) == (Decimal(1), Decimal(1))
    btc = portfolio(client)["BTC"]
    assert (btc["availableFunds"], btc["lockedFunds"], btc["totalFunds"]) == (
        Decimal(1),
        Decimal(1),
        Decimal(2),
    )
    message = assert_order_refusal(client.limit_order("BTC", "USD", "1.5"), 424, trades=True)
    assert message.startswith("Insufficient Funds: Requested 1.5 BTC but only 1 BTC is available")


@pytest.mark.slow
def test_limit_price_is_honoured_and_end_at_cancels_a_resting_order(client: Session) -> None:
    sold = ok_body(client.limit_order("BTC", "USD", "0.1", limit="1000"))["order"]
    assert sold["result"]["status"] == "filled"
    assert price(sold["result"]["price"])[0] >= 1000  # at least the limit, destination per source
    inverted_unit = ok_body(client.limit_order("BTC", "USD", "0.1", limit="0.001 USD/BTC"))
    assert inverted_unit["order"]["result"]["status"] == "filled"
    bought = ok_body(client.limit_order("USD", "BTC", "100", limit="0.000001"))["order"]
    assert bought["result"]["status"] == "filled"
    assert price(bought["result"]["price"])[0] >= Decimal("0.000001")

    before = balances(client)
    server_now = moment(ok_body(client.get("/api/v1/routing/time"))["time"])
    end_at = (server_now + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    resting = ok_body(client.limit_order("BTC", "USD", "0.5", limit="10000000", endAt=end_at))
    order_id = resting["order"]["orderId"]
    assert resting["order"]["result"]["status"] == "submitted"
    locked = balances(client)["BTC"]
    assert (locked["free"], locked["locked"]) == (
        before["BTC"]["free"] - Decimal("0.5"),
        Decimal("0.5"),
    )
    path = f"/api/v1/routing/order/account/{{account}}/order/{order_id}"

    def canceled() -> Any:
        order = ok_body(client.get(path))["order"]
        return order if order["result"]["status"] == "canceled" else None

    order = wait_until(canceled, timeout=10)
    assert order["result"]["error"]
    assert "total" not in order["result"]
    assert balances(client) == before


def test_market_order_fills_at_the_top_of_book(frozen_client: Session) -> None:
    bid, ask = top(frozen_client, "ETH/USD")
    before = balances(frozen_client)
    response = frozen_client.post(
        MARKET, {"type": "market", "source": "USD", "destination": "ETH", "size": "3100"}
    )
    order = ok_body(response)["order"]
    assert_full_order(order, frozen_client, order_type="market")
    assert amount(order["size"]) == (Decimal(3100), "USD")
    inverse, first, second = price(order["result"]["invertedPrice"])
    assert (inverse, first, second) == (ask, "ETH", "USD")
    total, asset = amount(order["result"]["total"])
    assert asset == "ETH"
    assert total == (Decimal(3100) / ask).quantize(Decimal("1e-8"), ROUND_DOWN)
    after = balances(frozen_client)
    assert after["USD"]["free"] == before["USD"]["free"] - 3100
    assert after["ETH"]["free"] == before["ETH"]["free"] + total

    sell = ok_body(
        frozen_client.post(
            MARKET,
            {
                "accountId": {"value": frozen_client.account},
                "type": "market",
                "source": "ETH",
                "destination": "USD",
                "size": str(total),
            },
        )
    )["order"]
    assert sell["type"] == "market"
    assert price(sell["result"]["price"]) == (bid, "ETH", "USD")
    refused = frozen_client.post(
        MARKET,
        {"type": "market", "source": "USD", "destination": "ETH", "size": "1", "limit": "1"},
    )
    assert_order_refusal(refused, 400, trades=True)


def test_rfq_request_and_accept_both_sides(frozen_client: Session) -> None:
    bid, ask = top(frozen_client, "BTC/USD")
    before = balances(frozen_client)
    quote = ok_body(
        frozen_client.post(RFQ, {"assetPair": "BTC/USD", "size": "0.1 BTC", "clientOrderId": "q"})
    )
    assert isinstance(quote["orderId"], str) and quote["orderId"]
    now = datetime.now(UTC)
    for side in ("buy", "sell"):
        assert set(quote[side]) >= {"price", "source", "destination", "expiresAt"}
        assert moment(quote[side]["expiresAt"]) > now - timedelta(seconds=1)
    buy_price, *buy_unit = price(quote["buy"]["price"])
    sell_price, *sell_unit = price(quote["sell"]["price"])
    assert buy_unit == sell_unit == ["BTC", "USD"]
    assert buy_price >= ask > bid >= sell_price
    assert amount(quote["buy"]["destination"]) == (Decimal("0.1"), "BTC")
    assert amount(quote["buy"]["source"]) == (
        (Decimal("0.1") * buy_price).quantize(Decimal("0.01"), ROUND_CEILING),
        "USD",
    )
    assert amount(quote["sell"]["source"]) == (Decimal("0.1"), "BTC")
    sell_total, _ = amount(quote["sell"]["destination"])
    assert sell_total == (Decimal("0.1") * sell_price).quantize(Decimal("0.01"), ROUND_DOWN)

    accept = f"{RFQ}/{quote['orderId']}/accept"
    order = ok_body(frozen_client.post(accept, {"side": "sell"}))["order"]
    assert_full_order(order, frozen_client, order_type="rfq")
    assert order["orderId"] == quote["orderId"]
    assert amount(order["size"]) == (Decimal("0.1"), "BTC")
    assert price(order["result"]["price"]) == (sell_price, "BTC", "USD")
    assert amount(order["result"]["total"]) == (sell_total, "USD")
    after = balances(frozen_client)
    assert after["BTC"]["free"] == before["BTC"]["free"] - Decimal("0.1")
    assert after["USD"]["free"] == before["USD"]["free"] + sell_total
    assert_error(frozen_client.post(accept, {"side": "buy"}), 409, "conflict")

    in_usd = ok_body(frozen_client.post(RFQ, {"assetPair": "BTC/USD", "size": "1000 USD"}))
    received, _ = amount(in_usd["buy"]["destination"])
    assert amount(in_usd["buy"]["source"]) == (Decimal(1000), "USD")
    bought = ok_body(frozen_client.post(f"{RFQ}/{in_usd['orderId']}/accept", {"side": "buy"}))
    buy_order = bought["order"]
    assert_full_order(buy_order, frozen_client, order_type="rfq")
    assert (buy_order["source"], buy_order["destination"]) == ("USD", "BTC")
    assert price(buy_order["result"]["invertedPrice"])[0] == price(in_usd["buy"]["price"])[0]
    assert amount(buy_order["result"]["total"]) == (received, "BTC")
    final = balances(frozen_client)
    assert final["USD"]["free"] == after["USD"]["free"] - 1000
    assert final["BTC"]["free"] == after["BTC"]["free"] + received


@pytest.mark.parametrize(
    "payload",
    [
        {"assetPair": "DOGE/USD", "size": "1 DOGE"},
        {"assetPair": "BTC/USD", "size": "1 ETH"},
        {"assetPair": "BTC/USD", "size": "abc BTC"},
        {"assetPair": "BTC/USD", "size": "-1 BTC"},
        {"assetPair": "BTC/USD"},
    ],
)
def test_rfq_bad_requests_are_400(idle_client: Session, payload: dict[str, Any]) -> None:
    assert_error(idle_client.post(RFQ, payload), 400, "badRequest")


def test_rfq_accept_refusals(idle_client: Session) -> None:
    assert_error(idle_client.post(f"{RFQ}/no-such-quote/accept", {"side": "sell"}), 404, "notFound")
    quote = ok_body(idle_client.post(RFQ, {"assetPair": "BTC/USD", "size": "0.01 BTC"}))
    bad_side = idle_client.post(f"{RFQ}/{quote['orderId']}/accept", {"side": "both"})
    assert_error(bad_side, 400, "badRequest")


def test_order_queries_both_paths_and_every_filter(client: Session) -> None:
    first = fill(client, "BTC", "USD", "0.1")
    second = fill(client, "USD", "BTC", "1000")
    third = ok_body(
        client.post(
            MARKET, {"type": "market", "source": "USD", "destination": "ETH", "size": "500"}
        )
    )["order"]
    quote = ok_body(client.post(RFQ, {"assetPair": "BTC/USD", "size": "0.05 BTC"}))
    fourth = ok_body(client.post(f"{RFQ}/{quote['orderId']}/accept", {"side": "sell"}))["order"]
    rejected = client.limit_order("USD", "BTC", "10000000")
    fifth_id = body(rejected)["orderId"]
    assert_order_refusal(rejected, 424, trades=True)
    sixth = ok_body(client.limit_order("BTC", "USD", "0.1", limit="10000000"))["order"]
    ids = [
        sixth["orderId"],
        fifth_id,
        fourth["orderId"],
        third["orderId"],
        second["orderId"],
        first["orderId"],
    ]
    o6, o5, o4, o3, o2, o1 = ids

    for path in ORDER_QUERY_PATHS:
        result = ok_body(client.get(path))
        assert result["max"] == 100
        listed = result["orders"]
        assert [o["orderId"] for o in listed] == ids
        orderings = [o["ordering"] for o in listed]
        assert orderings == sorted(orderings, reverse=True)
        for order in listed:
            assert order["accountId"] == client.account
            assert order["userId"] == client.user
            assert isinstance(order["email"], str) and order["email"]
            moment(order["submittedAt"])
            moment(order["result"]["updatedAt"])

        def query(path: str = path, **params: Any) -> list[str]:
            return [o["orderId"] for o in orders(client, path, **params)]

        capped = ok_body(client.get(path, max=2))
        assert capped["max"] == 2
        assert [o["orderId"] for o in capped["orders"]] == [o6, o5]
        assert query(asc="true") == ids[::-1]
        start = listed[3]["submittedAt"]  # the third order's
        assert query(submittedAtStart=start) == [o6, o5, o4, o3]
        assert query(submittedAtEnd=start) == [o2, o1]
        assert query(source="BTC") == [o6, o4, o1]
        assert query(destination="BTC") == [o5, o2]
        assert query(type="market") == [o3]
        assert query(type="rfq") == [o4]
        assert query(type="limit") == [o6, o5, o2, o1]
        assert query(status="filled") == [o4, o3, o2, o1]
        assert query(status="rejected") == [o5]
        assert query(status="submitted") == [o6]
        pivot = listed[3]["ordering"]
        assert query(startAtOrdering=pivot) == [o3, o2, o1]
        assert query(startAtOrdering=pivot, asc="true") == [o3, o4, o5, o6]
        assert query(source="BTC", type="limit", max=1) == [o6]


def test_get_order_by_id_and_unknown_order(client: Session) -> None:
    order = fill(client, "BTC", "USD", "0.2")
    path = f"/api/v1/routing/order/account/{{account}}/order/{order['orderId']}"
    fetched = ok_body(client.get(path))["order"]
    assert_full_order(fetched, client, order_type="limit")
    listed = orders(client)[0]
    assert fetched == listed
    for name in ("orderId", "size", "source", "destination", "type", "submittedAt"):
        assert fetched[name] == order[name]
    assert fetched["result"]["total"] == order["result"]["total"]
    unknown = client.get("/api/v1/routing/order/account/{account}/order/no-such-order")
    assert_error(unknown, 404, "notFound")


# -- the route table ------------------------------------------------------------------------


def test_openapi_lists_every_route_and_every_route_is_served(
    sandbox: SandboxProcess, client: Session
) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        response = http.get("/openapi.json")
    assert response.status_code == 200
    document = body(response)
    assert str(document["openapi"]).startswith("3.")
    listed = {(path, method.upper()) for path, ops in document["paths"].items() for method in ops}
    declared = {(ep.path, ep.method) for ep in ENDPOINTS}
    assert listed == declared
    assert len(declared) >= 27

    headers = {**client.headers, "X-Sandbox-Admin": sandbox.admin_token or ""}
    for path, method in sorted(declared):
        concrete = (
            path.replace("{service}", "routing")
            .replace("{accountId}", client.account)
            .replace("{orderId}", "no-such-order")
        )
        if "/jwt" in path:
            concrete = concrete.replace("/routing/", "/identity/")
        response = client.http.request(
            method, concrete, headers=headers, json={} if method == "POST" else None
        )
        assert response.status_code not in (405, 500), (method, concrete, response.text)
        if response.status_code == 404:
            assert body(response)["errors"] != ["Not Found"], (method, concrete)


def test_unknown_route_and_wrong_method_are_json_errors(client: Session) -> None:
    errors = assert_error(client.get("/api/v1/routing/nothing-here"), 404, "notFound")
    assert errors == ["Not Found"]
    assert_error(client.get(LIMIT), 405, "methodNotAllowed")


# -- refusals: limit order, 400 ---------------------------------------------------------------

_DROP = object()

INVALID_ORDERS: list[tuple[str, dict[str, Any]]] = [
    ("size-missing", {"size": _DROP}),
    ("size-zero", {"size": "0"}),
    ("size-zero-number", {"size": 0}),
    ("size-negative", {"size": "-1"}),
    ("size-nan", {"size": "NaN"}),
    ("size-infinity", {"size": "Infinity"}),
    ("size-minus-infinity", {"size": "-Infinity"}),
    ("size-non-numeric", {"size": "lots"}),
    ("size-empty", {"size": ""}),
    ("size-list", {"size": ["1000"]}),
    ("size-object", {"size": {"value": "1000"}}),
    ("size-boolean", {"size": True}),
    ("size-wrong-asset", {"size": "1000 BTC"}),
    ("size-too-precise", {"size": "0.001"}),
    ("size-too-large", {"size": "1e15"}),
    ("source-unknown", {"source": "DOGE"}),
    ("destination-unknown", {"destination": "XYZ"}),
    ("source-missing", {"source": _DROP}),
    ("source-number", {"source": 5}),
    ("same-asset", {"destination": "USD"}),
    ("no-market", {"source": "USDT", "destination": "SOL"}),
    ("endAt-bad", {"endAt": "tomorrow"}),
    ("endAt-past", {"endAt": "2000-01-01T00:00:00Z"}),
    ("endAt-number", {"endAt": 1700000000}),
    ("limit-bad", {"limit": "cheap"}),
    ("limit-zero", {"limit": "0"}),
    ("limit-negative", {"limit": "-90000"}),
    ("limit-other-pair", {"limit": "3000 ETH/USD"}),
    ("limit-list", {"limit": [1]}),
    ("type-stop", {"type": "stop"}),
    ("type-market-on-limit-path", {"type": "market"}),
    ("accountId-string", {"accountId": "ACCOUNT"}),
    ("accountId-missing", {"accountId": _DROP}),
    ("accountId-mismatch", {"accountId": {"value": "somebody-else"}}),
    ("accountId-value-number", {"accountId": {"value": 7}}),
    ("clientOrderId-number", {"clientOrderId": 42}),
    ("clientOrderId-empty", {"clientOrderId": ""}),
]

MALFORMED_BODIES: list[tuple[str, bytes]] = [
    ("truncated", b'{"source": "USD"'),
    ("not-json", b"{bad"),
    ("nan-literal", b'{"source": "USD", "destination": "BTC", "size": NaN}'),
    ("infinity-literal", b'{"source": "USD", "destination": "BTC", "size": Infinity}'),
    ("array", b"[]"),
    ("null", b"null"),
    ("string", b'"order"'),
    ("empty", b""),
    ("not-utf8", b"\xff\xfe\x00"),
]


def _order_body(account: str, changes: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "accountId": {"value": account},
        "type": "limit",
        "source": "USD",
        "destination": "BTC",
        "size": "1000",
    }
    for key, value in changes.items():
        if value is _DROP:
            payload.pop(key)
        elif value == "ACCOUNT":
            payload[key] = account
        else:
            payload[key] = value
    return payload


def _assert_refused_without_effect(session: Session, send: Callable[[], httpx.Response]) -> str:
    before = balances(session)
    message = assert_order_refusal(send(), 400, trades=True)
    assert balances(session) == before
    assert orders(session) == []  # invalid input creates no order
    return message


@pytest.mark.parametrize(
    "changes", [c for _, c in INVALID_ORDERS], ids=[name for name, _ in INVALID_ORDERS]
)
def test_limit_order_invalid_input_is_400_with_the_order_body(
    idle_client: Session, changes: dict[str, Any]
) -> None:
    payload = _order_body(idle_client.account, changes)
    _assert_refused_without_effect(idle_client, lambda: idle_client.post(LIMIT, payload))


@pytest.mark.parametrize(
    "raw", [r for _, r in MALFORMED_BODIES], ids=[name for name, _ in MALFORMED_BODIES]
)
def test_limit_order_malformed_body_is_400_with_the_order_body(
    idle_client: Session, raw: bytes
) -> None:
    _assert_refused_without_effect(idle_client, lambda: idle_client.post(LIMIT, content=raw))


def test_invalid_market_orders_are_400(idle_client: Session) -> None:
    base = {"type": "market", "source": "USD", "destination": "BTC", "size": "100"}
    for changes in ({"type": "rfq"}, {"endAt": "2099-01-01T00:00:00Z"}, {"size": "NaN"}):
        payload = {**base, **changes}

        def send(payload: dict[str, str] = payload) -> httpx.Response:
            return idle_client.post(MARKET, payload)

        _assert_refused_without_effect(idle_client, send)


@pytest.mark.parametrize("limit", ["1e-999999999", "1e999999999"])
def test_limit_beyond_the_decimal_range_is_never_a_500(client: Session, limit: str) -> None:
    """Either refused as invalid (400, nothing booked) or accepted and then readable (200)."""
    before = balances(client)
    response = client.limit_order("BTC", "USD", "0.01", limit=limit)
    assert response.status_code in (200, 400), response.text
    if response.status_code == 400:
        assert_order_refusal(response, 400, trades=True)
        assert balances(client) == before
    for path in ORDER_QUERY_PATHS:
        ok_body(client.get(path))


# -- refusals: funds and credit, 424 --------------------------------------------------------


def test_insufficient_funds_is_424_naming_requested_and_available(client: Session) -> None:
    before = balances(client)
    message = assert_order_refusal(client.limit_order("USD", "BTC", "100000.01"), 424, trades=True)
    assert message.startswith(
        "Insufficient Funds: Requested 100000.01 USD but only 100000 USD is available"
    )
    message = assert_order_refusal(client.limit_order("BTC", "USD", "2.00000001"), 424, trades=True)
    assert message.startswith(
        "Insufficient Funds: Requested 2.00000001 BTC but only 2 BTC is available"
    )
    assert balances(client) == before

    fill(client, "BTC", "USD", "0.5")
    after_fill = balances(client)
    refused = client.limit_order("BTC", "USD", "2")
    message = assert_order_refusal(refused, 424, trades=True)
    assert message.startswith("Insufficient Funds: Requested 2 BTC but only 1.5 BTC is available")
    assert balances(client) == after_fill
    kept = ok_body(
        client.get(f"/api/v1/routing/order/account/{{account}}/order/{body(refused)['orderId']}")
    )["order"]
    assert kept["result"]["status"] == "rejected"
    assert kept["result"]["error"] == message


def assert_credit_refusal(session: Session, size: str) -> str:
    """A USD to BTC limit order for ``size`` USD on a credit account is refused (424, the credit
    refusal's shape) and moves no balance; returns its message."""
    before = balances(session)
    message = assert_order_refusal(session.limit_order("USD", "BTC", size), 424, trades=False)
    assert balances(session) == before
    return message


def test_credit_outside_credit_hours_is_424_credit_not_available(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    closed = sandbox_factory("--credit-hours", "never")
    session = new_client(closed, credit={"USD": "-50000"})
    try:
        usd = portfolio(session)["USD"]
        assert usd["totalCredit"] == Decimal(50000)
        assert usd["availableToTrade"] == Decimal(100000)  # no credit while it is unavailable
        message = assert_credit_refusal(session, "120000")
        assert message.startswith("Credit Not Available")
        fill(session, "USD", "BTC", "1000")  # within its own funds: no credit needed
        assert balances(session)["USD"]["free"] == Decimal(99000)
        assert_invariant(closed, session.account)
    finally:
        session.close()


def test_credit_in_hours_is_granted_up_to_the_limit(sandbox: SandboxProcess) -> None:
    session = new_client(sandbox, credit={"USD": "-50000"})
    try:
        usd = balances(session)["USD"]
        assert (usd["free"], usd["limit"], usd["available"]) == (
            Decimal(100000),
            Decimal(-50000),
            Decimal(150000),
        )
        credit = portfolio(session)["USD"]
        assert credit["availableToTrade"] == Decimal(150000)
        assert (credit["totalCredit"], credit["availableCredit"], credit["usedCredit"]) == (
            Decimal(50000),
            Decimal(50000),
            Decimal(0),
        )
        message = assert_credit_refusal(session, "160000")
        assert message.startswith(
            "Insufficient Funds: Requested 160000 USD but only 150000 USD is available"
        )

        fill(session, "USD", "BTC", "120000")
        usd = balances(session)["USD"]
        assert (usd["free"], usd["available"]) == (Decimal(-20000), Decimal(30000))
        credit = portfolio(session)["USD"]
        assert credit == {
            "availableToTrade": Decimal(30000),
            "totalFunds": Decimal(0),
            "availableFunds": Decimal(0),
            "lockedFunds": Decimal(0),
            "totalCredit": Decimal(50000),
            "availableCredit": Decimal(30000),
            "usedCredit": Decimal(20000),
        }
        message = assert_credit_refusal(session, "30000.01")
        assert message.startswith(
            "Insufficient Funds: Requested 30000.01 USD but only 30000 USD is available"
        )
        assert_invariant(sandbox, session.account)
    finally:
        session.close()


# -- refusals: queries ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [{"max": "abc"}, {"max": "0"}, {"max": "-1"}, {"max": "1.5"}, {"asc": "maybe"}],
    ids=["max-abc", "max-zero", "max-negative", "max-fraction", "asc-maybe"],
)
@pytest.mark.parametrize("path", [DEPOSITS, WITHDRAWALS], ids=["deposits", "withdrawals"])
def test_transfer_queries_with_bad_filters_are_400(
    reader: Session, path: str, params: dict[str, str]
) -> None:
    assert_error(reader.get(path, **params), 400, "badRequest")


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"max": "abc"},
        {"max": "0"},
        {"max": "10", "type": "bogus"},
        {"max": "10", "asset": "XYZ"},
        {"max": "10", "startTimeUtc": "yesterday"},
        {"max": "10", "endTimeUtc": "2026-13-45T00:00:00Z"},
        {"max": "10", "startAtOrdering": "first"},
        {"max": "10", "format": "xml"},
        {"max": "10", "startTimeUtc": "2026-02-01T00:00:00Z", "endTimeUtc": "2026-01-01T00:00:00Z"},
    ],
    ids=[
        "no-max",
        "max-abc",
        "max-zero",
        "type",
        "asset",
        "startTimeUtc",
        "endTimeUtc",
        "startAtOrdering",
        "format",
        "start-after-end",
    ],
)
def test_ledger_bad_queries_are_400(reader: Session, params: dict[str, str]) -> None:
    assert_error(reader.get(LEDGER, **params), 400, "badRequest")


@pytest.mark.parametrize(
    "params",
    [
        {"max": "0"},
        {"max": "x"},
        {"type": "stop"},
        {"source": "DOGE"},
        {"destination": "1"},
        {"asc": "maybe"},
        {"submittedAtStart": "now"},
        {"startAtOrdering": "-3"},
    ],
)
@pytest.mark.parametrize("path", ORDER_QUERY_PATHS, ids=["plain", "ops"])
def test_order_queries_with_bad_filters_are_400(
    reader: Session, path: str, params: dict[str, str]
) -> None:
    assert_error(reader.get(path, **params), 400, "badRequest")


@pytest.mark.parametrize(
    ("path", "params"),
    [
        (DEPOSITS, {"max": "²"}),
        (LEDGER, {"max": "²"}),
        (ORDER_QUERY_PATHS[0], {"startAtOrdering": "²"}),
        (ORDER_QUERY_PATHS[1], {"max": "³"}),
        ("/api/v1/routing/account/{account}/book", {"assetPair": "BTC/USD", "levels": "²"}),
    ],
    ids=["deposits-max", "ledger-max", "orders-startAtOrdering", "orders-ops-max", "book-levels"],
)
def test_unicode_digit_query_values_are_400_not_500(
    demo: Session, path: str, params: dict[str, str]
) -> None:
    assert_error(demo.get(path, **params), 400, "badRequest")


@pytest.mark.parametrize("path", TOP_OF_BOOK_PATHS)
@pytest.mark.parametrize("pairs", ["DOGE/USD", "BTC/USD,USD/BTC", "BTCUSD"])
def test_top_of_book_unknown_pair_is_400(reader: Session, path: str, pairs: str) -> None:
    errors = assert_error(reader.get(path, assetPairs=pairs), 400, "badRequest")
    assert "Unknown asset pair" in errors[0]


@pytest.mark.parametrize(
    "params",
    [
        {"source": "BTC", "destination": "USD", "size": "1", "quote": "ETH"},
        {"source": "BTC", "destination": "USD", "size": "NaN", "quote": "USD"},
        {"source": "BTC", "destination": "DOGE", "size": "1", "quote": "BTC"},
        {"source": "BTC", "destination": "BTC", "size": "1", "quote": "BTC"},
        {"source": "BTC", "destination": "USD", "quote": "USD"},
    ],
    ids=["quote-other", "size-nan", "unknown-asset", "same-asset", "size-missing"],
)
def test_estimate_bad_queries_are_400(reader: Session, params: dict[str, str]) -> None:
    assert_error(reader.get(ESTIMATE, **params), 400, "badRequest")


def test_sandbox_parses_http_with_httptools_and_falls_back_to_h11(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """httptools is a dependency (h11 was a fifth of the CPU on top of book); without
    it the sandbox still serves, with h11."""
    from app.sandbox import cli, connections

    assert cli.http_protocol() == "httptools"
    protocol = cli.uvicorn_config(lambda *_: None, 75).http  # type: ignore[arg-type]
    assert isinstance(protocol, type) and "HttpTools" in protocol.__name__
    assert connections.protocol_class("h11").__mro__[1] is connections.HeaderDeadlineH11
    monkeypatch.setitem(sys.modules, "httptools", None)  # what an absent package looks like
    assert cli.http_protocol() == "h11"


def _reference_encode(value: Any) -> str:
    """The sandbox's JSON encoder as it was before it was made cheaper: the new one must
    write the same text."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Decimal):
        return format_trimmed(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = (f"{json.dumps(str(k))}:{_reference_encode(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_reference_encode(item) for item in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.decimals(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text() | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES)
def test_json_encoding_writes_what_it_always_wrote(value: Any) -> None:
    text = wire.encode(value)
    assert text == _reference_encode(value)
    assert json.loads(text, parse_float=Decimal) == json.loads(
        _reference_encode(value), parse_float=Decimal
    )


def test_json_encoding_of_subclasses_and_refusals() -> None:
    class Side(StrEnum):
        BUY = "bu\u00e9y"

    class Count(IntEnum):
        ONE = 1

    value = {Side.BUY: [Side.BUY, Count.ONE, Decimal("-0.000"), Decimal("1E+3")]}
    assert wire.encode(value) == _reference_encode(value) == '{"bu\\u00e9y":["bu\u00e9y",1,0,1000]}'
    # remembered texts are keyed by value: equal Decimals of other exponents trim alike
    alike = (("1.50", "1.5", "1.5"), ("-0.000", "0", "0"), ("1E+3", "1000", "1000"))
    for first, second, text in alike:
        assert wire.encode([Decimal(first), Decimal(second)]) == f"[{text},{text}]"
    for bad in (1.5, object(), {1, 2}):
        with pytest.raises(TypeError):
            wire.encode(bad)


@pytest.mark.parametrize("path", TOP_OF_BOOK_PATHS)
def test_a_query_parsed_once_is_still_checked_each_time(reader: Session, path: str) -> None:
    """Query strings are parsed once and kept (a terminal polls with the same ones): a name
    given twice is refused every time, and a good query answers every time."""
    url = path.format(account=reader.account)
    twice = f"{url}?assetPairs=BTC/USD&assetPairs=ETH/USD"
    for _ in range(2):
        response = reader.http.get(twice, headers=reader.headers)
        errors = assert_error(response, 400, "badRequest")
        assert "assetPairs given more than once" in errors[0]
        books = ok_body(reader.get(path, assetPairs="BTC/USD,ETH/USD"))["topOfBooks"]
        assert set(books) == {"BTC/USD", "ETH/USD"}


def test_a_null_client_order_id_and_a_repeated_key_are_refused(client: Session) -> None:
    path = "/api/v1/routing/account/{account}/order/limit"
    base = {
        "accountId": {"value": client.account},
        "type": "limit",
        "source": "USD",
        "destination": "BTC",
        "size": "10",
        "limit": "0.00001",
    }
    null_id = client.post(path, {**base, "clientOrderId": None})
    assert null_id.status_code == 400 and "null is not an id" in null_id.text
    text = json.dumps({**base, "clientOrderId": "tt-once"})[:-1] + ', "size": "999999"}'
    repeated = client.post(path, content=text.encode())
    assert repeated.status_code == 400 and "more than once" in repeated.text
    orders = client.get("/api/v1/routing/order/account/{account}").json()["orders"]
    assert orders == []  # neither reached the book


def test_the_document_allows_exactly_the_date_times_the_server_reads(client: Session) -> None:
    """No ``format: date-time`` (which allows offsets the server refuses): the one pattern."""
    document = client.http.get("/openapi.json").json()
    assert '"date-time"' not in json.dumps(document)
    params = document["paths"]["/api/v1/routing/order/account/{accountId}"]["get"]["parameters"]
    pattern = next(p for p in params if p["name"] == "submittedAtStart")["schema"]["pattern"]
    offset = "2026-01-01T00:00:00+02:00"
    assert re.match(pattern, "2026-01-01T00:00:00.5Z") and not re.match(pattern, offset)
    refused = client.get("/api/v1/routing/order/account/{account}", submittedAtStart=offset)
    assert refused.status_code == 400
