"""One bad answer between good ones (a number out of range, NaN) changes nothing: the state
needs two bad reads of a feed in a row, so odd data cannot flap the connection's health."""

from __future__ import annotations

import httpx
import pytest

from app.api import ClientSettings, ServiceClient
from app.services.health import Health, HealthState
from app.services.session import Environment, FeedIntervals, TerminalSession
from tests.harness import AppSandbox, until

pytestmark = pytest.mark.anyio

ODD = '{"topOfBooks": {"BTC/USD": {"bid": ["1e400", "1"], "ask": ["NaN", "1"]}}}'


class EveryOtherOdd(httpx.AsyncBaseTransport):
    """The sandbox, but every other top of book answer is unreadable; ``odd_in_a_row``
    makes that many odd answers in a row instead (an outage of the feed)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.tops = 0
        self.odd_in_a_row = 1

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if not request.url.path.endswith("/topofbook"):
            return response
        self.tops += 1
        if self.tops % (self.odd_in_a_row + 1):
            await response.aread()
            return httpx.Response(200, text=ODD, headers={"content-type": "application/json"})
        return response


@pytest.mark.slow
async def test_every_other_answer_odd_leaves_the_connection_live() -> None:
    async with AppSandbox() as sandbox:
        user = await sandbox.new_client()
        transport = EveryOtherOdd(sandbox.transport())
        client = ServiceClient(ClientSettings(sandbox.url), transport=transport)
        await client.login(user.user, user.password, user.account)
        environment = Environment(sandbox.url, user.user, user.account, sandbox=True)
        session = TerminalSession(client, environment, FeedIntervals(0.05, 0.2, 0.2), ["BTC/USD"])
        seen: list[HealthState] = []
        try:
            await session.start()
            await until(lambda: session.health.current.health is Health.LIVE)
            session.health.changes.subscribe(seen.append)
            start = transport.tops
            await until(lambda: transport.tops >= start + 40)  # twenty odd answers among them
            # Never a failing feed. (A poll that comes late on a busy machine may still make the
            # data stale for a moment at these 50 ms intervals: that is the staleness rule, a
            # real-world range, not what this test is about.)
            failing = [s for s in seen if "failing" in s.reason]
            assert failing == [], failing
            transport.odd_in_a_row = 5  # now bad reads in a row: that is a failing feed
            await until(lambda: session.health.current.health is not Health.LIVE)
            assert "top of book failing" in session.health.current.reason
        finally:
            await session.stop()
            await client.aclose()
