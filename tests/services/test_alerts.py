"""Price alerts on the session's polls against the sandbox (its app in this process), the price
driven through the sandbox's admin price route: a once alert fires exactly once per arming, an
every-time alert on each new crossing, and an alert on an unwatched pair adds that pair to the
one top-of-book request while (and only while) it is armed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal

import pytest

from app.domain.alerts import Condition, PriceAlert, PriceSource, Repeat, new_alert_id
from app.domain.records import TopOfBook
from app.services.log_events import EventKind, LogEvent
from app.services.session import Environment, FeedIntervals, TerminalSession
from tests.harness import AppSandbox, until
from tests.helpers.feeds import logged_in

pytestmark = pytest.mark.anyio

PAIR = "BTC/USD"


@dataclass
class Desk:
    sandbox: AppSandbox
    session: TerminalSession
    polls: list[dict[str, TopOfBook]]
    events: list[LogEvent]

    async def pin(self, pair: str, mid: str) -> None:
        """Hold ``pair``'s mid at ``mid`` and wait until a poll shows it."""
        async with self.sandbox.admin() as admin:
            response = await admin.post(
                "/api/v1/sandbox/admin/price", json={"assetPair": pair, "mid": mid}
            )
            assert response.status_code == 200, response.text
        self.polls.clear()
        await until(
            lambda: any(poll[pair].mid == Decimal(mid) for poll in self.polls if pair in poll)
        )

    def alerts(self) -> list[str]:
        return [e.message for e in self.events if e.kind == EventKind.PRICE_ALERT]

    async def polls_pass(self, count: int = 3) -> None:
        """``count`` more polls have been evaluated."""
        self.polls.clear()
        await until(lambda: len(self.polls) >= count)


@pytest.fixture
async def desk(app_sandbox: AppSandbox) -> AsyncIterator[Desk]:
    """A started session watching ETH/USD only, polling top of book every 20 ms; BTC/USD's
    mid is held at 90,000 (bid 89,995.50, ask 90,004.50) before it starts."""
    client, account = await logged_in(app_sandbox)
    session = TerminalSession(
        client,
        Environment(app_sandbox.url, account.user, account.account, sandbox=True),
        FeedIntervals(top_of_book=0.02, balances=60, order_book=60),
        watchlist=["ETH/USD"],
    )
    desk = Desk(app_sandbox, session, [], [])
    session.top_of_book.data.subscribe(desk.polls.append)
    session.events.subscribe(desk.events.append)
    async with app_sandbox.admin() as admin:
        await admin.post("/api/v1/sandbox/admin/price", json={"assetPair": PAIR, "mid": "90000"})
    await session.start()
    yield desk
    await session.stop()
    await client.aclose()


def alert(condition: Condition, level: str, repeat: Repeat, source: PriceSource) -> PriceAlert:
    return PriceAlert(new_alert_id(), PAIR, source, condition, Decimal(level), repeat)


async def test_a_once_alert_fires_once_and_again_only_when_rearmed(desk: Desk) -> None:
    await desk.polls_pass()
    assert all(set(poll) == {"ETH/USD"} for poll in desk.polls), "nothing extra without alerts"
    above = alert(Condition.ABOVE, "91000", Repeat.ONCE, PriceSource.BID)
    desk.session.price_alerts.put(above)
    await until(lambda: desk.polls and set(desk.polls[-1]) == {"ETH/USD", PAIR})
    await desk.polls_pass()
    assert desk.alerts() == []  # the bid, 89,995.50, is below 91,000

    await desk.pin(PAIR, "92000")  # bid 91,995.40
    await until(lambda: desk.alerts())
    assert desk.alerts() == [
        "Price alert: BTC/USD bid is at or above 91,000.00, now 91,995.40 USD per BTC "
        "(once: re-arm it in Alerts)"
    ]
    fired = desk.session.price_alerts.get(above.id)
    assert fired is not None and not fired.armed and fired.fired == 1
    assert fired.last_fired_price == Decimal("91995.40")
    # disarmed: BTC/USD is no longer asked for; back across and up again: silence
    await until(lambda: desk.polls and set(desk.polls[-1]) == {"ETH/USD"})
    desk.session.poll_also([PAIR])  # watch the price move, as a watched pair would
    await desk.pin(PAIR, "90000")
    await desk.pin(PAIR, "92000")
    await desk.polls_pass()
    assert len(desk.alerts()) == 1

    desk.session.price_alerts.rearm(above.id)  # the price is above: due at the next poll
    await until(lambda: len(desk.alerts()) == 2)
    again = desk.session.price_alerts.get(above.id)
    assert again is not None and again.fired == 2 and not again.armed
    await desk.polls_pass()
    assert len(desk.alerts()) == 2


async def test_an_every_time_alert_fires_on_each_new_crossing(desk: Desk) -> None:
    crossing = alert(Condition.CROSSING, "91000", Repeat.EVERY_TIME, PriceSource.MID)
    desk.session.price_alerts.put(crossing)
    await until(lambda: desk.polls and PAIR in desk.polls[-1])
    await desk.polls_pass()
    assert desk.alerts() == []  # the first price only tells the side
    for mid, count in [("92000", 1), ("93000", 1), ("90000", 2), ("91000", 2), ("92000", 3)]:
        await desk.pin(PAIR, mid)
        await desk.polls_pass()
        assert len(desk.alerts()) == count, (mid, desk.alerts())
    assert desk.alerts()[1] == (
        "Price alert: BTC/USD mid crossed below 91,000.00, now 90,000.00 USD per BTC"
    )
    kept = desk.session.price_alerts.get(crossing.id)
    assert kept is not None and kept.armed and kept.fired == 3


async def test_every_time_above_rearms_only_after_the_price_went_back(desk: Desk) -> None:
    above = alert(Condition.ABOVE, "90000", Repeat.EVERY_TIME, PriceSource.ASK)
    desk.session.price_alerts.put(above)  # the ask, 90,004.50, is already above: due now
    await until(lambda: len(desk.alerts()) == 1)
    await desk.pin(PAIR, "90100")
    await desk.polls_pass()
    assert len(desk.alerts()) == 1
    await desk.pin(PAIR, "89000")
    await desk.pin(PAIR, "90000")  # ask 90,004.50 again
    await until(lambda: len(desk.alerts()) == 2)


async def test_removing_the_last_alert_stops_asking_for_its_pair(desk: Desk) -> None:
    first = alert(Condition.BELOW, "50", Repeat.EVERY_TIME, PriceSource.BID)
    extra = alert(Condition.BELOW, "50000", Repeat.EVERY_TIME, PriceSource.BID)
    desk.session.price_alerts.put(first)
    desk.session.price_alerts.put(extra)
    await until(lambda: desk.polls and set(desk.polls[-1]) == {"ETH/USD", PAIR})
    desk.session.price_alerts.remove(extra.id)
    desk.session.price_alerts.remove(first.id)
    await until(lambda: desk.polls and set(desk.polls[-1]) == {"ETH/USD"})
    await desk.polls_pass()
    assert all(set(poll) == {"ETH/USD"} for poll in desk.polls)
    assert desk.alerts() == []
