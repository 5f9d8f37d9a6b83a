"""The service client under injected faults, against a real sandbox over loopback.

The sandbox's fault switches (``/api/v1/sandbox/admin/faults``) produce 5xx in both documented
body shapes, HTML gateway pages, 429 with Retry-After, 401 for valid tokens, latency, and
connections dropped before or after the request ran; their request log shows what reached the
server and when. One module-scoped sandbox serves these tests so no rule leaks into other files.
"""

from __future__ import annotations

import argparse
import itertools
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, TypeVar

import anyio
import pytest

from app.api import (
    BadResponse,
    ClientSettings,
    LoginExpired,
    NetworkError,
    OutcomeUnknown,
    RateLimited,
    RequestTimeout,
    RetryPolicy,
    ServerError,
    ServiceClient,
    ServiceError,
    new_client_order_id,
)
from app.cli import commands
from app.domain import Amount, parse_timestamp
from app.domain.order_request import OrderRequest
from app.domain.records import Order
from app.services.settling import Absent, OrderSettler, Sought
from tests.harness import (
    SandboxProcess,
    Session,
    body,
    invariant,
    new_client,
    own_sandbox,
)
from tests.helpers.client import connect

pytestmark = pytest.mark.anyio

ACCOUNT_PATH = r"^/api/v1/accounting/account/[^/]+$"
TOP_OF_BOOK_DOC = r"^/api/v1/routing/account/[^/]+/topofbook$"
TOP_OF_BOOK_OPS = r"^/api/v1/routing/ops/account/[^/]+/topofbook$"
ORDERS_DOC = r"^/api/v1/routing/order/account/[^/]+$"
ORDERS_OPS = r"^/api/v1/routing/ops/order/account/[^/]+/orders$"
LIMIT_PATH = r"^/api/v1/routing/account/[^/]+/order/limit$"
MARKET_PATH = r"^/api/v1/routing/account/[^/]+/order$"
ACCEPT_PATH = r"^/api/v1/routing/account/[^/]+/order/rfq/[^/]+/accept$"
ONE_TRY = RetryPolicy(attempts=1)
FAST_RETRY = RetryPolicy(attempts=4, base=0.02, cap=0.1)


class Faults:
    """The admin side of one sandbox: fault rules, their hits and the request log."""

    def __init__(self, sandbox: SandboxProcess) -> None:
        self.sandbox = sandbox

    def set(self, *rules: dict[str, Any], seed: int = 0) -> None:
        with self.sandbox.admin() as admin:
            response = admin.post(
                "/api/v1/sandbox/admin/faults", json={"faults": list(rules), "seed": seed}
            )
            assert response.status_code == 200, response.text

    def clear(self) -> None:
        with self.sandbox.admin() as admin:
            response = admin.delete("/api/v1/sandbox/admin/faults")
            assert response.status_code == 200, response.text

    def report(self) -> dict[str, Any]:
        with self.sandbox.admin() as admin:
            response = admin.get("/api/v1/sandbox/admin/faults")
            assert response.status_code == 200, response.text
            result: dict[str, Any] = body(response)
            return result

    def requests(self, method: str, pattern: str) -> list[dict[str, Any]]:
        """Logged requests with this method whose path matches ``pattern``, oldest first."""
        regex = re.compile(pattern)
        return [
            r
            for r in self.report()["requests"]
            if r["method"] == method and regex.search(r["path"])
        ]

    def paths(self, method: str, *patterns: str) -> list[str]:
        """Which of ``patterns`` each matching logged request hit, in order."""
        compiled = [re.compile(p) for p in patterns]
        found = []
        for r in self.report()["requests"]:
            if r["method"] != method:
                continue
            for pattern, regex in zip(patterns, compiled, strict=True):
                if regex.search(r["path"]):
                    found.append(pattern)
        return found

    def hits(self, kind: str) -> list[dict[str, Any]]:
        return [h for h in self.report()["hits"] if h["kind"] == kind]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxProcess]:
    """A sandbox of its own for fault injection (rules apply to every client of a sandbox): it
    stands in for the session's here, so ``client`` (tests/conftest.py) opens accounts on it."""
    yield from own_sandbox()


@pytest.fixture
def faults(sandbox: SandboxProcess) -> Iterator[Faults]:
    switch = Faults(sandbox)
    switch.clear()
    yield switch
    switch.clear()


#: ``await services(retry=..., read_timeout=...)``: a ServiceClient logged in as ``client``.
Services = Callable[..., Awaitable[ServiceClient]]


