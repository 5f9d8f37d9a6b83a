"""Funding services against the sandbox's app in this process (httpx's ASGI transport): deposit
queries, the transfer feed, instructions; a dropped connection over loopback to a real sandbox
process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from app.api import ClientSettings, RetryPolicy, ServiceClient
from app.domain import Amount
from app.domain.records import BlockchainInstruction, FiatInstruction
from app.services.transfers import (
    TransferError,
    TransferFeed,
    TransferPage,
    TransferQuery,
    fetch_instructions,
    fetch_transfers,
)
from tests.harness import AppAccount, AppSandbox, Faults, SandboxProcess, body, new_client, until

pytestmark = pytest.mark.anyio

TOP_UP = "/api/v1/sandbox/account/{account}/deposit"


async def top_up(account: AppAccount, amount: str, network: str | None = None, **extra: Any) -> int:
    """A paper deposit through the sandbox's top-up route; returns its ordering."""
    payload: dict[str, Any] = {"amount": amount, **extra}
    if network:
        payload["network"] = network
    response = await account.post(TOP_UP, payload)
    assert response.status_code == 200, response.text
    ordering: int = body(response)["deposit"]["ordering"]
    return ordering


class Answers(httpx.AsyncBaseTransport):
    """The in-process transport, noting each answer's path and query as it arrives."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.seen: list[tuple[str, dict[str, str]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.seen.append((request.url.path, dict(request.url.params)))
        return response


@pytest.fixture
async def funded(app_sandbox: AppSandbox) -> AppAccount:
    """A fresh account with three deposits: 0.1 BTC, then 2 ETH, then 500 USDT on tron."""
    account = await app_sandbox.new_client()
    await top_up(account, "0.1 BTC")
    await top_up(account, "2 ETH")
    await top_up(account, "500 USDT", "tron")
    return account


@pytest.fixture
def answers(app_sandbox: AppSandbox) -> Answers:
    return Answers(app_sandbox.transport())


@pytest.fixture
async def api(
    app_sandbox: AppSandbox, funded: AppAccount, answers: Answers
) -> AsyncIterator[ServiceClient]:
    client = ServiceClient(
        ClientSettings(app_sandbox.url), transport=answers, retry=RetryPolicy(attempts=1)
    )
    await client.login(funded.user, funded.password, funded.account)
    yield client
    await client.aclose()


async def test_newest_first_by_default_and_asc_asks_for_the_oldest(api: ServiceClient) -> None:
    newest = await fetch_transfers(api, TransferQuery(max_records=2))
    oldest = await fetch_transfers(api, TransferQuery(ascending=True, max_records=2))
    every = await fetch_transfers(api, TransferQuery())

    assert [r.asset for r in every.records] == ["USDT", "ETH", "BTC"]
    orderings = [r.ordering for r in every.records]
    assert orderings == sorted(orderings, reverse=True)
    # With a limit, the direction decides *which* records come back, not only their order.
    assert [r.asset for r in newest.records] == ["USDT", "ETH"]
    assert [r.asset for r in oldest.records] == ["BTC", "ETH"]
    usdt = every.records[0]
    assert usdt.amount == Decimal("500") and usdt.network == "tron" and usdt.status == "completed"
    assert len(usdt.hash) == 64 and usdt.completed is not None
    assert usdt.completed.user.name == "Sandbox Operations"


async def test_the_feed_asks_again_at_once_when_the_direction_changes(api: ServiceClient) -> None:
    feed = TransferFeed(api, TransferQuery(max_records=2), interval=60)
    pages: list[TransferPage] = []
    feed.pages.subscribe(pages.append)
    feed.start()
    try:
        await until(lambda: len(pages) == 1)
        feed.set_ascending(True)
        await until(lambda: len(pages) == 2, timeout=5)  # far sooner than the 60 s interval
    finally:
        await feed.stop()
    assert pages[1].query == TransferQuery(ascending=True, max_records=2)
    assert [r.asset for r in pages[0].records] == ["USDT", "ETH"]
    assert [r.asset for r in pages[1].records] == ["BTC", "ETH"]
    assert feed.latest is pages[1]


async def test_an_answer_to_a_query_no_longer_asked_is_never_published(
    app_sandbox: AppSandbox, api: ServiceClient, funded: AppAccount, answers: Answers
) -> None:
    path = f"/api/v1/accounting/account/{funded.account}/request/deposit"
    await app_sandbox.faults({"kind": "latency", "seconds": 0.3, "count": 1, "path": f"^{path}$"})
    asked: list[str] = []
    api.watch_requests(lambda sent: asked.append(sent.path))
    feed = TransferFeed(api, TransferQuery(), interval=60)
    pages: list[TransferPage] = []
    feed.pages.subscribe(pages.append)
    feed.start()
    try:
        await until(lambda: asked)  # the first (newest-first) query is out, held up by the server
        feed.set_ascending(True)
        await until(lambda: pages)
    finally:
        await feed.stop()
    # The poller waited for the slow newest-first answer, dropped it, then asked again at once.
    assert [query["asc"] for p, query in answers.seen if p == path] == ["false", "true"]
    assert [p.query.ascending for p in pages] == [True]
    assert [r.asset for r in pages[0].records] == ["BTC", "ETH", "USDT"]


async def test_a_pending_deposit_is_seen_completing(api: ServiceClient, funded: AppAccount) -> None:
    ordering = await top_up(funded, "1 SOL", pendingSeconds=0.3)
    feed = TransferFeed(api, interval=0.05)
    seen: dict[str, int] = {}

    def note(page: TransferPage) -> None:
        for record in page.records:
            if record.ordering == ordering:
                seen.setdefault(record.status, len(seen))
                if record.status == "completed":
                    assert record.completed is not None

    feed.pages.subscribe(note)
    feed.start()
    try:
        await until(lambda: "completed" in seen, timeout=10)
    finally:
        await feed.stop()
    assert seen == {"pending": 0, "completed": 1}


async def test_withdrawals_are_listed_with_their_address(api: ServiceClient) -> None:
    book = await fetch_instructions(api)
    btc = next(i for i in book.withdraw if i.asset == "BTC")
    assert isinstance(btc, BlockchainInstruction)
    await api.withdraw_blockchain(Amount(Decimal("0.01"), "BTC"), btc.network_type, btc.address)
    page = await fetch_transfers(api, TransferQuery(kind="withdrawal"))
    assert [(r.asset, r.amount, r.address) for r in page.records] == [
        ("BTC", Decimal("0.01"), btc.address)
    ]


async def test_both_instruction_lists_per_asset_and_network(api: ServiceClient) -> None:
    book = await fetch_instructions(api)
    assert book.deposit_error == book.withdraw_error == ""
    assert book.assets() == ["BTC", "ETH", "USDT", "SOL", "USD"]
    assert book.networks("deposit", "USDT") == ["ethereum", "tron"]
    assert book.networks("withdraw", "USDT") == ["tron"]
    (wire,) = book.for_asset("deposit", "USD")
    assert isinstance(wire, FiatInstruction)
    assert [name for name, _ in wire.fields][:3] == ["method", "bankName", "bankAddress"]
    assert book.for_asset("withdraw", "USD") == []


async def test_one_instruction_list_failing_leaves_the_other(
    app_sandbox: AppSandbox, api: ServiceClient, funded: AppAccount
) -> None:
    path = rf"^/api/v1/accounting/account/{funded.account}/request/withdraw-instructions$"
    await app_sandbox.faults({"kind": "status", "status": 503, "path": path})
    book = await fetch_instructions(api)
    assert len(book.deposit) == 6 and book.withdraw == ()
    assert book.withdraw_error.startswith("Cannot read withdraw instructions: HTTP 503")


@pytest.mark.slow
async def test_failures_are_one_line_messages_not_tracebacks(
    sandbox: SandboxProcess, faults: Faults
) -> None:
    """Over loopback: the server cuts the connection mid-answer."""
    user = new_client(sandbox)
    api = ServiceClient(ClientSettings(sandbox.url), retry=RetryPolicy(attempts=1))
    await api.login(user.user, user.password, user.account)
    account = rf"^/api/v1/accounting/account/{user.account}/request/"
    faults(
        {"kind": "drop", "path": account + "deposit$"},
        {"kind": "status", "status": 500, "path": account + "(deposit|withdraw)-instructions$"},
    )
    try:
        with pytest.raises(TransferError, match=r"^Cannot read deposits: ") as dropped:
            await fetch_transfers(api, TransferQuery())
        with pytest.raises(TransferError, match=r"^Cannot read deposit instructions: HTTP 500"):
            await fetch_instructions(api)
    finally:
        await api.aclose()
        user.close()
    assert "\n" not in str(dropped.value)


def test_a_query_asks_for_between_1_and_1000_records() -> None:
    TransferQuery(max_records=1)
    TransferQuery(max_records=1000)
    for wrong in (0, 1001):
        with pytest.raises(ValueError, match="between 1 and 1000"):
            TransferQuery(max_records=wrong)
