"""Trading on a real sandbox over loopback HTTP: limit, market and RFQ orders, clientOrderId
replays, credit, concurrent submissions, and a stateful property test that the ledger always
explains the balances.

Conventions (design.md §2): an order sells ``size`` of ``source`` for ``destination``; its
``result.price`` is ``"<p> SOURCE/DESTINATION"`` (destination per unit of source) and ``limit`` is
the least destination-per-source the seller accepts. All money is ``Decimal``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Decimal, localcontext
from typing import Any, ClassVar

import httpx
import pytest
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    rule,
    run_state_machine_as_test,
)
from hypothesis.stateful import invariant as state_invariant

from tests.harness import SandboxProcess, Session, body, invariant, new_client, wait_until

LIMIT = "/api/v1/routing/account/{account}/order/limit"
ORDER = "/api/v1/routing/account/{account}/order"
RFQ = "/api/v1/routing/account/{account}/order/rfq"
ZERO = Decimal(0)
CENT = Decimal("0.01")
SATOSHI = Decimal("0.00000001")
DECIMALS = {"USD": 2, "USDT": 6, "BTC": 8, "ETH": 8, "SOL": 6}

Balances = dict[str, tuple[Decimal, Decimal]]
Factory = Callable[..., SandboxProcess]


# -- helpers ------------------------------------------------------------------------------------


def dec(value: Any) -> Decimal:
    """A JSON number decoded by ``harness.body`` (Decimal or int) as Decimal; floats refused."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    if isinstance(value, str):
        return Decimal(value)
    raise TypeError(f"not an exact number: {value!r}")


def quantum(asset: str) -> Decimal:
    return Decimal(1).scaleb(-DECIMALS[asset])


def amount(text: str) -> tuple[Decimal, str]:
    """``"0.5 BTC"`` -> (Decimal("0.5"), "BTC")."""
    number, asset = text.split()
    return Decimal(number), asset


def price(text: str) -> tuple[Decimal, str, str]:
    """``"91000.5 BTC/USD"`` -> (Decimal("91000.5"), "BTC", "USD")."""
    number, unit = text.split()
    first, second = unit.split("/")
    return Decimal(number), first, second


def wire_time(text: str) -> datetime:
    assert text.endswith("Z"), text
    return datetime.fromisoformat(text[:-1] + "+00:00")


def near(value: Decimal, expected: Decimal, relative: Decimal = Decimal("1e-10")) -> bool:
    with localcontext() as ctx:
        ctx.prec = 50
        return abs(value - expected) <= abs(expected) * relative


