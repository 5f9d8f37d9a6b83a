"""The terminal against the stand-in service, which reads the seed's open points the other fair
way: a server clock ahead of this machine's, no order book, no service time, no pairs list."""

from __future__ import annotations

import pytest

from app.api import ClientSettings, ServiceClient
from app.services.health import Health
from app.services.session import Environment, FeedIntervals, TerminalSession
from tests.harness import until
from tests.standin.server import URL, Standin, StandinConfig

pytestmark = pytest.mark.anyio


async def test_the_token_countdown_is_the_servers_with_its_clock_37_s_ahead() -> None:
    standin = Standin(StandinConfig(clock_ahead=37, token_seconds=60))
    client = ServiceClient(ClientSettings(URL), transport=standin.transport())
    try:
        await client.login("trader", "secret", standin.config.account)
        left = client.token_seconds_left
        assert left is not None and 58.0 <= left <= 60.0  # not 97 s: 37 s of skew ignored
    finally:
        await client.aclose()


async def test_without_an_order_book_or_a_pairs_list_the_connection_is_live() -> None:
    standin = Standin(StandinConfig(clock_ahead=37))
    client = ServiceClient(ClientSettings(URL), transport=standin.transport())
    await client.login("trader", "secret", standin.config.account)
    environment = Environment(URL, "trader", standin.config.account)
    session = TerminalSession(client, environment, FeedIntervals(0.05, 0.05, 0.05), ["BTC/USD"])
    try:
        await session.start()
        await until(lambda: session.book_offered is False)
        await until(lambda: session.health.current.health is Health.LIVE)
        assert session.market.snapshot.top("BTC/USD") is not None
        assert all(feed.failures == 0 for feed in session.health.current.feeds)
    finally:
        await session.stop()
        await client.aclose()
