"""Funding services against a real sandbox: deposit queries, the transfer feed, instructions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

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
from tests.harness import SandboxProcess, Session, body, new_client, until

pytestmark = pytest.mark.anyio

TOP_UP = "/api/v1/sandbox/account/{account}/deposit"
FAULTS = "/api/v1/sandbox/admin/faults"


def top_up(session: Session, amount: str, network: str | None = None, **extra: Any) -> int:
    """A paper deposit through the sandbox's top-up route; returns its ordering."""
    payload: dict[str, Any] = {"amount": amount, **extra}
    if network:
        payload["network"] = network
    response = session.post(TOP_UP, payload)
    assert response.status_code == 200, response.text
    ordering: int = body(response)["deposit"]["ordering"]
    return ordering


def set_faults(sandbox: SandboxProcess, *rules: dict[str, Any]) -> None:
    with sandbox.admin() as admin:
        response = admin.post(FAULTS, json={"faults": list(rules), "seed": 0})
        assert response.status_code == 200, response.text


@pytest.fixture
def clean_faults(sandbox: SandboxProcess) -> Iterator[None]:
    yield
    with sandbox.admin() as admin:
        assert admin.delete(FAULTS).status_code == 200


@pytest.fixture
def funded(sandbox: SandboxProcess) -> Iterator[Session]:
    """A fresh account with three deposits: 0.1 BTC, then 2 ETH, then 500 USDT on tron."""
    session = new_client(sandbox)
    top_up(session, "0.1 BTC")
    top_up(session, "2 ETH")
    top_up(session, "500 USDT", "tron")
    yield session
    session.close()


@pytest.fixture
async def api(sandbox: SandboxProcess, funded: Session) -> AsyncIterator[ServiceClient]:
    client = ServiceClient(ClientSettings(sandbox.url), retry=RetryPolicy(attempts=1))
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
    sandbox: SandboxProcess, api: ServiceClient, funded: Session, clean_faults: None
) -> None:
    path = rf"^/api/v1/accounting/account/{funded.account}/request/deposit$"
    set_faults(sandbox, {"kind": "latency", "seconds": 0.6, "count": 1, "path": path})
    feed = TransferFeed(api, TransferQuery(), interval=60)
    pages: list[TransferPage] = []
    feed.pages.subscribe(pages.append)
    feed.start()
    try:
        await asyncio.sleep(0.1)  # the first (newest-first) answer is held up by the server
        feed.set_ascending(True)
        await until(lambda: pages, timeout=5)
        await asyncio.sleep(0.8)  # long past the slow answer's arrival
    finally:
        await feed.stop()
    assert [p.query.ascending for p in pages] == [True]
    assert [r.asset for r in pages[0].records] == ["BTC", "ETH", "USDT"]


async def test_a_pending_deposit_is_seen_completing(
    sandbox: SandboxProcess, api: ServiceClient, funded: Session
) -> None:
    ordering = top_up(funded, "1 SOL", pendingSeconds=1)
    feed = TransferFeed(api, interval=0.3)
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


async def test_withdrawals_are_listed_with_their_address(
    api: ServiceClient, funded: Session
) -> None:
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
    sandbox: SandboxProcess, api: ServiceClient, funded: Session, clean_faults: None
) -> None:
    path = rf"^/api/v1/accounting/account/{funded.account}/request/withdraw-instructions$"
    set_faults(sandbox, {"kind": "status", "status": 503, "path": path})
    book = await fetch_instructions(api)
    assert len(book.deposit) == 6 and book.withdraw == ()
    assert book.withdraw_error.startswith("Cannot read withdraw instructions: HTTP 503")


async def test_failures_are_one_line_messages_not_tracebacks(
    sandbox: SandboxProcess, api: ServiceClient, funded: Session, clean_faults: None
) -> None:
    account = rf"^/api/v1/accounting/account/{funded.account}/request/"
    set_faults(
        sandbox,
        {"kind": "drop", "path": account + "deposit$"},
        {"kind": "status", "status": 500, "path": account + "(deposit|withdraw)-instructions$"},
    )
    with pytest.raises(TransferError, match=r"^Cannot read deposits: ") as dropped:
        await fetch_transfers(api, TransferQuery())
    with pytest.raises(TransferError, match=r"^Cannot read deposit instructions: HTTP 500"):
        await fetch_instructions(api)
    assert "\n" not in str(dropped.value)


def test_a_query_asks_for_between_1_and_1000_records() -> None:
    TransferQuery(max_records=1)
    TransferQuery(max_records=1000)
    for wrong in (0, 1001):
        with pytest.raises(ValueError, match="between 1 and 1000"):
            TransferQuery(max_records=wrong)
