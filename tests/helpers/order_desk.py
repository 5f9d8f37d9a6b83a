"""An order desk on an in-process sandbox for service tests, and a way to lose an order's answer on
the wire."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx

from app.api import ClientSettings, RetryPolicy, ServiceClient
from app.services.journal import OrderJournal
from app.services.order_desk import OrderDesk, SubmitResult
from app.services.pretrade import CheckLimits
from app.services.session import Environment, TerminalSession
from app.services.ticket import TicketInput
from tests.harness import ADMIN_TOKEN, Recorder, SandboxProcess, new_client
from tests.services.session_desk import SessionDesk


@dataclass
class Desk(SessionDesk):
    sandbox: SandboxProcess
    session: TerminalSession
    desk: OrderDesk
    journal: OrderJournal
    recorder: Recorder

    @property
    def account(self) -> str:
        return self.session.environment.account

    async def refresh(self) -> None:
        """Balances and top of book as the pollers would publish them."""
        await self.session.balances.poll_once()
        await self.session.top_of_book.poll_once()

    async def faults(self, *rules: dict[str, Any]) -> None:
        async with admin(self.sandbox) as http:
            response = await http.post("/api/v1/sandbox/admin/faults", json={"faults": rules})
            assert response.status_code == 200, response.text

    async def hits(self, fragment: str) -> int:
        return len(await self.hit_log(fragment))

    async def hit_log(self, fragment: str) -> list[dict[str, Any]]:
        async with admin(self.sandbox) as http:
            report = (await http.get("/api/v1/sandbox/admin/faults")).json()
        return [hit for hit in report["hits"] if fragment in hit["path"]]

    async def wait_for_hit(self, fragment: str, timeout: float = 10.0) -> dict[str, Any]:
        """The first fault hit on a path containing ``fragment``, polling up to ``timeout``."""
        deadline = time.monotonic() + timeout
        while not (hits := await self.hit_log(fragment)):
            if time.monotonic() > deadline:
                raise AssertionError(f"no request to {fragment} within {timeout} s")
            await asyncio.sleep(0.02)
        return hits[0]

    async def clear_faults(self) -> None:
        async with admin(self.sandbox) as http:
            await http.delete("/api/v1/sandbox/admin/faults")

    def order_path(self) -> str:
        return f"/account/{self.account}/order(/limit)?$"


@asynccontextmanager
async def open_desk(
    sandbox: SandboxProcess,
    balances: dict[str, str] | None = None,
    credit: dict[str, str] | None = None,
    limits: CheckLimits | None = None,
    read_timeout: float = 15.0,
) -> AsyncIterator[Desk]:
    user = new_client(sandbox, balances, credit)
    user.close()
    recorder = Recorder()
    client = ServiceClient(
        ClientSettings(sandbox.url, read_timeout=read_timeout),
        retry=RetryPolicy(attempts=1),
        transport=recorder,
    )
    await client.login(user.user, user.password, user.account)
    env = Environment(sandbox.url, user.user, user.account, sandbox=True)
    session = TerminalSession(
        client, env, watchlist=["BTC/USD", "ETH/USD", "ETH/BTC", "ETH/USDT", "USDT/USD"]
    )
    journal = OrderJournal(":memory:")
    desk = Desk(sandbox, session, OrderDesk(session, journal, limits), journal, recorder)
    await desk.refresh()
    try:
        yield desk
    finally:
        if sandbox.proc is not None and sandbox.proc.poll() is None:
            await desk.clear_faults()
        desk.desk.close()
        journal.close()
        await client.aclose()


async def lose_an_order(
    d: Desk, *, settle: tuple[float, ...], session: float
) -> tuple[list[str], SubmitResult]:
    """Send 100 USD of BTC under the fault already set; its answer is lost. Returns the
    statuses the desk publishes from then on, and the (unknown) first result."""
    d.desk.settle_delays = settle
    d.desk.session_delay = session
    published: list[str] = []
    d.desk.results.subscribe(lambda r: published.append(r.status))
    lost = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
    assert lost.status == "unknown"
    return published, lost


@asynccontextmanager
async def admin(sandbox: SandboxProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        base_url=sandbox.url, timeout=30, headers={"X-Sandbox-Admin": ADMIN_TOKEN}
    ) as http:
        yield http
