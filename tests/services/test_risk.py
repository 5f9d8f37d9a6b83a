"""Risk limits and the kill switch on the real desks (``TradingDesks.open``) over a loopback
sandbox: each limit refuses with its name and the figures, a refusal journals nothing and sends
nothing (the recorder transport and the sandbox's order list), the day's usage comes back from
the journal after a restart, and the kill switch stops orders and RFQ accepts until resumed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from app.api import ClientSettings, RetryPolicy, ServiceClient
from app.domain import Amount
from app.domain.order_request import OrderRequest
from app.services.desks import TradingDesks
from app.services.journal import Fact
from app.services.market import MarketSnapshot
from app.services.order_desk import OrderDesk
from app.services.rfq_desk import RiskBlock
from app.services.risk import (
    HALTED,
    LIMITS,
    RISK_NOTIONAL,
    RiskGate,
    RiskLimits,
    RiskRefused,
    RiskState,
    parse_positions,
)
from app.services.session import Environment, TerminalSession
from app.services.ticket import TicketError, TicketInput
from tests.harness import Recorder, SandboxProcess, new_client

pytestmark = pytest.mark.anyio

WATCH = ["BTC/USD", "ETH/USD", "ETH/BTC", "USDT/USD"]


@dataclass
class Rig:
    session: TerminalSession
    desks: TradingDesks
    recorder: Recorder
    journal_path: Path

    @property
    def risk(self) -> RiskGate:
        return self.desks.risk

    @property
    def orders(self) -> OrderDesk:
        return self.desks.orders

    def posted_orders(self) -> int:
        return len(self.recorder.posted("/order"))

    async def server_orders(self) -> int:
        return len(await self.session.client.orders())

    async def refresh(self) -> None:
        await self.session.balances.poll_once()
        await self.session.top_of_book.poll_once()

    async def restart(self, limits: RiskLimits | None = None) -> None:
        """Close the desks and open them again on the same journal (a terminal restart)."""
        await self.desks.close()
        self.desks = TradingDesks.open(self.session, self.journal_path, risk_limits=limits)


@asynccontextmanager
async def rig(
    sandbox: SandboxProcess,
    tmp_path: Path,
    limits: RiskLimits | None = None,
    balances: dict[str, str] | None = None,
) -> AsyncIterator[Rig]:
    user = new_client(sandbox, balances or {"USD": "100000", "BTC": "2"})
    user.close()
    recorder = Recorder()
    client = ServiceClient(
        ClientSettings(sandbox.url), retry=RetryPolicy(attempts=1), transport=recorder
    )
    await client.login(user.user, user.password, user.account)
    await client.service_time()  # the server's clock: the risk day is the server's
    env = Environment(sandbox.url, user.user, user.account, sandbox=True)
    session = TerminalSession(client, env, watchlist=WATCH)
    path = tmp_path / "journal.db"
    found = Rig(session, TradingDesks.open(session, path, risk_limits=limits), recorder, path)
    await found.refresh()
    try:
        yield found
    finally:
        await found.desks.close()
        await client.aclose()


def usd_buy(amount: str) -> TicketInput:
    """Buy BTC for ``amount`` USD at market: its notional is exactly ``amount`` USD."""
    return TicketInput("USD", "BTC", Decimal(amount))


async def refused(desk: OrderDesk, ticket: TicketInput) -> RiskRefused:
    with pytest.raises(RiskRefused) as caught:
        await desk.submit(ticket)
    return caught.value


def test_the_limits_table_names_every_field() -> None:
    """The UI and the messages read one table; every optional field of RiskLimits is in it."""
    names = [spec.name for spec in LIMITS]
    assert names == [
        "max_order_notional",
        "max_notional_per_day",
        "max_orders_per_minute",
        "max_position",
        "max_open_parents",
    ]
    assert len({spec.label for spec in LIMITS}) == len(LIMITS)
    with pytest.raises(ValueError, match="max order notional"):
        RiskLimits(max_order_notional=Decimal(0))
    assert parse_positions("btc: 20; ETH: 1,000") == {"BTC": Decimal(20), "ETH": Decimal(1000)}
    with pytest.raises(ValueError, match="not a number"):
        parse_positions("BTC: lots")


async def test_order_notional_refuses_journals_nothing_and_sends_nothing(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    limits = RiskLimits(max_order_notional=Decimal(100_000))
    async with rig(sandbox, tmp_path, limits) as r:
        assert r.orders.risk is r.risk and r.desks.rfq.risk is r.risk
        error = await refused(r.orders, usd_buy("120000"))
        assert isinstance(error, TicketError)  # the ticket shows it like any other refusal
        assert error.limit == "max_order_notional"
        assert error.message == (
            "Refused by the risk limit 'max order notional': this order is 120,000 USD, "
            "the limit is 100,000 USD"
        )
        assert r.desks.journal.entries() == []
        assert r.posted_orders() == 0
        assert await r.server_orders() == 0
        result = await r.orders.submit(usd_buy("1000"))  # within the limit: it goes
        assert result.status == "filled", result.message
        assert r.posted_orders() == 1 and await r.server_orders() == 1


async def test_an_order_that_cannot_be_valued_is_refused_never_guessed(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """SOL is not watched: no mid values it, so a notional limit cannot be checked."""
    limits = RiskLimits(max_order_notional=Decimal(1_000_000))
    async with rig(sandbox, tmp_path, limits, {"USD": "1000", "SOL": "10"}) as r:
        error = await refused(r.orders, TicketInput("SOL", "USD", Decimal(1)))
        assert error.limit == "max_order_notional"
        assert "cannot be known" in error.message and "SOL in USD" in error.message
        assert r.posted_orders() == 0 and r.desks.journal.entries() == []
        r.risk.limits = RiskLimits()  # no notional limit: nothing to value it for
        result = await r.orders.submit(TicketInput("SOL", "USD", Decimal(1)))
        assert result.status == "filled", result.message


async def test_notional_per_day_counts_sends_and_comes_back_after_a_restart(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    limits = RiskLimits(max_notional_per_day=Decimal(3000))
    async with rig(sandbox, tmp_path, limits, {"USD": "2500", "BTC": "1"}) as r:
        for _ in range(2):
            assert (await r.orders.submit(usd_buy("1000"))).status == "filled"
        # Within the day's limit but refused by the service (500 USD left): it does not count.
        rejected = await r.orders.submit(usd_buy("900"))
        assert rejected.status == "rejected", rejected.message
        error = await refused(r.orders, usd_buy("1500"))
        assert error.limit == "max_notional_per_day"
        day = r.session.client.clock.server_now().date().isoformat()
        assert error.message == (
            "Refused by the risk limit 'max notional per day': this order is 1,500 USD and "
            f"2,000 USD was sent on {day} (server day, UTC): 3,500 USD is above the limit of "
            "3,000 USD"
        )
        posted = r.posted_orders()
        assert posted == 3 and len(r.desks.journal.entries()) == 3

        await r.restart(limits)  # the usage is rebuilt from the journal ...
        await r.desks.risk.load_today()  # ... off the event loop, at start
        assert r.desks.risk._day is not None and r.desks.risk._day.totals == {"USD": 2000}
        assert r.desks.risk.used_today(r.session.market.snapshot) == Decimal(2000)
        error = await refused(r.desks.orders, usd_buy("1500"))
        assert "2,000 USD was sent" in error.message
        assert r.posted_orders() == posted
        # An order whose answer was lost in an earlier run counts: it may have executed.
        journal = r.desks.journal
        journal.record_intent("lost-1", "market", r.session.client.account_id, '{"size": "1"}')
        journal.record_outcome("lost-1", "unknown")
        # ... with the notional the gate wrote down when it was sent
        journal.record_facts([Fact("lost-1", RISK_NOTIONAL, {"amount": "600", "asset": "USD"})])
        await r.restart(limits)
        error = await refused(r.desks.orders, usd_buy("500"))
        assert "2,600 USD was sent" in error.message
        result = await r.desks.orders.submit(usd_buy("400"))  # 3,000: at the limit, not above
        assert result.status == "filled", result.message


async def test_orders_per_minute_on_an_injected_clock(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    now = [1000.0]
    async with rig(sandbox, tmp_path) as r:
        gate = RiskGate(
            RiskLimits(max_orders_per_minute=2),
            clock=r.session.client.clock,
            journal=r.desks.journal,
            monotonic=lambda: now[0],
        )
        desk = OrderDesk(r.session, r.desks.journal, risk=gate)
        for _ in range(2):
            assert (await desk.submit(usd_buy("100"))).status == "filled"
            now[0] += 10
        error = await refused(desk, usd_buy("100"))
        assert error.limit == "max_orders_per_minute"
        assert error.message == (
            "Refused by the risk limit 'max orders per minute': 2 orders sent in the last "
            "minute, the limit is 2 a minute; the next may go in 40 s"
        )
        assert r.posted_orders() == 2 and len(r.desks.journal.entries()) == 2
        now[0] += 40  # the first send is a minute old
        assert (await desk.submit(usd_buy("100"))).status == "filled"
        desk.close()


async def test_max_position_limits_what_is_bought_never_what_is_sold(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    limits = RiskLimits(max_position={"BTC": Decimal("2.1")})
    async with rig(sandbox, tmp_path, limits, {"USD": "100000", "BTC": "2"}) as r:
        error = await refused(r.orders, usd_buy("20000"))  # about 0.2 BTC: 2.2 held
        assert error.limit == "max_position"
        assert error.message.startswith(
            "Refused by the risk limit 'max position': BTC held would be up to 2.2"
        )
        assert "(2 held + 0.2" in error.message and "the limit is 2.1 BTC" in error.message
        assert r.posted_orders() == 0
        assert (await r.orders.submit(usd_buy("1000"))).status == "filled"  # about 0.01 BTC
        await r.refresh()
        r.risk.limits = RiskLimits(max_position={"BTC": Decimal(1)})  # already above it
        sold = await r.orders.submit(TicketInput("BTC", "USD", Decimal("0.1")))
        assert sold.status == "filled", sold.message  # selling is never refused


async def test_kill_switch_stops_orders_and_accepts_until_resumed(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    async with rig(sandbox, tmp_path) as r:
        states: list[RiskState] = []
        r.risk.changed.subscribe(states.append)
        await r.desks.rfq.request("BTC/USD", Amount(Decimal("0.01"), "BTC"))
        before = len(r.recorder.requests)
        r.risk.halt("desk review")
        assert r.risk.halted  # synchronous: the next send is refused
        r.risk.halt("a second press")  # idempotent: still halted, the first reason kept
        assert [(s.halted, s.why) for s in states] == [(True, "desk review")]
        error = await refused(r.orders, usd_buy("100"))
        assert error.limit == HALTED
        assert error.message == (
            "Trading is halted by the kill switch (desk review): re-enable trading to send"
        )
        with pytest.raises(RiskBlock) as accept:
            await r.desks.rfq.accept("buy")
        assert accept.value.limit == HALTED and "kill switch" in accept.value.reason
        # A program's orders (the execution engine) and new algo orders stop too.
        ticket = usd_buy("100")
        with pytest.raises(RiskRefused):
            await r.orders.place(ticket, ticket.request("algo-child-1"))
        with pytest.raises(RiskRefused):
            r.risk.admit_parent(0)
        assert r.desks.journal.entries() == []
        assert [q for q in r.recorder.requests[before:] if q.method == "POST"] == []
        assert await r.server_orders() == 0
        r.risk.resume()
        assert [s.halted for s in states] == [True, False]
        accepted = await r.desks.rfq.accept("buy")
        assert accepted.status == "filled", accepted.message
        assert (await r.orders.submit(usd_buy("100"))).status == "filled"


async def test_accepts_count_against_the_notional_limits(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    async with rig(sandbox, tmp_path, RiskLimits(max_order_notional=Decimal(500))) as r:
        await r.desks.rfq.request("BTC/USD", Amount(Decimal("0.01"), "BTC"))  # about 900 USD
        with pytest.raises(RiskBlock) as accept:
            await r.desks.rfq.accept("buy")
        assert accept.value.limit == "max_order_notional"
        assert "'max order notional': this order is" in accept.value.reason
        assert r.desks.journal.entries() == []


def test_open_parents_and_the_state_published() -> None:
    class Clock:
        offset = timedelta(0)

        def server_now(self) -> datetime:
            return datetime(2026, 1, 2, 12, 0, tzinfo=UTC)

    gate = RiskGate(RiskLimits(max_open_parents=2), clock=Clock())
    states: list[RiskState] = []
    gate.changed.subscribe(states.append)
    gate.admit_parent(1)  # the second one working: allowed
    with pytest.raises(RiskRefused) as caught:
        gate.admit_parent(2)
    assert caught.value.limit == "max_open_parents"
    assert caught.value.message == (
        "Refused by the risk limit 'max open algo orders': 2 algo orders already working, "
        "the limit is 2"
    )
    gate.limits = RiskLimits()
    gate.admit_parent(5)
    assert [s.limits for s in states] == [RiskLimits()]
    request = OrderRequest("market", "BTC", "USD", Decimal(1), "x")
    gate.limits = RiskLimits(max_notional_per_day=Decimal(10))
    with pytest.raises(RiskRefused, match="cannot be known"):  # an empty market values nothing
        gate.admit(TicketInput("BTC", "USD", Decimal(1)), request, MarketSnapshot())
