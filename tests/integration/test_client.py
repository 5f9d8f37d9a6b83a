"""The service client against a real sandbox over loopback: every operation, typed errors, login,
token renewal, the shared re-login after a 401, and the server clock.

Fault injection (5xx, drops, Retry-After, path variants) lives in ``test_client_faults.py``.
Token renewal and the credit-hours refusal run against the sandbox's app in this process
(``AppSandbox``, httpx's ASGI transport): a short token lifetime and a closed credit window
without a child process each.
"""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import anyio
import httpx
import pytest

from app.api import (
    ClientSettings,
    Credentials,
    CreditNotAvailable,
    Forbidden,
    InsufficientFunds,
    InvalidRequest,
    NetworkError,
    NotFound,
    RateLimited,
    Refused,
    RequestTimeout,
    RetryPolicy,
    ServerClock,
    ServiceClient,
    Unauthorized,
    new_client_order_id,
    password_digest,
)
from app.domain import Amount
from app.domain.records import (
    BlockchainInstruction,
    FiatInstruction,
    LedgerEntry,
    Order,
)
from app.sandbox.config import CreditHours
from tests.harness import AppSandbox, SandboxProcess, Session, invariant, new_client
from tests.helpers.client import connect

Factory = Callable[..., SandboxProcess]

pytestmark = pytest.mark.anyio


@pytest.fixture
async def api(
    sandbox: SandboxProcess, client: Session, anyio_backend: str
) -> AsyncIterator[ServiceClient]:
    """A ServiceClient logged in as the fresh funded ``client`` (USD 100000, BTC 2)."""
    service = await connect(sandbox, client)
    yield service
    await service.aclose()