def inverse(value: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 50
        return Decimal(1) / value


def ok_body(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    result = body(response)
    assert result["status"] == "ok"
    assert result["httpStatusCode"] == 200
    return result


def holdings(session: Session) -> Balances:
    """(free, locked) per asset from Get Account."""
    rows = ok_body(session.get("/api/v1/accounting/account/{account}"))["account"]["balances"]
    return {asset: (dec(row["free"]), dec(row["locked"])) for asset, row in rows.items()}


def moved(before: Balances, after: Balances) -> Balances:
    """The (free, locked) changes of every asset that changed."""
    changes: Balances = {}
    for asset in before.keys() | after.keys():
        free0, locked0 = before.get(asset, (ZERO, ZERO))
        free1, locked1 = after.get(asset, (ZERO, ZERO))
        if free1 != free0 or locked1 != locked0:
            changes[asset] = (free1 - free0, locked1 - locked0)
    return changes


def portfolio(session: Session, asset: str) -> dict[str, Decimal]:
    rows = ok_body(session.get("/api/v1/accounting/account/{account}/portfolio"))
    return {key: dec(value) for key, value in rows["account"]["balances"][asset].items()}


def top(session: Session, pair: str = "BTC/USD") -> tuple[Decimal, Decimal]:
    """(bid price, ask price) of ``pair``."""
    books = ok_body(session.get("/api/v1/routing/account/{account}/topofbook", assetPairs=pair))
    book = books["topOfBooks"][pair]
    return dec(book["bid"][0]), dec(book["ask"][0])


def ledger(session: Session, **params: str) -> list[dict[str, Any]]:
    response = session.get("/api/v1/accounting/ledger/{account}", max="10000", **params)
    assert response.status_code == 200, response.text
    entries = body(response)
    assert isinstance(entries, list)
    return entries


def ledger_sums(session: Session) -> dict[str, Decimal]:
    sums: dict[str, Decimal] = {}
    for entry in ledger(session):
        sums[entry["asset"]] = sums.get(entry["asset"], ZERO) + dec(entry["amount"])
    return sums


def trade_orderings(session: Session) -> set[int]:
    return {entry["ordering"] for entry in ledger(session, type="trade")}


def get_order(session: Session, order_id: str) -> dict[str, Any]:
    order: dict[str, Any] = ok_body(
        session.get(f"/api/v1/routing/order/account/{{account}}/order/{order_id}")
    )["order"]
    return order


def order_count(session: Session) -> int:
    return len(ok_body(session.get("/api/v1/routing/order/account/{account}", max=1000))["orders"])


def server_time(sandbox: SandboxProcess) -> datetime:
    response = httpx.get(sandbox.url + "/api/v1/routing/time", timeout=30)
    return wire_time(ok_body(response)["time"])


def market_order(session: Session, source: str, destination: str, size: str, **extra: Any) -> Any:
    payload = {"type": "market", "source": source, "destination": destination, "size": size}
    return session.post(ORDER, {**payload, **extra})


def accept(session: Session, quote_id: str, side: Any) -> httpx.Response:
    return session.post(f"{RFQ}/{quote_id}/accept", {"side": side})


def check_trade_legs(
    session: Session,
    transaction_id: str,
    source: str,
    size: Decimal,
    destination: str,
    total: Decimal,
    event_time: str | None = None,
) -> None:
    """Exactly two trade legs for ``transaction_id``, one ordering and one eventTime."""
    legs = ledger(session, transactionId=transaction_id)
    assert len(legs) == 2, legs
    sides = {leg["subEventType"]: leg for leg in legs}
    assert set(sides) == {"source", "destination"}
    for leg in legs:
        assert leg["eventType"] == "trade"
        assert leg["transactionId"] == transaction_id
        assert leg["accountId"] == session.account
    assert (sides["source"]["asset"], dec(sides["source"]["amount"])) == (source, -size)
    assert (sides["destination"]["asset"], dec(sides["destination"]["amount"])) == (
        destination,
        total,
    )
    assert legs[0]["ordering"] == legs[1]["ordering"]
    assert legs[0]["eventTime"] == legs[1]["eventTime"]
    if event_time is not None:
        assert legs[0]["eventTime"] == event_time


def race_limit_sells(
    sandbox: SandboxProcess, client: Session, count: int, size: str, timeout: float, **extra: str
) -> list[httpx.Response]:
    """``count`` connections, each opened first, send one limit sell of ``size`` BTC at once:
    the concurrency tests' start line, so the requests meet inside the sandbox."""
    start = threading.Barrier(count)

    def sell(_: int) -> httpx.Response:
        with httpx.Client(base_url=sandbox.url, timeout=timeout, headers=client.headers) as http:
            http.get("/api/v1/routing/time")  # connect before the start line
            start.wait(timeout=30)
            return http.post(
                f"/api/v1/routing/account/{client.account}/order/limit",
                json={
                    "accountId": {"value": client.account},
                    "type": "limit",
                    "source": "BTC",
                    "destination": "USD",
                    "size": size,
                    **extra,
                },
            )

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(sell, range(count)))


def assert_ledger_explains_balances(sandbox: SandboxProcess, session: Session) -> None:
    """free + locked == ledger sum for every asset: per the admin report and recomputed here
    from the client API in Decimal."""
    report = invariant(sandbox, session.account)
    assert report["holds"] is True, report
    assert all(row["holds"] is True for row in report["assets"].values()), report
    sums = ledger_sums(session)
    for asset, (free, locked) in holdings(session).items():
        assert free + locked == sums.get(asset, ZERO), (asset, free, locked, sums)


def assert_refusal(
    response: httpx.Response, status: int, starts: str, *, trades_shape: bool | None = None
) -> dict[str, Any]:
    assert response.status_code == status, response.text
    result: dict[str, Any] = body(response)
    assert result["httpStatusCode"] == status
    assert isinstance(result["errors"], list)
    assert len(result["errors"]) == 1
    assert result["errors"][0].startswith(starts), result
    if trades_shape is True:
        assert result["tradesSubmitted"] is False
        assert result["trades"] == []
        assert result["status"] == "failedDependency"
        assert isinstance(result["orderId"], str)
        assert result["orderId"]
    elif trades_shape is False:
        assert "tradesSubmitted" not in result
        assert result["status"] == "failedDependency"
        assert isinstance(result["orderId"], str)
        assert result["orderId"]
    return result


def refused_past_credit(session: Session, size: str) -> dict[str, Any]:
    """A USD to BTC limit order for ``size`` USD past the credit line, checked refused: 424
    Insufficient Funds in the credit refusal's shape (no trades fields)."""
    return assert_refusal(
        session.limit_order("USD", "BTC", size), 424, "Insufficient Funds", trades_shape=False
    )


def check_fill_rates(
    result: dict[str, Any], *, btc_usd: str, usd_btc: str
) -> tuple[Decimal, tuple[Decimal, str]]:
    """A filled BTC/USD result without error whose field ``btc_usd`` holds the rate in BTC/USD
    and ``usd_btc`` its inverse in USD/BTC; returns the BTC/USD rate and the total."""
    assert result["status"] == "filled"
    assert result["error"] == ""
    rate, first, second = price(result[btc_usd])
    assert (first, second) == ("BTC", "USD")
    inverted, first, second = price(result[usd_btc])
    assert (first, second) == ("USD", "BTC")
    assert near(inverted, inverse(rate), Decimal("1e-11"))
    return rate, amount(result["total"])


def check_filled_sell_btc(order: dict[str, Any], size: Decimal) -> Decimal:
    """A BTC->USD fill: price is the bid in BTC/USD, total = size * price rounded down to cents;
    returns the total."""
    result = order["result"]
    bid, (total, asset) = check_fill_rates(result, btc_usd="price", usd_btc="invertedPrice")
    assert asset == "USD"
    assert total == (size * bid).quantize(CENT, rounding=ROUND_DOWN)
    assert wire_time(result["executedAt"]) >= wire_time(order["submittedAt"])
    return total


def check_filled_buy_btc(order: dict[str, Any], size: Decimal) -> Decimal:
    """A USD->BTC fill: invertedPrice is the ask in BTC/USD, total = size / ask rounded down to
    satoshis, price its inverse in USD/BTC; returns the total."""
    result = order["result"]
    ask, (total, asset) = check_fill_rates(result, btc_usd="invertedPrice", usd_btc="price")
    assert asset == "BTC"
    with localcontext() as ctx:
        ctx.prec = 50
        assert total == (size / ask).quantize(SATOSHI, rounding=ROUND_DOWN)
    return total


# -- limit orders -------------------------------------------------------------------------------


@pytest.mark.parametrize("limit_form", ["none", "bare", "unit"])
def test_marketable_sell_fills_at_once_and_books_two_legs(
    sandbox: SandboxProcess, client: Session, limit_form: str
) -> None:
    bid, _ = top(client)
    floor = (bid / 10).quantize(CENT)
    extra: dict[str, str] = {}
    if limit_form == "bare":
        extra["limit"] = str(floor)
    elif limit_form == "unit":
        extra["limit"] = f"{floor} BTC/USD"
    before = holdings(client)

    response = client.limit_order("BTC", "USD", "0.5", **extra)

    order = ok_body(response)["order"]
    assert order["type"] == "limit"
    assert (order["source"], order["destination"]) == ("BTC", "USD")
    assert amount(order["size"]) == (Decimal("0.5"), "BTC")
    assert order["accountId"] == client.account
    total = check_filled_sell_btc(order, Decimal("0.5"))
    if limit_form != "none":
        limit, first, second = price(order["limit"])
        assert (limit, first, second) == (floor, "BTC", "USD")
        assert price(order["result"]["price"])[0] >= floor
    assert moved(before, holdings(client)) == {
        "BTC": (Decimal("-0.5"), ZERO),
        "USD": (total, ZERO),
    }
    check_trade_legs(
        client,
        order["orderId"],
        "BTC",
        Decimal("0.5"),
        "USD",
        total,
        order["result"]["executedAt"],
    )
    assert len(trade_orderings(client)) == 1
    assert get_order(client, order["orderId"])["result"]["status"] == "filled"
    assert_ledger_explains_balances(sandbox, client)


def test_buy_btc_with_usd_and_a_limit_in_source_destination_units(
    sandbox: SandboxProcess, client: Session
) -> None:
    _, ask = top(client)
    # Least BTC per USD accepted: half what the market gives, written with 12 significant digits.
    floor = inverse(2 * ask).quantize(Decimal("1e-17"))
    before = holdings(client)

    response = client.limit_order("USD", "BTC", "10000", limit=f"{floor} USD/BTC")

    order = ok_body(response)["order"]
    total = check_filled_buy_btc(order, Decimal(10000))
    limit, first, second = price(order["limit"])
    assert (first, second) == ("USD", "BTC")
    assert limit == floor
    assert price(order["result"]["price"])[0] >= floor
    assert moved(before, holdings(client)) == {
        "USD": (Decimal(-10000), ZERO),
        "BTC": (total, ZERO),
    }
    check_trade_legs(
        client,
        order["orderId"],
        "USD",
        Decimal(10000),
        "BTC",
        total,
        order["result"]["executedAt"],
    )
    assert_ledger_explains_balances(sandbox, client)


def test_limit_in_destination_source_units_is_read_as_its_inverse(client: Session) -> None:
    # "90000 BTC/USD" on a USD->BTC order: pay at most 90000 USD per BTC, i.e. at least
    # 1/90000 BTC per USD.
    response = client.limit_order("USD", "BTC", "900", limit="90000 BTC/USD")
    order = ok_body(response)["order"]
    limit, first, second = price(order["limit"])
    assert (first, second) == ("USD", "BTC")
    assert near(limit * 90000, Decimal(1), Decimal("1e-11"))
    if order["result"]["status"] == "filled":
        assert price(order["result"]["invertedPrice"])[0] <= 90000
    else:
        assert order["result"]["status"] == "submitted"

    # Willing to pay twice the ask: fills at once (read literally it could never fill).
    _, ask = top(client)
    generous = ok_body(client.limit_order("USD", "BTC", "1000", limit=f"{2 * ask} BTC/USD"))
    assert generous["order"]["result"]["status"] == "filled"
    assert price(generous["order"]["result"]["invertedPrice"])[0] <= 2 * ask
    limit, first, second = price(generous["order"]["limit"])
    assert (first, second) == ("USD", "BTC")
    assert near(limit * 2 * ask, Decimal(1), Decimal("1e-11"))

    # Willing to pay half the ask: rests (a limit that was ignored would fill).
    stingy = ok_body(client.limit_order("USD", "BTC", "1000", limit=f"{ask / 2} BTC/USD"))
    assert stingy["order"]["result"]["status"] == "submitted"


def test_non_marketable_sell_rests_with_its_size_locked(
    sandbox: SandboxProcess, client: Session
) -> None:
    bid, _ = top(client)
    before = holdings(client)
    trades_before = trade_orderings(client)
    sums_before = ledger_sums(client)

    response = client.limit_order("BTC", "USD", "0.5", limit=f"{bid * 10} BTC/USD")

    order = ok_body(response)["order"]
    result = order["result"]
    assert result["status"] == "submitted"
    assert "price" not in result
    assert "total" not in result
    assert "executedAt" not in result
    assert moved(before, holdings(client)) == {"BTC": (Decimal("-0.5"), Decimal("0.5"))}
    assert trade_orderings(client) == trades_before
    assert ledger_sums(client) == sums_before
    assert get_order(client, order["orderId"])["result"]["status"] == "submitted"
    resting = ok_body(
        client.get("/api/v1/routing/order/account/{account}", status="submitted", max=100)
    )["orders"]
    assert [o["orderId"] for o in resting] == [order["orderId"]]
    assert_ledger_explains_balances(sandbox, client)
    # The locked BTC is not spendable: 1.5 free remain, so 1.6 is refused.
    assert_refusal(client.limit_order("BTC", "USD", "1.6"), 424, "Insufficient Funds")


@pytest.mark.parametrize("path", [LIMIT, ORDER])
def test_order_whose_total_rounds_to_nothing_is_refused(client: Session, path: str) -> None:
    """One satoshi sells for 0.0009 USD, which rounds down to 0.00: the seller would give BTC
    for nothing. An RFQ of that size is refused as too small to quote; an order must be too."""
    before = holdings(client)
    payload: dict[str, Any] = {
        "type": "market",
        "source": "BTC",
        "destination": "USD",
        "size": "0.00000001",
    }
    if path == LIMIT:
        payload = {**payload, "type": "limit", "accountId": {"value": client.account}}
    response = client.post(path, payload)
    assert response.status_code == 400, response.text
    assert body(response)["tradesSubmitted"] is False
    assert holdings(client) == before
    assert trade_orderings(client) == set()


@pytest.mark.slow
def test_resting_order_past_end_at_is_canceled_and_unlocked(
    sandbox: SandboxProcess, client: Session
) -> None:
    bid, _ = top(client)
    before = holdings(client)
    end_at = (server_time(sandbox) + timedelta(seconds=3)).replace(microsecond=0)
    end_text = end_at.strftime("%Y-%m-%dT%H:%M:%SZ")

    response = client.limit_order("BTC", "USD", "0.7", limit=f"{bid * 10}", endAt=end_text)

    order = ok_body(response)["order"]
    assert order["result"]["status"] == "submitted"
    assert wire_time(order["endAt"]) == end_at
    assert moved(before, holdings(client)) == {"BTC": (Decimal("-0.7"), Decimal("0.7"))}

    canceled = wait_until(
        lambda: (o := get_order(client, order["orderId"]))["result"]["status"] == "canceled" and o,
        timeout=15,
    )
    assert wire_time(canceled["result"]["updatedAt"]) >= end_at
    assert "total" not in canceled["result"]
    assert canceled["result"]["error"]
    assert moved(before, holdings(client)) == {}
    assert trade_orderings(client) == set()
    assert_ledger_explains_balances(sandbox, client)


@pytest.mark.slow
def test_resting_order_is_filled_by_the_matcher_when_the_market_reaches_its_limit(
    sandbox_factory: Factory,
) -> None:
    """Deterministic: with ``--tick 3`` the market holds one quote for three seconds, so both
    orders below are placed against the same quote (checked) and cannot fill at submission; at
    the next tick (fixed by ``--seed``) the BTC/USD mid moves, so the bid rises above the sell's
    limit or the ask falls below the buy's, and the background matcher fills that order."""
    sandbox = sandbox_factory("--tick", "3", "--seed", "1")
    session = new_client(sandbox, {"USD": "100000", "BTC": "1"})
    try:
        bid0, ask0 = top(session)
        sell_limit = bid0 + CENT
        buy_cap = ask0 - CENT  # pay at most this many USD per BTC
        before = holdings(session)
        sell = ok_body(session.limit_order("BTC", "USD", "0.5", limit=f"{sell_limit} BTC/USD"))
        buy = ok_body(session.limit_order("USD", "BTC", "10000", limit=f"{buy_cap} BTC/USD"))
        assert top(session) == (bid0, ask0), "a tick passed while placing; the test ran too slowly"
        assert sell["order"]["result"]["status"] == "submitted"
        assert buy["order"]["result"]["status"] == "submitted"
        locked = holdings(session)
        assert moved(before, locked) == {
            "BTC": (Decimal("-0.5"), Decimal("0.5")),
            "USD": (Decimal(-10000), Decimal(10000)),
        }
        ids = {"sell": sell["order"]["orderId"], "buy": buy["order"]["orderId"]}

        def filled() -> dict[str, dict[str, Any]]:
            orders = {side: get_order(session, oid) for side, oid in ids.items()}
            return {s: o for s, o in orders.items() if o["result"]["status"] == "filled"}

        fills = wait_until(filled, timeout=20, interval=0.1)
        after = holdings(session)
        side, order = next(iter(sorted(fills.items())))
        changes = moved(locked, after)
        if side == "sell":
            total = check_filled_sell_btc(order, Decimal("0.5"))
            assert price(order["result"]["price"])[0] >= sell_limit
            expected = {"BTC": (ZERO, Decimal("-0.5")), "USD": (total, ZERO)}
            legs = ("BTC", Decimal("0.5"), "USD", total)
        else:
            total = check_filled_buy_btc(order, Decimal(10000))
            assert price(order["result"]["invertedPrice"])[0] <= buy_cap
            expected = {"USD": (ZERO, Decimal(-10000)), "BTC": (total, ZERO)}
            legs = ("USD", Decimal(10000), "BTC", total)
        if len(fills) == 1:
            assert changes == expected
        assert wire_time(order["result"]["executedAt"]) > wire_time(order["submittedAt"])
        assert order["result"]["updatedAt"] == order["result"]["executedAt"]
        check_trade_legs(session, ids[side], *legs, order["result"]["executedAt"])
        assert_ledger_explains_balances(sandbox, session)
    finally:
        session.close()


# -- clientOrderId --------------------------------------------------------------------------


def test_client_order_id_replay_returns_the_filled_order_and_trades_once(
    sandbox: SandboxProcess, client: Session
) -> None:
    before = holdings(client)
    first = ok_body(client.limit_order("BTC", "USD", "0.3", clientOrderId="coid-fill"))["order"]
    after_first = holdings(client)

    replay = ok_body(client.limit_order("BTC", "USD", "0.3", clientOrderId="coid-fill"))["order"]

    assert replay["orderId"] == first["orderId"]
    assert replay["result"] == first["result"]
    assert replay["clientOrderId"] == "coid-fill"
    assert holdings(client) == after_first
    assert moved(before, after_first)["BTC"] == (Decimal("-0.3"), ZERO)
    assert len(trade_orderings(client)) == 1
    check_trade_legs(
        client, first["orderId"], "BTC", Decimal("0.3"), "USD", amount(first["result"]["total"])[0]
    )

    other = ok_body(client.limit_order("BTC", "USD", "0.3", clientOrderId="coid-other"))["order"]
    assert other["orderId"] != first["orderId"]
    assert other["result"]["status"] == "filled"
    assert len(trade_orderings(client)) == 2
    assert moved(before, holdings(client))["BTC"] == (Decimal("-0.6"), ZERO)
    assert_ledger_explains_balances(sandbox, client)


def test_client_order_id_replay_of_a_resting_order_locks_once(
    sandbox: SandboxProcess, client: Session
) -> None:
    bid, _ = top(client)
    limit = f"{bid * 10} BTC/USD"
    before = holdings(client)
    first = ok_body(client.limit_order("BTC", "USD", "0.4", limit=limit, clientOrderId="rest-1"))
    replay = ok_body(client.limit_order("BTC", "USD", "0.4", limit=limit, clientOrderId="rest-1"))

    assert first["order"]["result"]["status"] == "submitted"
    assert replay["order"]["orderId"] == first["order"]["orderId"]
    assert replay["order"]["result"]["status"] == "submitted"
    assert moved(before, holdings(client)) == {"BTC": (Decimal("-0.4"), Decimal("0.4"))}
    assert order_count(client) == 1
    assert_ledger_explains_balances(sandbox, client)


def test_client_order_id_replay_of_a_refused_order_returns_the_same_refusal(
    sandbox: SandboxProcess, client: Session
) -> None:
    before = holdings(client)
    first = client.limit_order("BTC", "USD", "5", clientOrderId="too-big")
    refusal = assert_refusal(first, 424, "Insufficient Funds", trades_shape=True)
    assert "5 BTC" in refusal["errors"][0]

    replay = client.limit_order("BTC", "USD", "5", clientOrderId="too-big")
    assert replay.status_code == 424
    assert body(replay) == refusal
    assert holdings(client) == before

    # Still the original refusal once funds would suffice; a new clientOrderId trades.
    deposit = client.post("/api/v1/sandbox/account/{account}/deposit", {"amount": "10 BTC"})
    ok_body(deposit)
    again = client.limit_order("BTC", "USD", "5", clientOrderId="too-big")
    assert again.status_code == 424
    assert body(again) == refusal
    fresh = ok_body(client.limit_order("BTC", "USD", "5", clientOrderId="big-enough"))["order"]
    assert fresh["orderId"] != refusal["orderId"]
    assert fresh["result"]["status"] == "filled"
    assert len(trade_orderings(client)) == 1
    assert_ledger_explains_balances(sandbox, client)


def test_parallel_replays_of_one_client_order_id_trade_once(
    sandbox: SandboxProcess, client: Session
) -> None:
    before = holdings(client)
    responses = race_limit_sells(sandbox, client, 10, "0.2", 30, clientOrderId="same-everywhere")
    orders = [ok_body(response)["order"] for response in responses]
    assert len({order["orderId"] for order in orders}) == 1
    assert len(trade_orderings(client)) == 1
    assert moved(before, holdings(client))["BTC"] == (Decimal("-0.2"), ZERO)
    assert_ledger_explains_balances(sandbox, client)


# -- RFQ ----------------------------------------------------------------------------------------


def request_quote(session: Session, size: str, pair: str = "BTC/USD") -> dict[str, Any]:
    quote: dict[str, Any] = ok_body(session.post(RFQ, {"assetPair": pair, "size": size}))
    return quote


def check_quote_sides(quote: dict[str, Any]) -> None:
    buy, sell = quote["buy"], quote["sell"]
    assert isinstance(quote["orderId"], str)
    assert quote["orderId"]
    assert amount(buy["source"])[1] == "USD"
    assert amount(buy["destination"])[1] == "BTC"
    assert amount(sell["source"])[1] == "BTC"
    assert amount(sell["destination"])[1] == "USD"
    buy_price, base, quote_asset = price(buy["price"])
    assert (base, quote_asset) == ("BTC", "USD")
    sell_price, base, quote_asset = price(sell["price"])
    assert (base, quote_asset) == ("BTC", "USD")
    assert buy_price > sell_price
    # The amounts follow the prices (to the cent / satoshi the rounding costs).
    usd, btc = amount(buy["source"])[0], amount(buy["destination"])[0]
    assert abs(usd - btc * buy_price) <= CENT + buy_price * SATOSHI
    usd, btc = amount(sell["destination"])[0], amount(sell["source"])[0]
    assert abs(usd - btc * sell_price) <= CENT + sell_price * SATOSHI
    for side in (buy, sell):
        assert wire_time(side["expiresAt"])


def test_rfq_in_base_size_accept_buy_fills_exactly_the_quote_once(
    sandbox: SandboxProcess, client: Session
) -> None:
    quote = request_quote(client, "0.1 BTC")
    check_quote_sides(quote)
    assert amount(quote["buy"]["destination"]) == (Decimal("0.1"), "BTC")
    assert amount(quote["sell"]["source"]) == (Decimal("0.1"), "BTC")
    paid = amount(quote["buy"]["source"])[0]
    before = holdings(client)

    order = ok_body(accept(client, quote["orderId"], "buy"))["order"]

    assert order["type"] == "rfq"
    assert order["orderId"] == quote["orderId"]
    assert (order["source"], order["destination"]) == ("USD", "BTC")
    assert amount(order["size"]) == (paid, "USD")
    assert order["result"]["status"] == "filled"
    assert amount(order["result"]["total"]) == (Decimal("0.1"), "BTC")
    rate, first, second = price(order["result"]["price"])
    assert (first, second) == ("USD", "BTC")
    assert near(rate, inverse(price(quote["buy"]["price"])[0]), Decimal("1e-11"))
    after = holdings(client)
    assert moved(before, after) == {"USD": (-paid, ZERO), "BTC": (Decimal("0.1"), ZERO)}
    check_trade_legs(
        client,
        quote["orderId"],
        "USD",
        paid,
        "BTC",
        Decimal("0.1"),
        order["result"]["executedAt"],
    )

    for side in ("sell", "buy"):
        second_accept = accept(client, quote["orderId"], side)
        assert second_accept.status_code == 409, second_accept.text
        refusal = body(second_accept)
        assert refusal["httpStatusCode"] == 409
        assert refusal["errors"]
        assert refusal["status"] != "ok"
    assert holdings(client) == after
    assert len(trade_orderings(client)) == 1
    assert_ledger_explains_balances(sandbox, client)


def test_rfq_in_quote_size_accept_sell_fills_exactly_the_quote(
    sandbox: SandboxProcess, client: Session
) -> None:
    quote = request_quote(client, "5000 USD")
    check_quote_sides(quote)
    assert amount(quote["buy"]["source"]) == (Decimal(5000), "USD")
    assert amount(quote["sell"]["destination"]) == (Decimal(5000), "USD")
    sold = amount(quote["sell"]["source"])[0]
    before = holdings(client)

    order = ok_body(accept(client, quote["orderId"], "sell"))["order"]

    assert order["type"] == "rfq"
    assert (order["source"], order["destination"]) == ("BTC", "USD")
    assert amount(order["size"]) == (sold, "BTC")
    assert amount(order["result"]["total"]) == (Decimal(5000), "USD")
    assert price(order["result"]["price"]) == (price(quote["sell"]["price"])[0], "BTC", "USD")
    assert moved(before, holdings(client)) == {"BTC": (-sold, ZERO), "USD": (Decimal(5000), ZERO)}
    check_trade_legs(client, quote["orderId"], "BTC", sold, "USD", Decimal(5000))
    assert_ledger_explains_balances(sandbox, client)


def test_rfq_unknown_side_and_unknown_quote_are_refused(
    sandbox: SandboxProcess, client: Session
) -> None:
    quote = request_quote(client, "0.1 BTC")
    before = holdings(client)
    for side in ("hold", "BUY", None, 1):
        response = accept(client, quote["orderId"], side)
        assert response.status_code == 400, response.text
        assert body(response)["httpStatusCode"] == 400
    missing = accept(client, str(uuid.uuid4()), "buy")
    assert missing.status_code == 404, missing.text
    assert body(missing)["httpStatusCode"] == 404
    stranger = new_client(sandbox)
    try:
        theirs = accept(stranger, quote["orderId"], "buy")
        assert theirs.status_code == 404, theirs.text
        assert trade_orderings(stranger) == set()
    finally:
        stranger.close()
    assert holdings(client) == before
    # The bad attempts did not use the quote up.
    ok_body(accept(client, quote["orderId"], "sell"))


def test_rfq_accept_without_funds_is_refused_and_changes_nothing(sandbox: SandboxProcess) -> None:
    session = new_client(sandbox, {"USD": "100"})
    try:
        quote = request_quote(session, "1 BTC")
        before = holdings(session)
        assert_refusal(accept(session, quote["orderId"], "buy"), 424, "Insufficient Funds")
        assert_refusal(accept(session, quote["orderId"], "sell"), 424, "Insufficient Funds")
        assert holdings(session) == before
        assert trade_orderings(session) == set()
    finally:
        session.close()


@pytest.mark.slow
def test_rfq_quote_past_expires_at_is_gone(sandbox_factory: Factory) -> None:
    sandbox = sandbox_factory("--quote-ttl", "1")
    session = new_client(sandbox)
    try:
        quote = request_quote(session, "0.1 BTC")
        expires = max(wire_time(quote[side]["expiresAt"]) for side in ("buy", "sell"))
        assert expires - server_time(sandbox) <= timedelta(seconds=1)
        before = holdings(session)
        wait_until(lambda: server_time(sandbox) > expires, timeout=10)
        for side in ("buy", "sell"):
            assert_refusal(accept(session, quote["orderId"], side), 410, "Quote expired")
        assert holdings(session) == before
        assert trade_orderings(session) == set()
    finally:
        session.close()


# -- market orders ------------------------------------------------------------------------------


def test_market_order_fills(sandbox: SandboxProcess, client: Session) -> None:
    before = holdings(client)
    sold = ok_body(market_order(client, "BTC", "USD", "0.25", clientOrderId="mkt-1"))["order"]
    assert sold["type"] == "market"
    usd = check_filled_sell_btc(sold, Decimal("0.25"))
    bought = ok_body(market_order(client, "USD", "ETH", "1000 USD"))["order"]
    assert bought["type"] == "market"
    assert bought["result"]["status"] == "filled"
    eth, asset = amount(bought["result"]["total"])
    assert asset == "ETH"
    assert eth > 0
    assert moved(before, holdings(client)) == {
        "BTC": (Decimal("-0.25"), ZERO),
        "USD": (usd - 1000, ZERO),
        "ETH": (eth, ZERO),
    }
    check_trade_legs(client, bought["orderId"], "USD", Decimal(1000), "ETH", eth)
    # A replay of the clientOrderId is the same order.
    replay = ok_body(market_order(client, "BTC", "USD", "0.25", clientOrderId="mkt-1"))["order"]
    assert replay["orderId"] == sold["orderId"]
    assert len(trade_orderings(client)) == 2
    assert_ledger_explains_balances(sandbox, client)


def test_market_order_with_a_limit_is_invalid(client: Session) -> None:
    bid, _ = top(client)
    before = holdings(client)
    response = market_order(client, "BTC", "USD", "0.25", limit=f"{bid / 2}")
    refusal = assert_refusal(response, 400, "", trades_shape=True)
    assert "limit" in refusal["errors"][0]
    assert holdings(client) == before
    assert order_count(client) == 0


# -- credit -------------------------------------------------------------------------------------


def test_credit_lets_free_go_negative_up_to_the_credit_line(sandbox: SandboxProcess) -> None:
    session = new_client(sandbox, {"USD": "1000"}, {"USD": "-50000"})
    try:
        before = holdings(session)
        over = refused_past_credit(session, "51000.01")
        assert "51000.01 USD" in over["errors"][0]
        assert "only 51000 USD" in over["errors"][0]
        assert holdings(session) == before

        first = ok_body(session.limit_order("USD", "BTC", "20000"))["order"]
        btc = check_filled_buy_btc(first, Decimal(20000))
        assert holdings(session)["USD"] == (Decimal(-19000), ZERO)
        credit = portfolio(session, "USD")
        assert credit["usedCredit"] == 19000
        assert credit["availableCredit"] == 31000
        assert credit["totalCredit"] == 50000
        account = ok_body(session.get("/api/v1/accounting/account/{account}"))
        assert dec(account["account"]["balances"]["USD"]["limit"]) == -50000
        assert dec(account["account"]["balances"]["USD"]["available"]) == 31000

        refused = refused_past_credit(session, "31000.01")
        assert "only 31000 USD" in refused["errors"][0]
        second = ok_body(session.limit_order("USD", "BTC", "31000"))["order"]
        btc += check_filled_buy_btc(second, Decimal(31000))
        assert holdings(session)["USD"] == (Decimal(-50000), ZERO)
        assert holdings(session)["BTC"] == (btc, ZERO)
        credit = portfolio(session, "USD")
        assert (credit["usedCredit"], credit["availableCredit"]) == (Decimal(50000), ZERO)
        assert_refusal(session.limit_order("USD", "BTC", "0.01"), 424, "Insufficient Funds")
        assert len(trade_orderings(session)) == 2
        assert_ledger_explains_balances(sandbox, session)
    finally:
        session.close()


def test_credit_not_available_when_credit_hours_are_never(sandbox_factory: Factory) -> None:
    sandbox = sandbox_factory("--credit-hours", "never")
    session = new_client(sandbox, {"USD": "1000"}, {"USD": "-50000"})
    try:
        before = holdings(session)
        assert_refusal(
            session.limit_order("USD", "BTC", "20000"),
            424,
            "Credit Not Available",
            trades_shape=False,
        )
        assert holdings(session) == before
        assert trade_orderings(session) == set()
        # Own funds remain spendable.
        order = ok_body(session.limit_order("USD", "BTC", "500"))["order"]
        assert order["result"]["status"] == "filled"
        assert holdings(session)["USD"] == (Decimal(500), ZERO)
        assert_ledger_explains_balances(sandbox, session)
    finally:
        session.close()


# -- concurrency --------------------------------------------------------------------------------


@pytest.mark.slow
def test_fifty_parallel_sells_fill_exactly_what_the_balance_allows(
    sandbox: SandboxProcess, client: Session
) -> None:
    responses = race_limit_sells(sandbox, client, 50, "0.1", 60)
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * 20 + [424] * 30
    filled = [body(r)["order"] for r in responses if r.status_code == 200]
    for response in responses:
        if response.status_code == 424:
            assert_refusal(response, 424, "Insufficient Funds", trades_shape=True)
    usd = sum((check_filled_sell_btc(order, Decimal("0.1")) for order in filled), ZERO)
    after = holdings(client)
    assert after["BTC"] == (ZERO, ZERO)
    assert after["USD"] == (100000 + usd, ZERO)
    trades = ledger(client, type="trade")
    assert len({entry["ordering"] for entry in trades}) == 20
    assert {entry["transactionId"] for entry in trades} == {order["orderId"] for order in filled}
    assert_ledger_explains_balances(sandbox, client)


# -- stateful property test ---------------------------------------------------------------------

MACHINE_PAIRS = ("BTC/USD", "ETH/USD", "BTC/USDT", "ETH/USDT", "USDT/USD", "ETH/BTC")
UNITS = {"BTC": Decimal("0.5"), "ETH": Decimal(5), "USD": Decimal(20000), "USDT": Decimal(20000)}
MINIMUM_SIZE = {
    "BTC": Decimal("0.0001"),
    "ETH": Decimal("0.001"),
    "USD": Decimal(1),
    "USDT": Decimal(1),
}
MACHINE_BALANCES = {"USD": "50000", "USDT": "20000", "BTC": "1", "ETH": "10"}
MACHINE_CREDIT = {"USD": "-10000"}


class TradingMachine(RuleBasedStateMachine):
    """Random deposits, orders, RFQs and withdrawals on one fresh account; a model of free and
    locked per asset predicts every outcome, and the ledger must explain the balances."""

    sandbox: ClassVar[SandboxProcess | None] = None

    def __init__(self) -> None:
        super().__init__()
        assert self.sandbox is not None
        self.server = self.sandbox
        self.session = new_client(self.server, MACHINE_BALANCES, MACHINE_CREDIT)
        self.free = {asset: Decimal(value) for asset, value in MACHINE_BALANCES.items()}
        self.locked: dict[str, Decimal] = {}
        self.credit = {asset: -Decimal(value) for asset, value in MACHINE_CREDIT.items()}

    def teardown(self) -> None:
        self.session.close()

    # -- model ----------------------------------------------------------------------------------

    def spendable(self, asset: str) -> Decimal:
        """What an order may spend now: free funds plus unused credit."""
        free = self.free.get(asset, ZERO)
        line = self.credit.get(asset, ZERO)
        return max(ZERO, free) + max(ZERO, line - max(ZERO, -free))

    def add(self, asset: str, free: Decimal = ZERO, locked: Decimal = ZERO) -> None:
        self.free[asset] = self.free.get(asset, ZERO) + free
        self.locked[asset] = self.locked.get(asset, ZERO) + locked

    def size_for(self, asset: str, mode: str, pct: int) -> Decimal:
        step = quantum(asset)
        if mode == "part":
            raw = self.spendable(asset) * pct / 100
        elif mode == "all":
            raw = self.spendable(asset)
        else:
            raw = self.spendable(asset) + step * pct
        size = raw.quantize(step, rounding=ROUND_DOWN)
        # Never so small that it would receive nothing (refused as invalid, tested on its own).
        return max(size, MINIMUM_SIZE[asset])

    # -- rules ----------------------------------------------------------------------------------

    @rule(asset=st.sampled_from(sorted(UNITS)), pct=st.integers(1, 100))
    def deposit(self, asset: str, pct: int) -> None:
        value = (UNITS[asset] * pct / 100).quantize(quantum(asset))
        response = self.session.post(
            "/api/v1/sandbox/account/{account}/deposit", {"amount": f"{value} {asset}"}
        )
        record = ok_body(response)["deposit"]
        assert (record["asset"], dec(record["amount"])) == (asset, value)
        self.add(asset, free=value)

    def _order(
        self, kind: str, pair: str, sell_base: bool, mode: str, pct: int, limit: str
    ) -> None:
        base, quote_asset = pair.split("/")
        source, destination = (base, quote_asset) if sell_base else (quote_asset, base)
        size = self.size_for(source, mode, pct)
        expect_ok = size <= self.spendable(source)
        extra: dict[str, str] = {}
        if limit != "none":
            bid, ask = top(self.session, pair)
            # In the pair's own unit: the sell side asks for a price per BASE, the buy side caps it.
            resting = limit == "resting"
            if sell_base:
                level = bid * 10 if resting else bid / 10
            else:
                level = ask / 10 if resting else ask * 10
            extra["limit"] = f"{level} {pair}"
        if kind == "market":
            response = market_order(self.session, source, destination, str(size))
        else:
            response = self.session.limit_order(source, destination, str(size), **extra)
        event(f"{kind} order: {'ok' if expect_ok else 'refused'}, limit {limit}")
        if not expect_ok:
            assert_refusal(response, 424, "Insufficient Funds")
            return
        order = ok_body(response)["order"]
        assert amount(order["size"]) == (size, source)
        result = order["result"]
        if limit == "resting":
            assert result["status"] == "submitted", order
            self.add(source, free=-size, locked=size)
            return
        assert result["status"] == "filled", order
        total, asset = amount(result["total"])
        assert asset == destination
        rate, first, second = price(result["price"])
        assert (first, second) == (source, destination)
        with localcontext() as ctx:
            ctx.prec = 50
            exact = size * rate
        assert exact - quantum(destination) - exact * Decimal("1e-11") <= total
        assert total <= exact * (1 + Decimal("1e-11"))
        self.add(source, free=-size)
        self.add(destination, free=total)

    @rule(
        pair=st.sampled_from(MACHINE_PAIRS),
        sell_base=st.booleans(),
        mode=st.sampled_from(["part", "all", "over"]),
        pct=st.integers(1, 100),
        limit=st.sampled_from(["none", "marketable", "resting"]),
    )
    def limit(self, pair: str, sell_base: bool, mode: str, pct: int, limit: str) -> None:
        self._order("limit", pair, sell_base, mode, pct, limit)

    @rule(
        pair=st.sampled_from(MACHINE_PAIRS),
        sell_base=st.booleans(),
        mode=st.sampled_from(["part", "all", "over"]),
        pct=st.integers(1, 100),
    )
    def market(self, pair: str, sell_base: bool, mode: str, pct: int) -> None:
        self._order("market", pair, sell_base, mode, pct, "none")

    @rule(
        pair=st.sampled_from(MACHINE_PAIRS),
        in_base=st.booleans(),
        pct=st.integers(1, 200),
        side=st.sampled_from(["buy", "sell"]),
    )
    def rfq(self, pair: str, in_base: bool, pct: int, side: str) -> None:
        base, quote_asset = pair.split("/")
        asset = base if in_base else quote_asset
        size = (UNITS[asset] * pct / 100).quantize(quantum(asset))
        quote = request_quote(self.session, f"{size} {asset}", pair)
        paid, paid_asset = amount(quote[side]["source"])
        received, received_asset = amount(quote[side]["destination"])
        assert (paid_asset, received_asset) == (
            (quote_asset, base) if side == "buy" else (base, quote_asset)
        )
        assert size in (paid, received)
        response = accept(self.session, quote["orderId"], side)
        event(f"rfq accept: {'refused' if paid > self.spendable(paid_asset) else 'ok'}")
        if paid > self.spendable(paid_asset):
            assert_refusal(response, 424, "Insufficient Funds")
            return
        order = ok_body(response)["order"]
        assert amount(order["size"]) == (paid, paid_asset)
        assert amount(order["result"]["total"]) == (received, received_asset)
        self.add(paid_asset, free=-paid)
        self.add(received_asset, free=received)

    @rule(mode=st.sampled_from(["part", "over"]), pct=st.integers(1, 100))
    def withdraw_fiat(self, mode: str, pct: int) -> None:
        funds = max(ZERO, self.free.get("USD", ZERO))  # withdrawals never use credit
        if mode == "part":
            value = (funds * pct / 100).quantize(CENT, rounding=ROUND_DOWN)
        else:
            value = funds + CENT * pct
        value = max(value, CENT)
        response = self.session.post(
            "/api/v1/accounting/account/{account}/request/withdraw/fiat",
            {"amount": f"{value} USD"},
        )
        event(f"withdraw: {'refused' if value > funds else 'ok'}")
        if value > funds:
            assert_refusal(response, 424, "Insufficient Funds")
            return
        record = ok_body(response)["withdrawal"]
        assert (record["asset"], dec(record["amount"])) == ("USD", value)
        self.add("USD", free=-value)

    # -- invariants -----------------------------------------------------------------------------

    @state_invariant()
    def ledger_explains_balances(self) -> None:
        assert_ledger_explains_balances(self.server, self.session)

    @state_invariant()
    def balances_match_the_model_and_stay_within_credit(self) -> None:
        rows = ok_body(self.session.get("/api/v1/accounting/account/{account}"))["account"]
        for asset, row in rows["balances"].items():
            free, locked, line = dec(row["free"]), dec(row["locked"]), dec(row["limit"])
            # Model-independent: never below the credit line, nothing negative locked.
            assert line <= 0
            assert free >= line, (asset, free, line)
            assert locked >= 0, (asset, locked)
            # The model's account of every response.
            assert (free, locked) == (
                self.free.get(asset, ZERO),
                self.locked.get(asset, ZERO),
            ), asset


@pytest.mark.slow
def test_ledger_explains_balances_under_random_trading(sandbox: SandboxProcess) -> None:
    TradingMachine.sandbox = sandbox
    try:
        run_state_machine_as_test(
            TradingMachine,
            settings=settings(
                max_examples=5,
                stateful_step_count=15,
                deadline=None,
                database=None,
                # No shrinking: a failing run of at most 15 steps reads well as it is, and
                # shrinking over HTTP could outlast the pytest timeout.
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
    finally:
        TradingMachine.sandbox = None


def test_client_order_id_reused_for_a_different_trade_is_409(client: Session) -> None:
    """A replay must ask for the same trade; otherwise the caller would get a silent 'success'
    for an order it did not mean (e.g. the RFQ that took the id first)."""
    quote = body(
        client.post(RFQ, {"assetPair": "BTC/USD", "size": "0.01 BTC", "clientOrderId": "shared-id"})
    )
    assert accept(client, quote["orderId"], "sell").status_code == 200
    before = holdings(client)
    reused = client.limit_order("BTC", "USD", "0.1", clientOrderId="shared-id")
    assert reused.status_code == 409, reused.text
    assert "different order" in body(reused)["errors"][0]
    first = client.limit_order("BTC", "USD", "0.1", clientOrderId="own-id")
    assert first.status_code == 200, first.text
    after_first = holdings(client)
    other_size = client.limit_order("BTC", "USD", "0.2", clientOrderId="own-id")
    assert other_size.status_code == 409, other_size.text
    assert holdings(client) == after_first != before
