"""The token's countdown against the sandbox: the server's lifetime, whatever this machine's
wall clock says."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from app.api import ClientSettings, ServiceClient
from app.api.clock import ServerClock
from app.domain import utc_now
from tests.harness import AppSandbox

pytestmark = pytest.mark.anyio


def ahead(seconds: float) -> datetime:
    return utc_now() + timedelta(seconds=seconds)


@pytest.mark.parametrize("skew", [0.0, 600.0, -600.0])
async def test_the_countdown_is_the_servers_lifetime_with_the_local_clock_off(
    skew: float,
) -> None:
    async with AppSandbox(token_ttl=60) as sandbox:
        user = await sandbox.new_client()
        clock = ServerClock(now=lambda: ahead(skew))  # this machine's clock, minutes off
        client = ServiceClient(
            ClientSettings(sandbox.url), transport=sandbox.transport(), clock=clock
        )
        try:
            await client.login(user.user, user.password, user.account)
            left = client.token_seconds_left
            assert left is not None and 58.0 <= left <= 60.0
        finally:
            await client.aclose()
