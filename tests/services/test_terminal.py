"""The composition root against the sandbox's app in this process: one ``Terminal`` builds the
session, the desks and the feeds of a login, runs every loop in one task owner, and one
``aclose`` ends them all — tasks first, the client last."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import httpx
import pytest

from app.api import ClientSettings, ServiceClient
from app.services.log_events import LogEvent, LogLevel
from app.services.poller import Poller
from app.services.session import Environment, FeedIntervals
from app.services.terminal import Terminal
from app.services.ticket import TicketInput
from app.services.transfers import TransferQuery
from tests.harness import AppSandbox, until

pytestmark = pytest.mark.anyio


class Closing(httpx.AsyncBaseTransport):
    """The transport into the sandbox, telling whether the client closed it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        self.closed = True
        await self.inner.aclose()


async def test_one_terminal_owns_every_loop_and_aclose_ends_them_all(
    app_sandbox: AppSandbox,
) -> None:
    user = await app_sandbox.new_client()
    transport = Closing(app_sandbox.transport())
    client = ServiceClient(ClientSettings(app_sandbox.url), transport=transport)
    await client.login(user.user, user.password, user.account)
    environment = Environment(app_sandbox.url, user.user, user.account, sandbox=True)
    terminal = Terminal.build(client, environment, FeedIntervals(0.05, 0.05, 0.05))
    session = terminal.session
    desks = terminal.open_desks(":memory:")
    assert terminal.open_desks() is desks  # one set of desks per login
    events: list[LogEvent] = []
    session.events.subscribe(events.append)

    await terminal.start()
    orders = terminal.feeds.order_feed(desks.journal, interval=0.05, page_size=10)
    transfers = terminal.feeds.transfer_feed(TransferQuery(), interval=0.05)
    orders.start()
    transfers.start()
    await until(lambda: session.market.snapshot.tops and session.market.snapshot.balances)
    await until(lambda: orders.snapshot().rows == () and not orders.snapshot().loading)
    pollers: list[Poller[Any]] = [session.top_of_book, session.balances, session.order_book]
    pollers += [orders.poller, transfers.poller]
    assert all(poller.running for poller in pollers)
    # pollers, health, server clock and both feeds' polls: all in the terminal's one owner
    assert terminal.tasks.running >= 7

    async def broken() -> None:
        raise RuntimeError("a background job broke")

    terminal.spawn(broken(), "a test job")
    await until(lambda: any("a test job failed" in e.message for e in events))
    assert [e.level for e in events if "a test job" in e.message] == [LogLevel.ERROR]

    await terminal.aclose()
    assert terminal.tasks.running == 0
    assert not any(poller.running for poller in pollers)
    assert transport.closed  # the client closed, after everything that used it
    with pytest.raises(RuntimeError, match="closed"):
        terminal.spawn(asyncio.sleep(0), "too late")
    await terminal.aclose()  # a second close is harmless


class LosesOrderAnswers(Closing):
    """An order's POST fails as if the connection dropped after the request left: the answer
    is lost, and the order never reached the sandbox (so it stays unknown)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/order"):
            raise httpx.ReadError("connection reset after the request was sent", request=request)
        return await self.inner.handle_async_request(request)


async def test_a_desks_settler_belongs_to_the_terminal_and_ends_with_it(
    app_sandbox: AppSandbox,
) -> None:
    user = await app_sandbox.new_client()
    client = ServiceClient(
        ClientSettings(app_sandbox.url), transport=LosesOrderAnswers(app_sandbox.transport())
    )
    await client.login(user.user, user.password, user.account)
    environment = Environment(app_sandbox.url, user.user, user.account, sandbox=True)
    terminal = Terminal.build(client, environment, FeedIntervals(60, 60, 60))
    desks = terminal.open_desks(":memory:")
    before = terminal.tasks.running
    result = await desks.orders.submit(TicketInput("USD", "BTC", Decimal(100)))
    assert result.status == "unknown"
    assert terminal.tasks.running == before + 1  # the settler, looking the order up
    entry = desks.journal.entry(result.client_order_id)
    assert entry is not None and entry.status == "unknown"  # never called failed
    await terminal.aclose()
    assert terminal.tasks.running == 0
