"""An RFQ desk on an in-process sandbox for service tests, and the sandbox's admin switches they use
(faults, the request log, accept posts)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from app.api import ClientSettings, RetryPolicy, ServerClock, ServiceClient
from app.services.journal import OrderJournal
from app.services.log_events import LogEvent
from app.services.rfq_desk import (
    RfqDesk,
)
from app.services.session import Environment, FeedIntervals, TerminalSession
from tests.harness import ADMIN_TOKEN, SandboxProcess, Session, new_client, until

PAIR = "BTC/USD"


@dataclass
class Desk:
    desk: RfqDesk
    api: ServiceClient
    user: Session
    journal: OrderJournal
    logs: list[LogEvent]
    sandbox: SandboxProcess

    async def free(self) -> dict[str, Decimal]:
        account = await self.api.account()
        return {asset: balance.free for asset, balance in account.balances.items()}


@asynccontextmanager
async def open_desk(
    sandbox: SandboxProcess,
    *,
    clock: ServerClock | None = None,
    started: bool = False,
    **desk_options: Any,
) -> AsyncIterator[Desk]:
    """A desk on a fresh account (USD 100,000, BTC 2). ``started``: the session's feeds run
    and the desk has a top of book and balances before the test begins (its checks need them)."""
    user = new_client(sandbox, {"USD": "100000", "BTC": "2"})
    api = ServiceClient(ClientSettings(sandbox.url), retry=RetryPolicy(attempts=1), clock=clock)
    await api.login(user.user, user.password, user.account)
    await api.service_time()
    session = TerminalSession(
        api,
        Environment(sandbox.url, user.user, user.account, True),
        FeedIntervals(top_of_book=0.25, balances=1.0, order_book=0.5),
    )
    logs: list[LogEvent] = []
    session.events.subscribe(logs.append)
    journal = OrderJournal(":memory:")
    desk = RfqDesk(session, journal, **desk_options)
    try:
        if started:
            await session.start()
            await until(
                lambda: PAIR in desk.market.top_of_book and desk.market.balances is not None
            )
        yield Desk(desk, api, user, journal, logs, sandbox)
    finally:
        await desk.close()
        if started:
            await session.stop()
        await api.aclose()
        journal.close()
        user.close()


def admin_faults(sandbox: SandboxProcess, faults: list[dict[str, Any]]) -> None:
    with sandbox.admin() as admin:
        response = admin.post("/api/v1/sandbox/admin/faults", json={"faults": faults})
        assert response.status_code == 200, response.text


def start_request_log(sandbox: SandboxProcess) -> None:
    """The sandbox logs requests only while a rule is configured (an empty list turns the
    middleware off): install one that never fires."""
    admin_faults(sandbox, [{"kind": "latency", "path": ".*", "rate": 0}])


def clear_faults(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as admin:
        admin.delete("/api/v1/sandbox/admin/faults")


def accept_posts(sandbox: SandboxProcess, account: str) -> list[dict[str, Any]]:
    return [
        r
        for r in logged_requests(sandbox)
        if r["method"] == "POST" and account in r["path"] and r["path"].endswith("/accept")
    ]


def logged_requests(sandbox: SandboxProcess) -> list[dict[str, Any]]:
    with sandbox.admin() as admin:
        response = admin.get(
            "/api/v1/sandbox/admin/faults", headers={"X-Sandbox-Admin": ADMIN_TOKEN}
        )
        assert response.status_code == 200, response.text
        requests: list[dict[str, Any]] = response.json()["requests"]
        return requests
