"""An operation the seed names without a path that the service does not answer is "not offered":
said once, asked again rarely, never a failing feed."""

from __future__ import annotations

import pytest

from app.api import ClientSettings, ServiceClient
from app.api.client import TIME_NOT_OFFERED_RETRY
from app.services.health import Health
from app.services.session import (
    OPTIONAL_RETRY_SECONDS,
    Environment,
    FeedIntervals,
    TerminalSession,
)
from tests.harness import AppSandbox, until

pytestmark = pytest.mark.anyio


async def test_a_service_without_an_order_book_is_live_and_says_it_offers_none() -> None:
    async with AppSandbox() as sandbox:
        user = await sandbox.new_client()
        client = ServiceClient(ClientSettings(sandbox.url), transport=sandbox.transport())
        await client.login(user.user, user.password, user.account)
        environment = Environment(sandbox.url, user.user, user.account, sandbox=True)
        session = TerminalSession(client, environment, FeedIntervals(0.05, 0.05, 0.05), ["BTC/USD"])
        said: list[bool] = []
        session.book_offered_changed.subscribe(said.append)
        await sandbox.faults({"kind": "status", "status": 404, "path": "/book$"})
        await session.start()
        try:
            await until(lambda: session.book_offered is False)
            await until(lambda: session.health.current.health is Health.LIVE)
            assert session.order_book.snapshot().failures == 0  # not a failing feed
            assert session.order_book.interval == OPTIONAL_RETRY_SECONDS
            await sandbox.clear_faults()
            await session.order_book.poll_once()  # the rare retry finds it offered after all
            assert session.book_offered is True and session.order_book.interval == 0.05
            assert said == [False, True]
        finally:
            await session.stop()
            await client.aclose()


async def test_a_service_without_a_time_operation_is_asked_for_it_rarely() -> None:
    async with AppSandbox() as sandbox:
        user = await sandbox.new_client()
        now = [1000.0]
        client = ServiceClient(
            ClientSettings(sandbox.url), transport=sandbox.transport(), monotonic=lambda: now[0]
        )
        await client.login(user.user, user.password, user.account)
        await sandbox.faults({"kind": "status", "status": 404, "path": "/routing/time$"})
        try:
            await client.refresh_clock()
            await client.refresh_clock()
            now[0] += TIME_NOT_OFFERED_RETRY - 1
            await client.refresh_clock()
            assert await time_asks(sandbox) == 1  # not at every check
            now[0] += 2
            await client.refresh_clock()
            assert await time_asks(sandbox) == 2
        finally:
            await client.aclose()


async def time_asks(sandbox: AppSandbox) -> int:
    async with sandbox.admin() as admin:
        report = (await admin.get("/api/v1/sandbox/admin/faults")).json()
    return sum(1 for hit in report["hits"] if hit["path"].endswith("/routing/time"))
