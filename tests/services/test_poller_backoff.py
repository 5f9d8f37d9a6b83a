"""A feed against a service that is down: quick retries for about half a minute (a blip is seen
over at once), then longer waits up to 30 s (a service down for good is not asked several
times a second all session)."""

from __future__ import annotations

import pytest

from app.api import NetworkError
from app.services.poller import LONG_BACKOFF, MAX_BACKOFF, QUICK_FAILURES, FeedGroup, Poller
from tests.harness import until

pytestmark = pytest.mark.anyio


async def test_the_wait_stays_short_then_grows_to_the_long_back_off() -> None:
    calls: list[int] = []

    async def down() -> int:
        calls.append(1)
        raise NetworkError("connection refused")

    group = FeedGroup()
    poller: Poller[int] = Poller("top of book", down, 0.5, group=group)
    waits = []
    for _ in range(QUICK_FAILURES + 8):
        await poller.poll_once()
        waits.append(poller.next_delay(0.0))
    assert max(waits[:QUICK_FAILURES]) <= MAX_BACKOFF
    assert waits[QUICK_FAILURES] > MAX_BACKOFF  # past the quick ones: longer
    assert all(LONG_BACKOFF / 2 <= wait <= LONG_BACKOFF for wait in waits[-3:])
    # running, deep in its long back-off: told the service is back, it polls at once
    poller.start()
    try:
        await until(lambda: len(calls) == QUICK_FAILURES + 9)  # its first poll, then a long wait
        group.poll_now()
        await until(lambda: len(calls) == QUICK_FAILURES + 10, timeout=5)
    finally:
        await poller.stop()
