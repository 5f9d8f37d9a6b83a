"""Connection health in seconds, auth that gives up politely, keep-alive that cannot race:
against real sandbox processes over loopback, with the sandbox's fault switches and the
loopback proxy of ``tests/proxy.py`` where the fault must sit between client and server."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from decimal import Decimal

import pytest

from app.api import (
    ClientSettings,
    LoginExpired,
    LoginThrottled,
    OutcomeUnknown,
    RetryPolicy,
    ServiceClient,
)
from app.services.connect import LoginFailed, connect
from app.services.health import Health
from app.services.session import FeedIntervals
from tests.harness import Faults, SandboxProcess, new_client, terminal_session, until
from tests.perf.bench_faults import FAULTS, Rig, measure
from tests.proxy import proxy_to

pytestmark = pytest.mark.anyio

ONE_TRY = RetryPolicy(attempts=1)
TRADING_PATHS = r"^/api/v1/(accounting|routing)/"  # everything but the login


class ManualClock:
    """Monotonic seconds that move only when the test says so (re-login spacing)."""

    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


def requests_logged(sandbox: SandboxProcess) -> int:
    with sandbox.admin() as admin:
        return len(admin.get(Faults.PATH).json()["requests"])


# -- the fault matrix ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    """A sandbox with a database file (it must come back on its port) behind the proxy."""
    with tempfile.TemporaryDirectory() as folder:
        made = Rig(folder)
        yield made
        made.close()


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
async def test_every_fault_is_seen_in_seconds_and_its_end_too(rig: Rig, fault: str) -> None:
    """Degraded within 4 s, offline within 8 s, live again within 4 s of the fault's end, and
    no flapping on the way (live → degraded → offline: at most one more change). The
    benchmark ``tests.perf.bench_faults`` prints the real figures."""
    result = await measure(rig, fault, cap=12)
    assert result.degraded is not None and result.degraded <= 4, result
    assert result.offline is not None and result.offline <= 8, result
    assert result.recovery is not None and result.recovery <= 4, result
    assert result.flips <= 3, result


# -- auth that gives up politely -------------------------------------------------------------


async def test_a_persistent_401_logs_in_once_a_minute_and_stops_the_feeds(
    sandbox: SandboxProcess, faults: Faults, anyio_backend: str
) -> None:
    account = new_client(sandbox)
    clock = ManualClock()
    api = ServiceClient(ClientSettings(sandbox.url), retry=ONE_TRY, monotonic=clock)
    intervals = FeedIntervals(top_of_book=0.1, balances=0.2, order_book=0.1)
    session = await terminal_session(sandbox, account, api, intervals, watchlist=["BTC/USD"])
    before = sandbox.logins(account.user)
    try:
        await session.start()
        await until(lambda: session.health.current.health == Health.LIVE)
        faults({"kind": "unauthorized", "path": TRADING_PATHS})
        await until(lambda: session.health.current.health == Health.AUTH_EXPIRED, timeout=5)
        assert session.health.current.reason == "login expired: log in again"
        assert isinstance(session.feeds.halted_by, LoginExpired)
        sent = requests_logged(sandbox)
        await asyncio.sleep(1.0)  # ten poll intervals of the fastest feed
        assert requests_logged(sandbox) == sent  # polling stopped: no requests, no logins
        assert sandbox.logins(account.user) == before + 1  # the one re-login

        # The client alone: within the minute no second re-login; after it, one more.
        with pytest.raises(LoginExpired, match="less than a minute ago"):
            await api.account()
        assert sandbox.logins(account.user) == before + 1
        clock.now += 61
        with pytest.raises(LoginExpired, match="refused again after a re-login"):
            await api.account()
        assert sandbox.logins(account.user) == before + 2

        # The trader logs in again: the feeds resume.
        faults.clear()
        await session.log_in_again(account.password)
        await until(lambda: session.health.current.health == Health.LIVE, timeout=5)
    finally:
        await session.stop()
        await api.aclose()
        account.close()


async def test_a_refused_re_login_is_login_expired_and_tried_once(
    sandbox: SandboxProcess, faults: Faults, anyio_backend: str
) -> None:
    """The password changed under a running session: the one re-login is refused, and the
    client says "login expired" instead of trying the old password again and again."""
    account = new_client(sandbox)
    async with ServiceClient(ClientSettings(sandbox.url), retry=ONE_TRY) as api:
        await api.login(account.user, account.password, account.account)
        faults({"kind": "unauthorized"})  # every route, the login's too
        for _ in range(3):
            with pytest.raises(LoginExpired):
                await api.account()
    with sandbox.admin() as admin:
        logged = admin.get(Faults.PATH).json()["requests"]
    assert len([r for r in logged if r["path"] == "/api/v1/identity/jwt"]) == 1
    account.close()


async def test_a_429_on_login_is_worded_with_its_retry_after(
    sandbox: SandboxProcess, faults: Faults, anyio_backend: str
) -> None:
    account = new_client(sandbox)
    faults({"kind": "retry_after", "retryAfter": 7, "path": r"^/api/v1/identity/jwt$"})
    async with ServiceClient(ClientSettings(sandbox.url)) as api:
        with pytest.raises(LoginThrottled) as caught:
            await api.login(account.user, account.password, account.account)
    assert caught.value.retry_after == 7 and caught.value.status == 429
    assert str(caught.value) == "too many logins: try again in 7 s"
    with pytest.raises(LoginFailed, match=r"^Too many logins: try again in 7 s\.$"):
        await connect(sandbox.url, account.user, account.password, account.account)
    with sandbox.admin() as admin:  # one request per attempt: a 429 on login is not retried
        logged = admin.get(Faults.PATH).json()["requests"]
    assert len([r for r in logged if r["path"] == "/api/v1/identity/jwt"]) == 2
    account.close()


# -- keep-alive that cannot race ---------------------------------------------------------------


def test_idle_connections_expire_before_the_servers_keep_alive() -> None:
    """uvicorn closes idle connections after 5 s: ours are dropped after 2 s, never raced."""
    assert ClientSettings("http://x").keepalive_expiry == 2.0 < 5.0


async def test_a_get_on_a_cut_reused_connection_is_sent_again_a_post_is_unknown(
    sandbox: SandboxProcess, anyio_backend: str
) -> None:
    account = new_client(sandbox)
    port = int(sandbox.url.rsplit(":", 1)[1])
    with proxy_to(port) as proxy:
        proxy.set_mode("cut_reused")
        async with ServiceClient(ClientSettings(proxy.url), retry=ONE_TRY) as api:
            await api.login(account.user, account.password, account.account)  # a new connection
            # Reused: cut before any answer byte; sent once more on a fresh connection.
            assert (await api.account()).account_id == account.account
            assert proxy.cut == 1
            # An order on a reused connection that is cut: never resent, honestly unknown.
            with pytest.raises(OutcomeUnknown, match="unknown whether it executed"):
                await api.limit_order("BTC", "USD", Decimal("0.001"))
            assert proxy.cut == 2
            assert account.get("/api/v1/routing/order/account/{account}").json()["orders"] == []
    account.close()