class Recording(httpx.AsyncBaseTransport):
    """A real transport (httpx's own over loopback unless given one), noting each answer's
    method, path and status."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx.AsyncHTTPTransport()
        self.seen: list[tuple[str, str, int]] = []

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.seen.append((request.method, request.url.path, response.status_code))
        return response

    def statuses(self, method: str, suffix: str) -> list[int]:
        return [status for m, path, status in self.seen if m == method and path.endswith(suffix)]


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- login and credentials --------------------------------------------------------------------


async def test_login_sends_lowercase_sha256_hex_and_never_shows_it(
    sandbox: SandboxProcess, client: Session
) -> None:
    expected = hashlib.sha256(client.password.encode()).hexdigest()
    assert password_digest(client.password) == expected
    assert len(expected) == 64 and expected == expected.lower()

    credentials = Credentials.from_plain(client.user, client.password, client.account)
    assert credentials.digest == expected
    assert expected not in repr(credentials) and "digest=***" in repr(credentials)
    secret = Credentials.from_plain("alice", "plain-secret", "acct-alice")
    assert "plain-secret" not in repr(secret) and secret.digest not in repr(secret)
    assert secret.digest not in str(secret) and "alice" in repr(secret)

    # The sandbox refuses a plain or upper-case password, so a working login proves the hashing.
    async with httpx.AsyncClient(base_url=sandbox.url) as raw:
        for wrong in (client.password, expected.upper()):
            refused = await raw.post(
                "/api/v1/identity/jwt", json={"user": client.user, "password": wrong}
            )
            assert refused.status_code in (400, 401), refused.text

    before = sandbox.logins(client.user)
    async with ServiceClient(ClientSettings(sandbox.url)) as service:
        await service.login_with(credentials)
        assert service.logins == 1
        assert service.account_id == client.account
        seconds_left = service.token_seconds_left
        assert seconds_left is not None and seconds_left > 3600  # the default 24 h token
        assert (await service.account()).account_id == client.account
    assert sandbox.logins(client.user) == before + 1


async def test_wrong_password_is_unauthorized(sandbox: SandboxProcess, client: Session) -> None:
    async with ServiceClient(ClientSettings(sandbox.url)) as service:
        with pytest.raises(Unauthorized) as caught:
            await service.login(client.user, "not-the-password", client.account)
        assert caught.value.status == 401
        assert caught.value.messages == ["Invalid user or password"]
        assert service.logins == 0


async def test_calls_before_login_are_unauthorized(sandbox: SandboxProcess) -> None:
    async with ServiceClient(ClientSettings(sandbox.url)) as service:
        with pytest.raises(Unauthorized):
            await service.account()


async def test_repeated_failed_logins_are_rate_limited(
    sandbox: SandboxProcess, client: Session
) -> None:
    async with ServiceClient(ClientSettings(sandbox.url)) as service:
        for _ in range(5):
            with pytest.raises(Unauthorized):
                await service.login(client.user, "wrong", client.account)
        with pytest.raises(RateLimited) as caught:
            await service.login(client.user, client.password, client.account)
    assert caught.value.status == 429
    assert caught.value.retry_after is not None and caught.value.retry_after >= 1
    assert caught.value.messages[0].startswith("Too many failed logins")


async def test_unreachable_service_is_a_network_error(client: Session) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    retry = RetryPolicy(attempts=2, base=0.01)
    async with ServiceClient(ClientSettings(url, connect_timeout=2), retry=retry) as service:
        with pytest.raises(NetworkError) as caught:
            await service.info()
        assert not isinstance(caught.value, RequestTimeout)
        assert "cannot reach" in str(caught.value) and url in str(caught.value)
        with pytest.raises(NetworkError):
            await service.login(client.user, client.password, client.account)
        with pytest.raises(NetworkError):
            await service.service_time()


# -- token lifetime ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_token_is_renewed_before_it_expires() -> None:
    """In this process (httpx's ASGI transport), so calls take milliseconds and a 2 s token
    leaves the client room to renew it ahead of expiry."""
    async with AppSandbox(token_ttl=2.0) as short:
        session = await short.new_client()
        recording = Recording(short.transport())
        service = ServiceClient(ClientSettings(short.url), transport=recording)
        try:
            await service.login(session.user, session.password, session.account)
            first_left = service.token_seconds_left
            assert first_left is not None and first_left <= 2.0
            started = time.monotonic()
            calls = 0
            # Bounded polling: keep calling until the first token would have expired; every
            # call must succeed, and the client must have logged in again on its own.
            while time.monotonic() - started < first_left + 0.2 or service.logins < 2:
                assert time.monotonic() - started < 10.0, "the token was never renewed"
                account = await service.account()
                assert account.account_id == session.account
                calls += 1
                await anyio.sleep(0.05)
            assert service.logins >= 2
            assert calls >= 10
            async with short.admin() as admin:
                logins = (await admin.get("/api/v1/sandbox/admin/stats")).json()["logins"]
            assert logins[session.user] == service.logins + 1  # + the harness login
            # Renewed ahead of expiry: the server never had to refuse a token.
            assert 401 not in {status for _, _, status in recording.seen}
            assert recording.statuses("POST", "/jwt") == [200] * service.logins
        finally:
            await service.aclose()


async def test_revoked_token_triggers_one_shared_relogin(
    sandbox: SandboxProcess, client: Session
) -> None:
    recording = Recording()
    service = ServiceClient(ClientSettings(sandbox.url), transport=recording)
    try:
        await service.login(client.user, client.password, client.account)
        await service.account()  # the connection and the token work
        before = sandbox.logins(client.user)
        with sandbox.admin() as admin:
            revoked = admin.post(f"/api/v1/sandbox/admin/users/{client.user}/revoke")
            assert revoked.status_code == 200, revoked.text
        # The old token is now refused by the server.
        stale = client.get("/api/v1/accounting/account/{account}")
        assert stale.status_code == 401

        results: list[str] = []

        async def one() -> None:
            results.append((await service.account()).account_id)

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(one)

        assert results == [client.account] * 20
        assert sandbox.logins(client.user) == before + 1
        assert service.logins == 2
        account_path = f"/account/{client.account}"
        answers = recording.statuses("GET", account_path)
        refused = answers.count(401)
        assert refused >= 1 and answers.count(200) == 1 + 20  # each refused call retried once
        assert len(answers) == 1 + 20 + refused
        assert recording.statuses("POST", "/jwt") == [200, 200]
    finally:
        await service.aclose()


# -- service information and clock ------------------------------------------------------------


async def test_info_and_service_time(api: ServiceClient) -> None:
    info = await api.info()
    assert info.service == "routing"
    assert info.version and info.application
    assert info.launched_at is not None and info.launched_at.tzinfo is not None
    accounting = await api.info("accounting")
    assert accounting.service == "accounting"

    server = await api.service_time()
    assert server.tzinfo is not None
    assert abs(server - datetime.now(UTC)) < timedelta(seconds=2)
    assert abs(api.clock.offset) < timedelta(seconds=1)
    assert api.clock.round_trip is not None and api.clock.round_trip > 0
    assert abs(api.clock.server_now() - datetime.now(UTC)) < timedelta(seconds=1)


async def test_clock_offset_measures_a_skewed_local_clock(sandbox: SandboxProcess) -> None:
    def ahead() -> datetime:
        return datetime.now(UTC) + timedelta(seconds=30)

    clock = ServerClock(now=ahead)
    async with ServiceClient(ClientSettings(sandbox.url), clock=clock) as service:
        await service.service_time()
    assert abs(clock.offset - timedelta(seconds=-30)) < timedelta(seconds=1)
    assert clock.round_trip is not None and 0 < clock.round_trip < 1
    # The corrected clock reads the real time again.
    assert abs(clock.server_now() - datetime.now(UTC)) < timedelta(seconds=1)


# -- accounting -------------------------------------------------------------------------------


async def test_account_and_portfolio(api: ServiceClient, client: Session) -> None:
    account = await api.account()
    assert account.account_id == client.account
    assert account.type == "client"
    usd, btc = account.balances["USD"], account.balances["BTC"]
    assert usd.free == Decimal("100000") and isinstance(usd.free, Decimal)
    assert btc.free == Decimal("2") and btc.locked == Decimal(0)
    assert usd.limit == Decimal(0) and usd.available == Decimal("100000")

    portfolio = await api.portfolio()
    assert portfolio.account_id == client.account
    funds = portfolio.balances["BTC"]
    assert funds.available_funds == Decimal("2") and isinstance(funds.available_funds, Decimal)
    assert funds.total_funds == Decimal("2")
    assert funds.total_credit == Decimal(0) and funds.used_credit == Decimal(0)
    assert funds.available_to_trade == Decimal("2")


async def test_ledger_with_every_filter(api: ServiceClient, client: Session) -> None:
    before_trade = datetime.now(UTC) - timedelta(seconds=1)
    order = await api.limit_order("BTC", "USD", Decimal("0.01"))
    assert order.filled and order.result.total is not None

    entries = await api.ledger(10)
    assert entries and all(isinstance(e, LedgerEntry) for e in entries)
    assert all(isinstance(e.amount, Decimal) for e in entries)
    orderings = [e.ordering for e in entries]
    assert orderings == sorted(orderings, reverse=True)  # newest first by default
    initial = {e.asset: e.amount for e in entries if e.event_type == "initialBalances"}
    assert initial == {"USD": Decimal("100000"), "BTC": Decimal("2")}

    trades = await api.ledger(10, event_type="trade")
    assert {(e.asset, e.sub_event_type) for e in trades} == {
        ("BTC", "source"),
        ("USD", "destination"),
    }
    legs = {e.asset: e.amount for e in trades}
    assert legs == {"BTC": Decimal("-0.01"), "USD": order.result.total.value}
    assert len({e.ordering for e in trades}) == 1  # both legs share one ordering
    trade_ordering = trades[0].ordering

    btc = await api.ledger(10, asset="BTC")
    assert {e.asset for e in btc} == {"BTC"} and len(btc) == 2

    by_transaction = await api.ledger(10, transaction_id=trades[0].transaction_id)
    assert {e.transaction_id for e in by_transaction} == {trades[0].transaction_id}
    assert len(by_transaction) == 2

    oldest_first = await api.ledger(10, ascending=True)
    assert [e.ordering for e in oldest_first] == sorted(e.ordering for e in oldest_first)
    assert oldest_first[0].event_type == "initialBalances"

    up_to_initial = await api.ledger(10, start_at_ordering=trade_ordering - 1)
    assert up_to_initial and all(e.ordering < trade_ordering for e in up_to_initial)
    from_trade = await api.ledger(10, start_at_ordering=trade_ordering, ascending=True)
    assert {e.ordering for e in from_trade} == {trade_ordering}

    one = await api.ledger(1)
    assert {e.ordering for e in one} == {trade_ordering}  # max counts a trade's legs once

    in_future = await api.ledger(10, start=datetime.now(UTC) + timedelta(hours=1))
    assert in_future == []
    window = await api.ledger(10, start=before_trade, end=datetime.now(UTC) + timedelta(hours=1))
    assert {e.ordering for e in window} >= {trade_ordering}
    before_everything = await api.ledger(10, end=before_trade - timedelta(hours=1))
    assert before_everything == []

    with pytest.raises(InvalidRequest) as caught:
        await api.ledger(0)
    assert caught.value.status == 400 and caught.value.messages


async def test_deposits_newest_first_or_ascending(api: ServiceClient, client: Session) -> None:
    assert await api.deposits() == []
    for amount in ("0.5 BTC", "1000 USD"):
        made = client.post("/api/v1/sandbox/account/{account}/deposit", {"amount": amount})
        assert made.status_code == 200, made.text

    newest = await api.deposits()
    assert [(d.asset, d.amount) for d in newest] == [
        ("USD", Decimal("1000")),
        ("BTC", Decimal("0.5")),
    ]
    btc = newest[1]
    assert btc.status == "completed" and btc.network == "bitcoin" and len(btc.hash) == 64
    assert btc.account_id == client.account
    assert btc.created is not None and btc.created.user.id == client.user
    assert btc.completed is not None and btc.completed.at >= btc.created.at

    assert [d.asset for d in await api.deposits(ascending=True)] == ["BTC", "USD"]
    assert [d.asset for d in await api.deposits(1)] == ["USD"]
    assert [d.asset for d in await api.deposits(1, ascending=True)] == ["BTC"]
    with pytest.raises(InvalidRequest):
        await api.deposits(0)


async def test_instructions_and_withdrawals(
    sandbox: SandboxProcess, api: ServiceClient, client: Session
) -> None:
    deposit = await api.deposit_instructions()
    chains = {(i.asset, i.network_type) for i in deposit if isinstance(i, BlockchainInstruction)}
    assert ("USDT", "tron") in chains and ("USDT", "ethereum") in chains
    fiat = [i for i in deposit if isinstance(i, FiatInstruction)]
    assert len(fiat) == 1 and fiat[0].asset == "USD"
    assert fiat[0].get("method") == "wire" and client.account in fiat[0].get("specialInstructions")

    whitelist = await api.withdraw_instructions()
    assert all(isinstance(i, BlockchainInstruction) for i in whitelist)
    btc = next(i for i in whitelist if isinstance(i, BlockchainInstruction) and i.asset == "BTC")

    sent = await api.withdraw_blockchain(
        Amount(Decimal("0.25"), "BTC"), btc.network_type, btc.address
    )
    assert sent.asset == "BTC" and sent.amount == Decimal("0.25") and sent.kind == "blockchain"
    assert sent.address == btc.address and sent.status == "completed"

    wired = await api.withdraw_fiat(Amount(Decimal("1500.5"), "USD"))
    assert wired.kind == "fiat" and wired.method == "wire" and wired.amount == Decimal("1500.5")

    listed = await api.withdrawals()
    assert [w.transaction_id for w in listed] == [wired.transaction_id, sent.transaction_id]
    assert [w.transaction_id for w in await api.withdrawals(1, ascending=True)] == [
        sent.transaction_id
    ]

    account = await api.account()
    assert account.balances["BTC"].free == Decimal("1.75")
    assert account.balances["USD"].free == Decimal("98499.5")

    with pytest.raises(InvalidRequest) as caught:
        await api.withdraw_blockchain(Amount(Decimal("0.1"), "BTC"), "bitcoin", "bc1-not-ours")
    assert "whitelisted" in caught.value.message
    with pytest.raises(InsufficientFunds) as short:
        await api.withdraw_fiat(Amount(Decimal("1000000"), "USD"))
    assert short.value.status == 424
    assert short.value.message.startswith("Insufficient Funds")
    assert invariant(sandbox, client.account)["holds"]


# -- market data ------------------------------------------------------------------------------


async def test_market_data(api: ServiceClient) -> None:
    books = await api.top_of_book(["BTC/USD", "ETH/USD"])
    assert set(books) == {"BTC/USD", "ETH/USD"}
    btc = books["BTC/USD"]
    assert str(btc.pair) == "BTC/USD"
    assert isinstance(btc.bid, Decimal) and isinstance(btc.ask, Decimal)
    assert Decimal(0) < btc.bid < btc.ask and btc.bid_size > 0 and btc.ask_size > 0
    assert btc.spread == btc.ask - btc.bid

    everything = await api.top_of_book()
    assert {"BTC/USD", "ETH/USD"} <= set(everything) and len(everything) > 2

    book = await api.order_book("BTC/USD", levels=3)
    assert str(book.pair) == "BTC/USD"
    assert len(book.bids) == 3 and len(book.asks) == 3
    bid_prices = [price for price, _ in book.bids]
    ask_prices = [price for price, _ in book.asks]
    assert bid_prices == sorted(bid_prices, reverse=True)
    assert ask_prices == sorted(ask_prices)
    assert bid_prices[0] < ask_prices[0]

    pairs = await api.pairs()
    names = {str(p.pair) for p in pairs}
    assert set(everything) == names
    btc_usd = next(p for p in pairs if str(p.pair) == "BTC/USD")
    assert btc_usd.price_increment is not None and btc_usd.price_increment > 0
    assert btc_usd.base_decimals is not None and btc_usd.base_decimals >= 8

    estimate = await api.estimate("BTC", "USD", Decimal("0.01"), "USD")
    assert estimate.source == Amount(Decimal("0.01"), "BTC")
    assert estimate.destination.asset == "USD"
    assert (estimate.price.base, estimate.price.quote) == ("BTC", "USD")
    # Destination for 0.01 BTC is about 0.01 of the BTC/USD price (design.md §2).
    assert abs(estimate.destination.value - estimate.price.value / 100) < Decimal("1")
    inverse = await api.estimate("BTC", "USD", Decimal("0.01"), "BTC")
    assert (inverse.price.base, inverse.price.quote) == ("USD", "BTC")

    with pytest.raises(InvalidRequest) as caught:
        await api.top_of_book(["NOPE/USD"])
    assert "NOPE/USD" in caught.value.message
    with pytest.raises(InvalidRequest):
        await api.estimate("BTC", "XXX", Decimal("1"), "BTC")


# -- orders and quotes ------------------------------------------------------------------------


async def test_limit_and_market_orders_and_order_queries(
    sandbox: SandboxProcess, api: ServiceClient, client: Session
) -> None:
    started = datetime.now(UTC) - timedelta(seconds=2)
    coid = new_client_order_id()
    sold = await api.limit_order("BTC", "USD", Decimal("0.01"), client_order_id=coid)
    assert isinstance(sold, Order) and sold.filled and sold.type == "limit"
    assert sold.client_order_id == coid and sold.account_id == client.account
    assert sold.size == Amount(Decimal("0.01"), "BTC")
    assert sold.source == "BTC" and sold.destination == "USD"
    price, total = sold.result.price, sold.result.total
    assert price is not None and total is not None
    assert (price.base, price.quote) == ("BTC", "USD") and total.asset == "USD"
    assert isinstance(price.value, Decimal)
    # total = size * price within rounding to cents.
    assert abs(total.value - Decimal("0.01") * price.value) <= Decimal("0.01")
    assert sold.result.executed_at is not None

    # The same clientOrderId again is the same order, not a second one.
    again = await api.limit_order("BTC", "USD", Decimal("0.01"), client_order_id=coid)
    assert again.order_id == sold.order_id

    bought = await api.market_order("USD", "BTC", Decimal("100"))
    assert bought.filled and bought.type == "market"
    assert bought.source == "USD" and bought.destination == "BTC"

    with pytest.raises(InvalidRequest):
        await api.limit_order(
            "BTC",
            "USD",
            Decimal("0.01"),
            limit=Decimal("10000000"),
            end_at=datetime.now(UTC) - timedelta(hours=1),
        )
    resting = await api.limit_order(
        "BTC",
        "USD",
        Decimal("0.02"),
        limit=Decimal("10000000"),
        end_at=datetime.now(UTC) + timedelta(hours=1),
    )
    assert resting.result.status == "submitted" and not resting.filled
    assert resting.limit is not None and resting.limit.value == Decimal("10000000")
    assert resting.end_at is not None

    everything = await api.orders()
    assert [o.order_id for o in everything] == [resting.order_id, bought.order_id, sold.order_id]
    assert all(o.ordering is not None for o in everything)
    assert [o.order_id for o in await api.orders(ascending=True)] == [
        sold.order_id,
        bought.order_id,
        resting.order_id,
    ]
    assert [o.order_id for o in await api.orders(1)] == [resting.order_id]
    assert [o.order_id for o in await api.orders(source="USD")] == [bought.order_id]
    assert [o.order_id for o in await api.orders(destination="USD")] == [
        resting.order_id,
        sold.order_id,
    ]
    assert [o.order_id for o in await api.orders(order_type="market")] == [bought.order_id]
    assert [o.order_id for o in await api.orders(status="submitted")] == [resting.order_id]
    assert [o.order_id for o in await api.orders(client_order_id=coid)] == [sold.order_id]
    middle = next(o for o in everything if o.order_id == bought.order_id)
    assert middle.ordering is not None
    assert [o.order_id for o in await api.orders(start_at_ordering=middle.ordering)] == [
        bought.order_id,
        sold.order_id,
    ]
    assert len(await api.orders(submitted_start=started)) == 3
    assert await api.orders(submitted_end=started) == []

    fetched = await api.order(sold.order_id)
    assert fetched.order_id == sold.order_id and fetched.client_order_id == coid
    assert fetched.email and fetched.user_id == client.user
    assert fetched.result.total == sold.result.total
    assert invariant(sandbox, client.account)["holds"]


async def test_request_and_accept_quote(api: ServiceClient, client: Session) -> None:
    coid = new_client_order_id()
    quote = await api.request_quote("BTC/USD", Amount(Decimal("0.01"), "BTC"), client_order_id=coid)
    assert quote.client_order_id == coid
    now = datetime.now(UTC)
    for side in (quote.buy, quote.sell):
        assert side.expires_at > now - timedelta(seconds=1)
        assert (side.price.base, side.price.quote) == ("BTC", "USD")
    assert quote.buy.source.asset == "USD" and quote.buy.destination.asset == "BTC"
    assert quote.sell.source == Amount(Decimal("0.01"), "BTC")
    assert quote.buy.price.value > quote.sell.price.value

    order = await api.accept_quote(quote.order_id, "sell")
    assert order.order_id == quote.order_id and order.type == "rfq" and order.filled
    assert order.result.total == quote.sell.destination
    account = await api.account()
    assert account.balances["BTC"].free == Decimal("1.99")
    assert account.balances["USD"].free == Decimal("100000") + quote.sell.destination.value

    with pytest.raises(Refused) as twice:
        await api.accept_quote(quote.order_id, "buy")
    assert twice.value.status == 409 and "already accepted" in twice.value.message
    with pytest.raises(NotFound) as missing:
        await api.accept_quote("no-such-quote", "sell")
    assert missing.value.status == 404
    with pytest.raises(InvalidRequest):
        await api.request_quote("BTC/USD", Amount(Decimal("0.01"), "ETH"))


# -- typed errors -----------------------------------------------------------------------------


async def test_refusals_are_typed_with_the_servers_words(
    api: ServiceClient, client: Session
) -> None:
    with pytest.raises(InvalidRequest) as invalid:
        await api.limit_order("BTC", "USD", Decimal("0"))
    assert invalid.value.status == 400 and invalid.value.messages
    assert invalid.value.body["status"] == "failedDependency"

    with pytest.raises(NotFound) as missing:
        await api.order("no-such-order")
    assert missing.value.status == 404 and not isinstance(missing.value, Forbidden)
    assert missing.value.messages == ["Order no-such-order not found"]

    with pytest.raises(InsufficientFunds) as short:
        await api.limit_order("BTC", "USD", Decimal("10"))
    assert short.value.status == 424
    assert short.value.messages == [
        "Insufficient Funds: Requested 10 BTC but only 2 BTC is available"
    ]
    assert not isinstance(short.value, CreditNotAvailable)


async def test_another_accounts_data_is_forbidden(sandbox: SandboxProcess, client: Session) -> None:
    other = new_client(sandbox)
    try:
        async with ServiceClient(ClientSettings(sandbox.url)) as service:
            await service.login(client.user, client.password, other.account)
            with pytest.raises(Forbidden) as caught:
                await service.account()
            assert caught.value.status == 403 and other.account in caught.value.message
            with pytest.raises(Forbidden):
                await service.top_of_book(["BTC/USD"])  # 403 is not a path-variant miss
            with pytest.raises(Forbidden):
                await service.limit_order("BTC", "USD", Decimal("0.01"))
    finally:
        other.close()


async def test_insufficient_funds_and_credit_not_available_are_told_apart() -> None:
    """In this process: a sandbox whose credit hours never open."""
    async with AppSandbox(credit_hours=CreditHours.parse("never")) as no_credit:
        session = await no_credit.new_client({"USD": "1000", "BTC": "1"}, {"USD": "-50000"})
        service = ServiceClient(ClientSettings(no_credit.url), transport=no_credit.transport())
        await service.login(session.user, session.password, session.account)
        try:
            with pytest.raises(CreditNotAvailable) as credit:
                await service.limit_order("USD", "BTC", Decimal("5000"))
            assert credit.value.status == 424
            assert not isinstance(credit.value, InsufficientFunds)
            assert credit.value.messages == [
                "Credit Not Available: credit is currently unavailable for this account; "
                "please contact your account executive"
            ]
            assert credit.value.message == credit.value.messages[0]  # verbatim

            with pytest.raises(InsufficientFunds) as funds:
                await service.limit_order("BTC", "USD", Decimal("5"))
            assert not isinstance(funds.value, CreditNotAvailable)
            assert (
                funds.value.message
                == "Insufficient Funds: Requested 5 BTC but only 1 BTC is available"
            )

            # Within its own funds the account still trades.
            order = await service.limit_order("USD", "BTC", Decimal("500"))
            assert order.filled
            account = await service.account()
            assert account.balances["USD"].free == Decimal("500")
            assert account.balances["USD"].limit == Decimal("-50000")
        finally:
            await service.aclose()