@pytest.fixture
async def services(
    sandbox: SandboxProcess, client: Session, anyio_backend: str
) -> AsyncIterator[Services]:
    """Service clients of ``client`` with the retries and timeouts a test asks for, all closed
    after it."""
    opened: list[ServiceClient] = []

    async def open_one(**options: Any) -> ServiceClient:
        opened.append(await connect(sandbox, client, **options))
        return opened[-1]

    yield open_one
    for service in opened:
        await service.aclose()


@pytest.fixture
async def api(services: Services) -> ServiceClient:
    return await services(retry=FAST_RETRY)


@pytest.fixture
async def one_try(services: Services) -> ServiceClient:
    """A client that never retries reads, so the first failure surfaces."""
    return await services(retry=ONE_TRY)


def seconds(stamp: Any) -> Decimal:
    """A request-log time (epoch seconds, or an ISO 8601 timestamp) as epoch seconds."""
    if isinstance(stamp, str):
        return Decimal(str(parse_timestamp(stamp, "time").timestamp()))
    return Decimal(str(stamp))


def server_orders(session: Session, **params: str) -> list[dict[str, Any]]:
    response = session.get("/api/v1/routing/order/account/{account}", max="1000", **params)
    assert response.status_code == 200, response.text
    orders: list[dict[str, Any]] = body(response)["orders"]
    return orders


E = TypeVar("E", bound=BaseException)


async def failed_read(
    faults: Faults, service: ServiceClient, rule: dict[str, Any], error: type[E]
) -> E:
    """The account read, under the fault ``rule`` on its path, fails with ``error``: returned."""
    faults.set({**rule, "path": ACCOUNT_PATH})
    with pytest.raises(error) as caught:
        await service.account()
    return caught.value


# -- typed errors for failures ----------------------------------------------------------------


async def test_server_errors_in_both_documented_shapes(
    faults: Faults, one_try: ServiceClient
) -> None:
    unavailable = await failed_read(faults, one_try, {"kind": "status", "status": 503}, ServerError)
    assert unavailable.status == 503
    assert unavailable.messages == ["Service temporarily unavailable"]
    assert str(unavailable) == "HTTP 503: Service temporarily unavailable"

    internal = await failed_read(faults, one_try, {"kind": "status", "status": 500}, ServerError)
    assert internal.status == 500
    assert internal.body == {"status": 500, "error": "Internal Server Error"}
    assert internal.messages == ["Internal Server Error"]


async def test_html_gateway_page_is_a_readable_server_error(
    faults: Faults, one_try: ServiceClient
) -> None:
    refused = await failed_read(faults, one_try, {"kind": "html", "status": 502}, ServerError)
    message = str(refused)
    assert refused.status == 502
    assert "HTML page" in message and "502 Bad Gateway" in message
    assert "<" not in message and len(message) < 200


async def test_too_many_requests_is_rate_limited_with_retry_after(
    faults: Faults, one_try: ServiceClient
) -> None:
    refused = await failed_read(
        faults, one_try, {"kind": "retry_after", "retryAfter": 7}, RateLimited
    )
    assert refused.status == 429 and refused.retry_after == 7.0
    assert refused.messages == ["Too many requests; slow down"]


async def test_slow_answer_is_a_request_timeout(faults: Faults, services: Services) -> None:
    service = await services(retry=ONE_TRY, read_timeout=0.5)
    faults.set({"kind": "latency", "seconds": 2, "path": ACCOUNT_PATH})
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as caught:
        await service.account()
    assert time.monotonic() - started < 1.8
    assert isinstance(caught.value, NetworkError)
    assert "read timeout" in str(caught.value)


# -- retries of reads -------------------------------------------------------------------------


