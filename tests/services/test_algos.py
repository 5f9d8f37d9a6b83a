"""The execution engine against the sandbox's app in this process: parents worked through the
real order desk and journal, children filled by the sandbox's own matcher."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from app.api import ClientSettings, ServiceClient
from app.domain.records import Order
from app.services.algos.engine import AlgoRefused, ExecutionEngine
from app.services.algos.parents import Parent
from app.services.algos.specs import AlgoSpec
from app.services.session import Environment, FeedIntervals
from app.services.terminal import Terminal
from tests.harness import AppAccount, AppSandbox, until

pytestmark = pytest.mark.anyio

PAIR = "BTC/USD"


@dataclass
class Desk:
    sandbox: AppSandbox
    user: AppAccount
    terminal: Terminal

    @property
    def engine(self) -> ExecutionEngine:
        assert self.terminal.algos is not None
        return self.terminal.algos

    async def pin(self, mid: str | None, pair: str = PAIR) -> None:
        async with self.sandbox.admin() as admin:
            response = await admin.post(
                "/api/v1/sandbox/admin/price", json={"assetPair": pair, "mid": mid}
            )
            assert response.status_code == 200, response.text

    async def server_orders(self) -> list[Order]:
        """Every order of the account, as the server lists them."""
        return await self.terminal.client.orders(max_orders=1000)

    async def fresh_book(self) -> None:
        """One more top of book than now: triggers have seen the latest price."""
        seen = self.terminal.session.market.snapshot.id
        await until(lambda: self.terminal.session.market.snapshot.id > seen + 1)


@asynccontextmanager
async def open_desk(
    sandbox: AppSandbox, journal: str | Path = ":memory:", user: AppAccount | None = None
) -> AsyncIterator[Desk]:
    user = user or await sandbox.new_client({"USD": "1000000", "BTC": "20"})
    client = ServiceClient(ClientSettings(sandbox.url), transport=sandbox.transport())
    await client.login(user.user, user.password, user.account)
    environment = Environment(sandbox.url, user.user, user.account, sandbox=True)
    terminal = Terminal.build(client, environment, FeedIntervals(0.05, 0.05, 0.5), [PAIR])
    terminal.open_desks(journal)
    assert terminal.algos is not None
    terminal.algos.resting_poll = 0.05
    await terminal.start()
    await until(lambda: terminal.session.market.snapshot.top(PAIR) is not None)
    try:
        yield Desk(sandbox, user, terminal)
    finally:
        await terminal.aclose()


def twap(amount: str, slices: int, seconds: str = "0.3", **extra: object) -> AlgoSpec:
    return AlgoSpec(
        "twap",
        PAIR,
        "buy",
        Decimal(amount),
        slices=slices,
        duration_seconds=Decimal(seconds),
        collar_bps=Decimal(50),
        **extra,  # type: ignore[arg-type]
    )


async def finished(parent: Parent) -> None:
    await until(lambda: parent.ended, timeout=30)


async def test_a_twap_fills_exactly_its_target_in_its_slices(app_sandbox: AppSandbox) -> None:
    async with open_desk(app_sandbox) as desk:
        parent = desk.engine.submit(twap("1000", 4))
        await finished(parent)
        assert (parent.state, parent.note) == ("done", "filled")
        assert parent.filled == Decimal(1000)
        assert [child.size for child in parent.children] == [Decimal(250)] * 4
        assert all(child.status == "filled" for child in parent.children)
        mine = {child.client_order_id for child in parent.children}
        sent = [o for o in await desk.server_orders() if o.client_order_id in mine]
        assert len(sent) == 4 and {o.result.status for o in sent} == {"filled"}
        assert sum(o.size.value for o in sent) == Decimal(1000)
        assert parent.received > 0 and parent.average_price() is not None
        assert parent.arrival_mid is not None and parent.slippage_bps() is not None


async def test_a_clip_sends_the_next_only_after_the_last_is_known(
    app_sandbox: AppSandbox,
) -> None:
    async with open_desk(app_sandbox) as desk:
        spec = AlgoSpec("clip", PAIR, "sell", Decimal("0.7"), display=Decimal("0.25"))
        parent = desk.engine.submit(spec)
        await finished(parent)
        assert [c.size for c in parent.children] == [
            Decimal("0.25"),
            Decimal("0.25"),
            Decimal("0.2"),
        ]
        assert parent.filled == Decimal("0.7")
        # one at a time: each child was decided after the one before it had filled
        assert [c.sent_at for c in parent.children] == sorted(c.sent_at for c in parent.children)


async def test_a_sell_stop_fires_when_the_bid_crosses_and_never_before(
    app_sandbox: AppSandbox,
) -> None:
    async with open_desk(app_sandbox) as desk:
        await desk.pin("90000")
        await desk.fresh_book()
        bid = desk.terminal.session.market.snapshot.tops[PAIR].bid
        spec = AlgoSpec("stop", PAIR, "sell", Decimal("0.1"), trigger=bid - Decimal(500))
        parent = desk.engine.submit(spec)
        assert parent.state == "armed"
        await desk.pin("89700")  # lower, not through the trigger
        await desk.fresh_book()
        await desk.fresh_book()
        assert (parent.state, parent.children) == ("armed", [])
        await desk.pin("89000")
        await finished(parent)
        assert parent.fired and parent.filled == Decimal("0.1")
        assert parent.children[0].limit < bid - Decimal(500)  # at the touch less the collar


async def test_a_bracket_arms_its_exits_for_the_filled_amount_only(
    app_sandbox: AppSandbox,
) -> None:
    async with open_desk(app_sandbox) as desk:
        await desk.pin("90000")
        await desk.fresh_book()
        spec = AlgoSpec(
            "bracket",
            PAIR,
            "buy",
            Decimal("9000"),
            take_profit=Decimal("95000"),
            stop_loss=Decimal("85000"),
        )
        entry = desk.engine.submit(spec)
        await finished(entry)
        exits = [p for p in desk.engine.parents.values() if p.linked == entry.id]
        assert sorted(p.spec.kind for p in exits) == ["stop", "take_profit"]
        assert all(p.spec.amount == entry.received and p.spec.side == "sell" for p in exits)
        assert all(p.state == "armed" for p in exits)
        await desk.pin("96000")  # the take-profit fires; the stop stands down
        take = next(p for p in exits if p.spec.kind == "take_profit")
        stop = next(p for p in exits if p.spec.kind == "stop")
        await finished(take)
        assert take.filled == entry.received
        assert stop.state == "done" and stop.children == [] and "partner" in stop.note


async def test_a_spec_no_algo_could_work_is_refused_in_words(app_sandbox: AppSandbox) -> None:
    async with open_desk(app_sandbox) as desk:
        with pytest.raises(AlgoRefused, match="display size"):
            desk.engine.submit(AlgoSpec("clip", PAIR, "buy", Decimal(100)))
        with pytest.raises(AlgoRefused, match="greater than zero"):
            desk.engine.submit(twap("0", 3))
        assert desk.engine.parents == {}
