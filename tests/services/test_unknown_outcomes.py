"""Outcomes not known: what an earlier run left unknown is listed and looked for
all session until the server shows it, or until the trader dismisses it; never "failed"."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path

import pytest

from app.api import ClientSettings, OutcomeUnknown, RetryPolicy, ServiceClient
from app.api import new_client_order_id as new_id
from app.domain.order_request import OrderRequest
from app.services.desks import TradingDesks
from app.services.journal import OrderJournal
from app.services.log_events import LogEvent
from app.services.session import Environment, TerminalSession
from app.services.unknown_outcomes import DISMISSED, Unknown
from tests.harness import Faults, SandboxProcess, Session, new_client, until

pytestmark = pytest.mark.anyio


async def logged_in(sandbox: SandboxProcess, user: Session, read_timeout: float) -> ServiceClient:
    client = ServiceClient(
        ClientSettings(sandbox.url, read_timeout=read_timeout), retry=RetryPolicy(attempts=1)
    )
    await client.login(user.user, user.password, user.account)
    return client


@asynccontextmanager
async def restarted(
    sandbox: SandboxProcess, user: Session, journal: Path
) -> AsyncIterator[tuple[TradingDesks, list[tuple[Unknown, ...]], list[LogEvent]]]:
    """The terminal started again on ``journal``: its desks (looking again every 0.2 s), what
    the unknown list published, and the log lines."""
    client = await logged_in(sandbox, user, 15.0)
    session = TerminalSession(client, Environment(sandbox.url, user.user, user.account))
    desks = TradingDesks.open(session, journal)
    desks.outcomes.session_delay = 0.2
    published: list[tuple[Unknown, ...]] = []
    lines: list[LogEvent] = []
    desks.outcomes.changed.subscribe(published.append)
    session.events.subscribe(lines.append)
    try:
        yield desks, published, lines
    finally:
        await desks.close()
        await client.aclose()


@pytest.mark.slow
async def test_an_order_whose_answer_outlived_the_run_is_found_after_a_restart(
    sandbox: SandboxProcess, faults: Faults, tmp_path: Path
) -> None:
    """The audit's case: the order's answer is held past the read timeout, the terminal dies,
    starts again before the server executes it. The start-up look-up finds nothing: the order
    is listed as unknown (not failed), looked for, and shown filled when the server fills it."""
    user = new_client(sandbox)
    user.close()
    path = tmp_path / "journal.db"
    first_run = await logged_in(sandbox, user, read_timeout=0.5)
    faults(
        {"kind": "latency", "seconds": 2.5, "path": f"/account/{user.account}/order$", "count": 1}
    )
    journal = OrderJournal(path)
    request = OrderRequest("market", "USD", "BTC", Decimal(100), new_id())
    journal.record_intent(
        request.client_order_id, "market", user.account, request.body_text(user.account)
    )
    with pytest.raises(OutcomeUnknown):
        await first_run.place_order(request)
    journal.close()  # the terminal dies with the entry "sending"
    await first_run.aclose()
    faults.clear()

    async with restarted(sandbox, user, path) as (desks, published, lines):
        [left] = await desks.reconcile_on_start(desks.orders.session)
        assert left.status == "unknown"  # not on the list yet: absence is not proof
        [listed] = desks.outcomes.current
        assert listed.what == "Buy BTC for 100 USD (market)"
        assert listed.client_order_id == request.client_order_id
        await until(lambda: desks.outcomes.current == (), timeout=15)
        entry = desks.journal.entry(request.client_order_id)
        assert entry is not None and entry.status == "filled" and entry.order_id
        assert published[-1] == ()
        assert any(
            "earlier run" in line.message and entry.order_id in line.message for line in lines
        )
        assert all("failed" not in line.message for line in lines)


@pytest.mark.slow
async def test_the_trader_dismisses_an_unknown_and_it_is_not_looked_for_again(
    sandbox: SandboxProcess, tmp_path: Path, look_ups: list[str]
) -> None:
    user = new_client(sandbox)
    user.close()
    path = tmp_path / "journal.db"
    async with restarted(sandbox, user, path) as (desks, _, _):
        never = OrderRequest("market", "BTC", "USD", Decimal("0.5"), new_id())
        desks.journal.record_intent(
            never.client_order_id, "market", user.account, never.body_text(user.account)
        )
    async with restarted(sandbox, user, path) as (desks, published, lines):
        await desks.reconcile_on_start(desks.orders.session)
        assert [u.what for u in desks.outcomes.current] == ["Sell 0.5 BTC (market)"]
        await until(lambda: look_ups.count(never.client_order_id) >= 3)
        assert desks.outcomes.dismiss(never.client_order_id)
        assert published[-1] == ()
        entry = desks.journal.entry(never.client_order_id)
        assert entry is not None and entry.status == DISMISSED
        assert "not on the server's order list" in entry.detail  # what was known is kept
        assert "no longer looks for it" in lines[-1].message
        looked = look_ups.count(never.client_order_id)
        await until(lambda: desks.outcomes.following() == [])
        assert look_ups.count(never.client_order_id) == looked
        assert not desks.outcomes.dismiss(never.client_order_id)  # nothing left to dismiss
    async with restarted(sandbox, user, path) as (desks, _, _):
        assert await desks.reconcile_on_start(desks.orders.session) == []
        assert desks.outcomes.current == ()
