"""Pollers, health and the terminal session against the sandbox: its app in this process
(``app_sandbox``, over httpx's ASGI transport), or a real sandbox process over loopback where a
server must go away and come back."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest

from app.api import ClientSettings, NetworkError, RateLimited, RetryPolicy, ServiceClient
from app.domain.records import OrderBook, TopOfBook
from app.services.health import STALE_FACTOR, Health, HealthMonitor, HealthState
from app.services.log_events import LogEvent
from app.services.poller import MAX_BACKOFF, FeedGroup, Poller
from app.services.session import Balances, Environment, FeedIntervals, TerminalSession
from tests.harness import AppSandbox, SandboxProcess, free_port, until
from tests.helpers.feeds import logged_in

pytestmark = pytest.mark.anyio


class ManualClock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_slow_server_slows_the_poller_instead_of_piling_up() -> None:
    calls: list[tuple[float, float]] = []
    in_flight: list[int] = [0]

    async def slow_fetch() -> int:
        in_flight.append(in_flight[-1] + 1)
        started = time.monotonic()
        await asyncio.sleep(0.05)  # a server that takes fifty poll intervals to answer
        calls.append((started, time.monotonic()))
        in_flight.append(in_flight[-1] - 1)
        return len(calls)

    poller: Poller[int] = Poller("slow", slow_fetch, 0.001)
    poller.start()
    try:
        await until(lambda: len(calls) >= 4)
    finally:
        await poller.stop()
    assert max(in_flight) == 1
    for (_, end), (next_start, _) in itertools.pairwise(calls):
        assert next_start >= end, "a poll started before the previous one finished"


async def test_refresh_cuts_the_wait_short(app_sandbox: AppSandbox) -> None:
    api, _ = await logged_in(app_sandbox)
    poller: Poller[dict[str, TopOfBook]] = Poller(
        "top", lambda: api.top_of_book(["BTC/USD"]), interval=60
    )
    seen: list[dict[str, TopOfBook]] = []
    poller.data.subscribe(seen.append)
    poller.start()
    await until(lambda: len(seen) == 1)
    poller.refresh()
    await until(lambda: len(seen) == 2, timeout=5)  # far sooner than the 60 s interval
    await poller.stop()
    await api.aclose()
    assert "BTC/USD" in seen[1]


async def test_failures_back_off_but_keep_probing_within_a_second_and_a_half() -> None:
    """Offline, the feeds are the probe that sees the service return: the back-off stays short."""
    closed = ServiceClient(
        ClientSettings(f"http://127.0.0.1:{free_port()}"), retry=RetryPolicy(attempts=1)
    )
    poller: Poller[object] = Poller("dead", closed.service_time, interval=0.5)
    delays = []
    for _ in range(8):
        await poller.poll_once()
        delays.append(poller.next_delay(0.0))
    await closed.aclose()
    assert poller.snapshot().failures == 8
    assert delays[0] <= 1.0
    assert all(d <= MAX_BACKOFF for d in delays)
    assert max(delays) >= MAX_BACKOFF / 2


async def test_session_fills_feeds_and_follows_the_selection(app_sandbox: AppSandbox) -> None:
    api, client = await logged_in(app_sandbox)
    session = TerminalSession(
        api,
        Environment(app_sandbox.url, client.user, client.account, sandbox=True),
        FeedIntervals(top_of_book=0.2, balances=1, order_book=0.2),
    )
    tops: list[dict[str, TopOfBook]] = []
    balances: list[Balances] = []
    books: list[OrderBook | None] = []
    session.top_of_book.data.subscribe(tops.append)
    session.balances.data.subscribe(balances.append)
    session.order_book.data.subscribe(books.append)
    await session.start()
    try:
        assert "BTC/USD" in session.watchlist  # default watchlist: the server's pairs
        await until(lambda: tops and balances and books)
        assert set(tops[-1]) == set(session.watchlist)
        assert balances[-1].account.balances["USD"].free == 100000
        assert balances[-1].portfolio.account_id == client.account
        session.select_pair("ETH/BTC")
        await until(lambda: books[-1] is not None and str(books[-1].pair) == "ETH/BTC")
        count = len(balances)
        session.after_fill()
        await until(lambda: len(balances) > count, timeout=0.9)  # before the 1 s interval
        await until(lambda: session.health.current.health == Health.LIVE)
    finally:
        await session.stop()
        await api.aclose()


async def test_stale_data_degrades_the_health_until_a_poll_succeeds() -> None:
    """A hanging request leaves no failure behind: only the age of the data says it is stale."""
    clock = ManualClock()
    answers: list[asyncio.Future[int]] = []

    async def fetch() -> int:
        answers.append(asyncio.get_running_loop().create_future())
        return await answers[-1]

    interval = 0.01  # real seconds between polls; the data's age is the clock's
    poller: Poller[int] = Poller("top", fetch, interval=interval, clock=clock)
    monitor = HealthMonitor([poller], clock=clock)  # type: ignore[list-item]
    states: list[HealthState] = []
    monitor.changes.subscribe(states.append)
    assert monitor.evaluate().health == Health.CONNECTING
    poller.start()
    try:
        await until(lambda: len(answers) == 1)
        answers[0].set_result(1)
        await until(lambda: monitor.current.health == Health.LIVE)
        assert poller.snapshot().age() is not None
        await until(lambda: len(answers) == 2)  # the next poll hangs
        clock.now += STALE_FACTOR * interval * 0.9
        assert monitor.evaluate().health == Health.LIVE  # not yet three intervals old
        clock.now += STALE_FACTOR * interval * 0.2
        stale = monitor.evaluate()
        assert stale.health == Health.DEGRADED
        assert stale.reason == "top: no fresh data for over 3 poll intervals"
        assert stale.feed("top") == poller.snapshot()
        answers[1].set_result(2)
        # Hysteresis: one fresh answer is not yet live, two in a row are.
        await until(lambda: monitor.current.reason == "recovering: waiting for fresh data")
        await until(lambda: len(answers) == 3)
        answers[2].set_result(3)
        await until(lambda: monitor.current.health == Health.LIVE)
    finally:
        await poller.stop()
    assert [s.health for s in states] == [
        Health.LIVE,
        Health.DEGRADED,
        Health.DEGRADED,
        Health.LIVE,
    ]


@pytest.mark.slow
async def test_health_goes_degraded_then_offline_and_recovers(tmp_path: Path) -> None:
    """Over loopback: the server process goes away and comes back on the same port."""
    port = free_port()
    db = str(tmp_path / "health.db")
    first = SandboxProcess("--port", str(port), db=db).start()
    api = ServiceClient(ClientSettings(first.url, read_timeout=2), retry=RetryPolicy(attempts=1))
    await api.login("demo", "demo", "demo")
    session = TerminalSession(
        api,
        Environment(first.url, "demo", "demo", sandbox=True),
        FeedIntervals(top_of_book=0.2, balances=0.6, order_book=0.3),
    )
    states: list[HealthState] = []
    session.health.changes.subscribe(states.append)
    await session.start()
    second = None
    try:
        await until(lambda: session.health.current.health == Health.LIVE)
        first.stop()
        await until(lambda: session.health.current.health == Health.OFFLINE, timeout=15)
        kinds = [s.health for s in states]
        assert Health.DEGRADED in kinds[kinds.index(Health.LIVE) :]
        assert kinds.index(Health.DEGRADED, kinds.index(Health.LIVE)) < kinds.index(Health.OFFLINE)
        second = SandboxProcess("--port", str(port), db=db).start()
        await until(lambda: session.health.current.health == Health.LIVE, timeout=40)
    finally:
        await session.stop()
        await api.aclose()
        first.close()
        if second is not None:
            second.close()


async def test_logout_stops_feeds_and_forgets_the_login(app_sandbox: AppSandbox) -> None:
    api, client = await logged_in(app_sandbox)
    session = TerminalSession(
        api,
        Environment(app_sandbox.url, client.user, client.account),
        FeedIntervals(top_of_book=0.2, balances=1, order_book=0.2),
    )
    await session.start()
    await until(lambda: session.top_of_book.snapshot().last_ok is not None)
    await session.logout()
    assert not session.top_of_book.running and not session.balances.running
    assert api.token_seconds_left is None


async def test_one_success_wakes_every_feed_and_resets_its_back_off() -> None:
    """The feeds of one connection recover together: balances that a 429 told to wait 30 s
    poll at once when top of book gets through again."""
    group = FeedGroup()
    down = [True]
    top_calls: list[float] = []
    balance_calls: list[float] = []

    async def top() -> int:
        top_calls.append(time.monotonic())
        if down[0]:
            raise NetworkError("connection refused")
        return 1

    async def balances() -> int:
        balance_calls.append(time.monotonic())
        if down[0]:
            raise RateLimited("slow down", status=429, retry_after=30)
        return 2

    fast: Poller[int] = Poller("top", top, 0.05, group=group)
    slow: Poller[int] = Poller("balances", balances, 5.0, group=group)
    fast.start()
    slow.start()
    try:
        await until(lambda: slow.snapshot().failures == 1 and fast.snapshot().failures >= 1)
        assert slow.next_delay(0.0) >= 30  # the Retry-After, honoured
        down[0] = False
        recovered = time.monotonic()
        await until(lambda: slow.snapshot().failures == 0, timeout=3)
        assert balance_calls[-1] - recovered < 2.0  # not 30 s, not 5 s
    finally:
        await fast.stop()
        await slow.stop()


async def test_an_outage_is_announced_once_whatever_its_reasons_say() -> None:
    """Offline for one reason, then another, then degraded and offline again, then live: the
    trader is told "offline" once and "online" once (each reason is still logged)."""
    client = ServiceClient(ClientSettings("http://127.0.0.1:9"))
    session = TerminalSession(client, Environment("http://127.0.0.1:9", "u", "a"))
    events: list[LogEvent] = []
    session.events.subscribe(events.append)
    for health, reason in [
        (Health.LIVE, "all feeds fresh"),
        (Health.OFFLINE, "requests failing: refused"),
        (Health.OFFLINE, "requests failing: read timeout"),
        (Health.DEGRADED, "top of book failing"),
        (Health.OFFLINE, "requests failing: refused"),
        (Health.LIVE, "all feeds fresh"),
    ]:
        session.health.changes.publish(HealthState(health, reason, ()))
    await client.aclose()
    assert [event.kind for event in events if event.kind] == ["offline", "online"]
    assert len(events) == 6
