"""A service that answers 503 with a Retry-After is left alone as long as it asked, as after a
429: the feeds do not poll into a maintenance window."""

from __future__ import annotations

import pytest

from app.api import ClientSettings, ServerError, ServiceClient
from app.services.session import Environment, FeedIntervals, TerminalSession
from tests.harness import AppSandbox

pytestmark = pytest.mark.anyio


async def test_a_503_with_retry_after_holds_the_feed_for_as_long_as_it_says() -> None:
    async with AppSandbox() as sandbox:
        user = await sandbox.new_client()
        client = ServiceClient(ClientSettings(sandbox.url), transport=sandbox.transport())
        await client.login(user.user, user.password, user.account)
        environment = Environment(sandbox.url, user.user, user.account, sandbox=True)
        session = TerminalSession(client, environment, FeedIntervals(0.05, 5, 5), ["BTC/USD"])
        poller = session.top_of_book
        try:
            await sandbox.faults(
                {"kind": "retry_after", "status": 503, "retryAfter": 20, "path": "topofbook$"}
            )
            await poller.poll_once()
            status = poller.snapshot()
            assert status.failures == 1 and isinstance(status.last_error, ServerError)
            assert status.last_error.status == 503 and status.last_error.retry_after == 20
            assert poller.next_delay(0.0) >= 20  # not the 0.05 s interval, nor its back-off
            await sandbox.clear_faults()
            await poller.poll_once()
            assert poller.snapshot().failures == 0 and poller.next_delay(0.0) <= 0.05
        finally:
            await client.aclose()