async def test_reads_retry_server_errors_and_dropped_connections(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    faults.set({"kind": "status", "status": 503, "count": 2, "path": ACCOUNT_PATH})
    assert (await api.account()).account_id == client.account
    assert len(faults.requests("GET", ACCOUNT_PATH)) == 3

    faults.set({"kind": "drop", "count": 1, "path": ACCOUNT_PATH})
    assert (await api.account()).account_id == client.account
    assert len(faults.requests("GET", ACCOUNT_PATH)) == 2
    assert len(faults.hits("drop")) == 1

    # Retries are bounded: a failure that persists surfaces after ``attempts`` tries.
    await failed_read(faults, api, {"kind": "status", "status": 503}, ServerError)
    assert len(faults.requests("GET", ACCOUNT_PATH)) == FAST_RETRY.attempts


@pytest.mark.slow
async def test_retry_after_is_honoured(faults: Faults, services: Services) -> None:
    faults.set({"kind": "retry_after", "retryAfter": 1, "count": 2, "path": TOP_OF_BOOK_DOC})
    service = await services()
    books = await service.top_of_book(["BTC/USD"])
    assert books["BTC/USD"].bid < books["BTC/USD"].ask
    times = [seconds(r["time"]) for r in faults.requests("GET", TOP_OF_BOOK_DOC)]
    assert len(times) == 3
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert all(gap >= 1 for gap in gaps), gaps
    assert len(faults.hits("retry_after")) == 2


# -- tokens -----------------------------------------------------------------------------------


async def test_a_second_401_is_reported_after_one_relogin(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    faults.set({"kind": "unauthorized", "path": ACCOUNT_PATH})
    before = faults.sandbox.logins(client.user)
    with pytest.raises(LoginExpired) as caught:
        await api.account()
    assert caught.value.status == 401
    assert caught.value.messages == ["Token expired; log in again"]
    assert api.logins == 2
    assert faults.sandbox.logins(client.user) == before + 1
    assert len(faults.requests("GET", ACCOUNT_PATH)) == 2  # the call and its one retry

    with pytest.raises(LoginExpired, match="less than a minute ago"):
        await api.account()
    assert api.logins == 2  # no second re-login within the minute: never a login storm
    assert len(faults.requests("GET", ACCOUNT_PATH)) == 3

    # Other operations were never refused and still work with the renewed token.
    assert (await api.portfolio()).account_id == client.account


# -- path variants ----------------------------------------------------------------------------


async def test_top_of_book_falls_back_to_the_ops_variant_and_remembers_it(
    faults: Faults, api: ServiceClient
) -> None:
    faults.set({"kind": "status", "status": 404, "path": TOP_OF_BOOK_DOC})
    first = await api.top_of_book(["BTC/USD"])
    assert set(first) == {"BTC/USD"} and first["BTC/USD"].bid > 0
    assert faults.paths("GET", TOP_OF_BOOK_DOC, TOP_OF_BOOK_OPS) == [
        TOP_OF_BOOK_DOC,
        TOP_OF_BOOK_OPS,
    ]
    second = await api.top_of_book(["BTC/USD", "ETH/USD"])
    assert set(second) == {"BTC/USD", "ETH/USD"}
    assert faults.paths("GET", TOP_OF_BOOK_DOC, TOP_OF_BOOK_OPS) == [
        TOP_OF_BOOK_DOC,
        TOP_OF_BOOK_OPS,
        TOP_OF_BOOK_OPS,
    ]


async def test_order_query_falls_back_to_the_ops_variant_and_remembers_it(
    faults: Faults, api: ServiceClient
) -> None:
    placed = await api.limit_order("BTC", "USD", Decimal("0.001"))
    faults.set({"kind": "status", "status": 404, "path": ORDERS_DOC})
    listed = await api.orders()
    assert [o.order_id for o in listed] == [placed.order_id]
    assert faults.paths("GET", ORDERS_DOC, ORDERS_OPS) == [ORDERS_DOC, ORDERS_OPS]
    assert [o.order_id for o in await api.orders(order_type="limit")] == [placed.order_id]
    assert faults.paths("GET", ORDERS_DOC, ORDERS_OPS) == [ORDERS_DOC, ORDERS_OPS, ORDERS_OPS]


# -- orders are never retried -----------------------------------------------------------------


@pytest.mark.slow
async def test_an_order_is_never_retried_and_a_lost_refusal_is_reported(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    faults.set({"kind": "status", "status": 503, "count": 1, "method": "POST", "path": LIMIT_PATH})
    coid = new_client_order_id()
    with pytest.raises(OutcomeUnknown) as caught:
        await api.limit_order("BTC", "USD", Decimal("0.01"), client_order_id=coid)
    assert "unknown whether it executed" in str(caught.value)
    assert caught.value.client_order_id == coid
    assert len(faults.requests("POST", LIMIT_PATH)) == 1
    assert server_orders(client, clientOrderId=coid) == []
    assert server_orders(client) == []
    balances = (await api.account()).balances
    assert balances["BTC"].free == Decimal("2") and balances["USD"].free == Decimal("100000")


async def settled(api: ServiceClient, request: OrderRequest) -> Order:
    """Place ``request``; after a lost answer (OutcomeUnknown: the client stops there), the
    order as the settling service finds it at once."""
    sent_at = api.clock.server_now()
    try:
        return await api.place_order(request)
    except OutcomeUnknown:
        verdict = await OrderSettler(api).now(Sought.order(request, sent_at))
        if verdict.order is None:
            raise
        return verdict.order


async def test_a_market_order_whose_answer_is_lost_is_found_by_lookup(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    faults.set({"kind": "drop_after_commit", "count": 1, "method": "POST", "path": MARKET_PATH})
    coid = new_client_order_id()
    request = OrderRequest("market", "USD", "BTC", Decimal("250"), coid)
    sent_at = api.clock.server_now()
    with pytest.raises(OutcomeUnknown) as caught:  # the client does not look it up
        await api.place_order(request)
    assert caught.value.client_order_id == coid
    assert faults.requests("GET", ORDERS_DOC) == []
    verdict = await OrderSettler(api).now(Sought.order(request, sent_at))
    order = verdict.order
    assert verdict.final and order is not None
    assert order.filled and order.type == "market" and order.client_order_id == coid
    assert len(faults.requests("POST", MARKET_PATH)) == 1
    assert len(faults.hits("drop_after_commit")) == 1
    assert [o["orderId"] for o in server_orders(client)] == [order.order_id]


@pytest.mark.slow
async def test_the_command_line_settles_a_lost_answer_and_reports_an_unfound_one(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    """``tradeterm api market``: a lost answer is looked up (found: printed as if answered);
    an order the server never saw is reported unknown (exit 3), never "not placed"."""
    args = argparse.Namespace(
        source="USD", destination="BTC", size=Decimal("250"), client_order_id=None
    )
    faults.set({"kind": "drop_after_commit", "count": 1, "method": "POST", "path": MARKET_PATH})
    output = await commands.market(api, args)
    placed = output.data["order"]
    assert placed["result"]["status"] == "filled"
    assert [o["orderId"] for o in server_orders(client)] == [placed["orderId"]]
    faults.set({"kind": "drop", "count": 1, "method": "POST", "path": MARKET_PATH})
    with pytest.raises(OutcomeUnknown, match="unknown whether it executed") as caught:
        await commands.market(api, args)
    assert caught.value.client_order_id.startswith("tt-")
    assert len(server_orders(client)) == 1


async def test_no_duplicate_orders_when_answers_drop_after_commit(
    sandbox: SandboxProcess, faults: Faults, anyio_backend: str
) -> None:
    session = new_client(sandbox, {"BTC": "1", "USD": "0"})
    service = await connect(sandbox, session)
    try:
        faults.set(
            {"kind": "drop_after_commit", "rate": 0.2, "method": "POST", "path": LIMIT_PATH},
            seed=20240501,
        )
        results: dict[int, Order] = {}
        failures: list[BaseException] = []
        limiter = anyio.CapacityLimiter(10)

        async def submit(index: int) -> None:
            async with limiter:
                try:
                    request = OrderRequest(
                        "limit", "BTC", "USD", Decimal("0.001"), new_client_order_id()
                    )
                    results[index] = await settled(service, request)
                except ServiceError as exc:
                    failures.append(exc)

        async with anyio.create_task_group() as group:
            for index in range(200):
                group.start_soon(submit, index)

        drops = len(faults.hits("drop_after_commit"))
        assert failures == []
        assert len(results) == 200 and all(o.filled for o in results.values())
        returned = {o.client_order_id for o in results.values()}
        assert len(returned) == 200 and "" not in returned
        assert len(faults.requests("POST", LIMIT_PATH)) == 200  # one POST per order, no resend

        stored = server_orders(session)
        assert len(stored) == 200
        stored_ids = [o["clientOrderId"] for o in stored]
        assert len(set(stored_ids)) == 200 and set(stored_ids) == returned
        assert {o["orderId"] for o in stored} == {o.order_id for o in results.values()}
        assert drops > 10, drops

        faults.clear()
        balances = (await service.account()).balances
        assert balances["BTC"].free == Decimal("0.8")  # exactly 200 x 0.001 sold
        assert invariant(sandbox, session.account)["holds"]
    finally:
        await service.aclose()
        session.close()


# -- quotes -----------------------------------------------------------------------------------


async def test_accept_whose_answer_is_lost_returns_the_filled_order(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    quote = await api.request_quote("BTC/USD", Amount(Decimal("0.01"), "BTC"))
    faults.set({"kind": "drop_after_commit", "count": 1, "method": "POST", "path": ACCEPT_PATH})
    sent_at = api.clock.server_now()
    with pytest.raises(OutcomeUnknown):  # the client does not look it up
        await api.accept_quote(quote.order_id, "sell")
    sought = Sought.accept(quote.order_id, "tt-accept-1", sent_at)
    verdict = await OrderSettler(api).now(sought)
    order = verdict.order
    assert verdict.final and order is not None
    assert order.order_id == quote.order_id and order.type == "rfq" and order.filled
    assert order.result.total == quote.sell.destination
    assert len(faults.requests("POST", ACCEPT_PATH)) == 1
    assert len(faults.hits("drop_after_commit")) == 1
    assert (await api.account()).balances["BTC"].free == Decimal("1.99")


async def test_accept_dropped_before_commit_is_unknown_and_can_be_accepted_again(
    faults: Faults, api: ServiceClient, client: Session
) -> None:
    quote = await api.request_quote("BTC/USD", Amount(Decimal("0.01"), "BTC"))
    faults.set({"kind": "drop", "count": 1, "method": "POST", "path": ACCEPT_PATH})
    with pytest.raises(OutcomeUnknown) as caught:
        await api.accept_quote(quote.order_id, "sell")
    assert "unknown whether the quote was taken" in str(caught.value)
    assert caught.value.client_order_id == quote.order_id
    sought = Sought.accept(quote.order_id, "tt-accept-2", api.clock.server_now())
    assert await OrderSettler(api).look_up(sought) == Absent()
    assert len(faults.requests("POST", ACCEPT_PATH)) == 1
    assert server_orders(client) == []

    order = await api.accept_quote(quote.order_id, "sell")
    assert order.order_id == quote.order_id and order.filled
    assert [o["orderId"] for o in server_orders(client)] == [quote.order_id]


# -- answers that are not the service's JSON --------------------------------------------------


class _Canned(BaseHTTPRequestHandler):
    """A stand-in for a proxy or a captive portal: fixed answers per path."""

    answers: ClassVar[dict[str, tuple[int, str, bytes]]] = {}

    def _answer(self) -> None:
        path = self.path.split("?")[0]
        status, media, payload = self.answers.get(path, (404, "text/plain", b"no route"))
        self.send_response(status)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        self._answer()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def canned() -> Iterator[str]:
    """A real HTTP server on loopback that answers like a misbehaving proxy."""
    _Canned.answers = {
        "/api/v1/identity/jwt": (200, "application/json", b'{"status": "ok"}'),
        "/api/v1/routing/info": (
            200,
            "text/html",
            b"<html><head><title>Sign in to the hotel Wi-Fi</title></head>"
            b"<body><form>...</form></body></html>",
        ),
        "/api/v1/accounting/info": (200, "application/json", b'{"info": {"build": 7}}'),
        "/api/v1/routing/time": (200, "application/json", b'{"time": "yesterday"'),
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


async def test_answers_that_are_not_the_services_json_are_bad_responses(
    canned: str, anyio_backend: str
) -> None:
    async with ServiceClient(ClientSettings(canned), retry=ONE_TRY) as service:
        with pytest.raises(BadResponse) as html:
            await service.info()
        message = str(html.value)
        assert "not JSON" in message and "Sign in to the hotel Wi-Fi" in message
        assert len(message) < 250

        with pytest.raises(BadResponse) as shape:
            await service.info("accounting")
        assert "info.build" in str(shape.value)

        with pytest.raises(BadResponse):
            await service.service_time()  # truncated JSON

        with pytest.raises(BadResponse) as login:
            await service.login("someone", "secret", "acct")
        assert "token" in str(login.value)
        assert service.logins == 0


async def test_clock_follows_the_server_after_faults(faults: Faults, api: ServiceClient) -> None:
    """A slow answer does not spoil the clock estimate: the fastest sample is kept."""
    await api.service_time()
    offset = api.clock.offset
    assert abs(offset) < timedelta(seconds=1)
    latency = 0.3
    faults.set({"kind": "latency", "seconds": latency, "path": r"^/api/v1/routing/time$"})
    await api.service_time()
    # The slow sample did not move the estimate: taken, it would shift the offset by about
    # half its round trip (~150 ms). The offset is read afresh from the wall and monotonic
    # clocks each time, and on a busy machine those reads drift by a few milliseconds (4.7 ms
    # seen), so the bound is a tenth of the latency, not an exact equality.
    assert abs(api.clock.offset - offset) < timedelta(seconds=latency / 10)
    assert abs(api.clock.server_now() - datetime.now(UTC)) < timedelta(seconds=1)
