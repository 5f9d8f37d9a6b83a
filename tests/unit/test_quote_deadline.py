"""A quote's countdown errs towards expiry: the server's time is known only within
an interval, and the latest time it allows is the one the deadline is counted from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from app.api import ServerClock
from app.domain import Amount, format_timestamp
from app.domain.records import Quote
from app.services.rfq_desk import LiveQuote

SERVER_NOW = datetime(2026, 11, 24, 12, 0, 0, tzinfo=UTC)
TTL = 10.0


def quote() -> Quote:
    expires = format_timestamp(SERVER_NOW + timedelta(seconds=TTL))
    side = {"price": "60000 BTC/USD", "expiresAt": expires}
    return Quote.parse(
        {
            "orderId": "q-1",
            "buy": {**side, "source": "600 USD", "destination": "0.01 BTC"},
            "sell": {**side, "source": "0.01 BTC", "destination": "600 USD"},
        }
    )


@pytest.mark.parametrize("round_trip", [0.002, 1.6])
def test_the_deadline_is_counted_from_the_latest_server_time_the_clock_allows(
    round_trip: float,
) -> None:
    """The server read SERVER_NOW while our service-time request was out: sent at monotonic
    100, answered at 100 + round_trip. Right then a 10 s quote arrives. Its countdown starts
    at 10 s less the clock's uncertainty (half the round trip): never above the time left."""
    monotonic = [100.0 + round_trip]
    clock = ServerClock(monotonic=lambda: monotonic[0])
    clock.observe_time(SERVER_NOW, sent=100.0, received=100.0 + round_trip)
    assert clock.uncertainty == pytest.approx(round_trip / 2, abs=1e-6)
    live = LiveQuote.received(
        quote(),
        "BTC/USD",
        Amount(Decimal("0.01"), "BTC"),
        received_monotonic=monotonic[0],
        round_trip=0.01,
        clock=clock,
        clock_monotonic=lambda: monotonic[0],
    )
    # The server's time now is SERVER_NOW plus between 0 and round_trip seconds.
    for side in ("buy", "sell"):
        assert live.remaining(side) == pytest.approx(TTL - round_trip, abs=1e-6)
        assert live.remaining(side) <= TTL - round_trip + 1e-6  # never more than may be left
