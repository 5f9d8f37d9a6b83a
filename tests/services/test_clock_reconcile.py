"""The start-up reconcile with the local wall clock minutes off: the journal's stamps
are moved to server time by a freshly measured offset, so the look-up window still holds the
order."""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal

import pytest

from app.api import ClientSettings, RetryPolicy, ServerClock, ServiceClient, new_client_order_id
from app.api.clock import system_now
from app.domain.order_request import OrderRequest
from app.services.journal import OrderJournal
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.services.settling import OrderSettler, backoff_delays
from tests.harness import SandboxProcess, new_client, until

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("minutes", [15, -15])
async def test_the_reconcile_finds_a_filled_order_with_the_local_clock_off(
    sandbox: SandboxProcess, minutes: int
) -> None:
    """An order is filled but the terminal stops before writing its answer; at the next start
    (a new client whose clock has not been measured yet) the reconcile finds it filled though
    this machine's clock — the journal's stamps and the client's wall clock — is 15 minutes
    wrong either way."""

    user = new_client(sandbox, {"USD": "100000", "BTC": "2"})
    journal = OrderJournal(":memory:", now=lambda: system_now() + timedelta(minutes=minutes))
    settings = ClientSettings(sandbox.url)
    first = ServiceClient(settings, retry=RetryPolicy(attempts=1))
    restarted = ServiceClient(
        settings,
        retry=RetryPolicy(attempts=1),
        clock=ServerClock(now=lambda: system_now() + timedelta(minutes=minutes)),
    )
    try:
        await first.login(user.user, user.password, user.account)
        request = OrderRequest("market", "USD", "BTC", Decimal("100"), new_client_order_id())
        journal.record_intent(
            request.client_order_id, "market", user.account, request.body(user.account)
        )
        placed = await first.place_order(request)
        assert placed.filled
        entry = journal.entry(request.client_order_id)
        assert entry is not None and entry.status == "sending"
        assert abs(entry.created_at - system_now()) > timedelta(minutes=14)

        await restarted.login(user.user, user.password, user.account)
        changed = await OrderSettler(restarted).reconcile(journal, user.account)
        assert [e.client_order_id for e in changed] == [request.client_order_id]
        settled = journal.entry(request.client_order_id)
        assert settled is not None
        assert (settled.status, settled.order_id) == ("filled", placed.order_id)
        offset = restarted.clock.offset.total_seconds()
        assert offset == pytest.approx(-minutes * 60, abs=1.0)
    finally:
        await first.aclose()
        await restarted.aclose()
        journal.close()
        user.close()


async def test_the_session_re_measures_after_a_wall_clock_jump_without_being_asked(
    sandbox: SandboxProcess,
) -> None:
    """Server time is tracked continuously: a jump of this machine's clock while nothing
    counts down is seen and re-measured by the running session within its clock check, and
    the offset (the status bar's) follows; server time never moved."""
    user = new_client(sandbox)
    shift = [0.0]
    clock = ServerClock(now=lambda: system_now() + timedelta(seconds=shift[0]))
    api = ServiceClient(ClientSettings(sandbox.url), retry=RetryPolicy(attempts=1), clock=clock)
    await api.login(user.user, user.password, user.account)
    session = TerminalSession(
        api, Environment(sandbox.url, user.user, user.account), FeedIntervals(5, 5, 5)
    )
    session.clock_check_seconds = 0.1
    try:
        await session.start()
        measured = clock.measurements
        assert clock.offset.total_seconds() == pytest.approx(0, abs=0.5)
        shift[0] = 600.0
        await until(lambda: clock.measurements > measured, timeout=5)
        assert clock.jumps == 1
        assert clock.offset.total_seconds() == pytest.approx(-600, abs=0.5)
        assert abs(clock.server_now() - system_now()) < timedelta(seconds=0.5)
    finally:
        await session.stop()
        await api.aclose()
        user.close()


@pytest.mark.parametrize("step", [-60, 60])
async def test_a_clock_stepped_between_the_crash_and_the_restart_hides_nothing(
    sandbox: SandboxProcess, step: int
) -> None:
    """The order is sent and filled, the terminal dies before the answer is written, and this
    machine's clock is stepped an hour before the next start: the look-up by clientOrderId
    needs no time window, so the reconcile still finds it, at once."""
    user = new_client(sandbox, {"USD": "100000", "BTC": "2"})
    journal = OrderJournal(":memory:")  # stamped by the clock as it was
    settings = ClientSettings(sandbox.url)
    first = ServiceClient(settings, retry=RetryPolicy(attempts=1))
    stepped = ServerClock(now=lambda: system_now() + timedelta(minutes=step))
    restarted = ServiceClient(settings, retry=RetryPolicy(attempts=1), clock=stepped)
    try:
        await first.login(user.user, user.password, user.account)
        request = OrderRequest("market", "USD", "BTC", Decimal("100"), new_client_order_id())
        journal.record_intent(
            request.client_order_id, "market", user.account, request.body(user.account)
        )
        placed = await first.place_order(request)

        await restarted.login(user.user, user.password, user.account)
        started = time.monotonic()
        await OrderSettler(restarted).reconcile(journal, user.account)
        settled = journal.entry(request.client_order_id)
        assert settled is not None
        assert (settled.status, settled.order_id) == ("filled", placed.order_id)
        assert time.monotonic() - started < 5  # one look-up, not a minute's wait
    finally:
        await first.aclose()
        await restarted.aclose()
        journal.close()
        user.close()


def test_an_unknown_is_looked_for_after_one_two_four_seconds_not_a_minute() -> None:
    delays = backoff_delays()
    assert [next(delays) for _ in range(9)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]
