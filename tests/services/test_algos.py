"""The execution engine against the sandbox's app in this process: parents worked through the
real order desk and journal, children filled by the sandbox's own matcher."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from app.api import ClientSettings, ServiceClient
from app.domain import utc_now
from app.domain.records import Order
from app.sandbox.config import CreditHours
from app.services.algos.engine import AlgoRefused, ExecutionEngine
from app.services.algos.parents import Parent
from app.services.algos.plans import Moment, Wait, decide, next_try
from app.services.algos.specs import AlgoSpec
from app.services.log_events import EventKind, LogEvent
from app.services.risk import RiskLimits, RiskRefused
from app.services.session import Environment, FeedIntervals
from app.services.terminal import Terminal
from app.services.ticket import TicketError
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


@pytest.mark.slow
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


@pytest.mark.slow
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
        assert (parent.state, parent.children) == ("armed", ())
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
        assert stop.state == "done" and stop.children == () and "partner" in stop.note


async def test_a_spec_no_algo_could_work_is_refused_in_words(app_sandbox: AppSandbox) -> None:
    async with open_desk(app_sandbox) as desk:
        with pytest.raises(AlgoRefused, match="display size"):
            desk.engine.submit(AlgoSpec("clip", PAIR, "buy", Decimal(100)))
        with pytest.raises(AlgoRefused, match="greater than zero"):
            desk.engine.submit(twap("0", 3))
        assert desk.engine.parents == {}


@pytest.mark.slow
async def test_an_order_refused_for_credit_is_sent_again_when_credit_opens() -> None:
    async with AppSandbox(credit_hours=CreditHours.parse("never")) as sandbox:
        user = await sandbox.new_client({"USD": "0", "BTC": "0"}, {"USD": "-50000"})
        async with open_desk(sandbox, user=user) as desk:
            deadline = desk.engine.server_now() + timedelta(minutes=5)
            spec = AlgoSpec(
                "credit_retry",
                PAIR,
                "buy",
                Decimal(1000),
                collar_bps=Decimal(50),
                deadline=deadline,
                retry_seconds=1,
            )
            parent = desk.engine.submit(spec)
            await until(lambda: any(c.status == "empty" for c in parent.children))
            assert parent.children[0].detail.startswith("Credit Not Available")
            assert parent.live  # refused for credit: waiting for the window, not paused
            async with sandbox.admin() as admin:
                response = await admin.post(
                    "/api/v1/sandbox/admin/credit-hours", json={"hours": "always"}
                )
                assert response.status_code == 200, response.text
            await finished(parent)
            assert (parent.note, parent.filled) == ("filled", Decimal(1000))
            assert [c.status for c in parent.children][-1] == "filled"


async def test_a_refusal_that_names_the_credit_window_waits_for_its_opening() -> None:
    tomorrow = (utc_now() + timedelta(days=1)).strftime("%a")
    hours = f"{tomorrow}-{tomorrow} 09:00-17:00 UTC"
    async with AppSandbox(credit_hours=CreditHours.parse(hours)) as sandbox:
        user = await sandbox.new_client({"USD": "0", "BTC": "0"}, {"USD": "-50000"})
        async with open_desk(sandbox, user=user) as desk:
            spec = AlgoSpec(
                "credit_retry",
                PAIR,
                "buy",
                Decimal(1000),
                deadline=desk.engine.server_now() + timedelta(days=3),
                retry_seconds=1,
            )
            parent = desk.engine.submit(spec)
            await until(lambda: any(c.status == "empty" for c in parent.children))
            refused = parent.children[0]
            opening = datetime.combine((utc_now() + timedelta(days=1)).date(), time(9), tzinfo=UTC)
            assert next_try(spec, refused.detail, refused.sent_at) == opening
            decision = decide(parent, Moment(None, desk.engine.server_now()))
            assert isinstance(decision, Wait) and "credit window" in decision.why
            assert decision.seconds is not None and decision.seconds > 3600
            assert len(parent.children) == 1  # no probing while the window is known closed


@pytest.mark.slow
async def test_after_a_quit_parents_come_back_paused_with_what_the_server_filled(
    app_sandbox: AppSandbox, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.db"
    user = await app_sandbox.new_client({"USD": "1000000", "BTC": "20"})
    async with open_desk(app_sandbox, journal, user) as desk:
        parent = desk.engine.submit(twap("1200", 12, seconds="6"))
        stop = desk.engine.submit(
            AlgoSpec("stop", PAIR, "sell", Decimal("0.1"), trigger=Decimal(1))
        )
        await until(lambda: sum(c.status == "filled" for c in parent.children) >= 2)
        ids = {c.client_order_id for c in parent.children}
    assert (tmp_path / "algos.db").stat().st_mode & 0o777 == 0o600

    async with open_desk(app_sandbox, journal, user) as desk:
        await until(lambda: parent.id in desk.engine.parents)
        back = desk.engine.parents[parent.id]
        assert back.state == "paused" and "restart" in back.note
        server = [o for o in await desk.server_orders() if o.client_order_id in ids]
        on_server = sum((o.size.value for o in server if o.result.status == "filled"), Decimal(0))
        assert back.filled == on_server and Decimal(0) < back.filled < Decimal(1200)
        assert {c.client_order_id for c in back.children} == ids
        armed = desk.engine.parents[stop.id]
        assert armed.state == "disarmed" and "re-arm" in armed.note
        desk.engine.resume(back.id)
        await finished(back)
        assert back.filled == Decimal(1200)  # the rest, and not a unit more


async def test_a_trailing_stop_follows_the_best_price_and_fires_on_the_trail(
    app_sandbox: AppSandbox,
) -> None:
    async with open_desk(app_sandbox) as desk:
        await desk.pin("90000")
        await desk.fresh_book()
        spec = AlgoSpec(
            "trailing_stop", PAIR, "sell", Decimal("0.1"), trail_bps=Decimal(100), trigger_ref="mid"
        )
        parent = desk.engine.submit(spec)
        await until(lambda: parent.best == Decimal(90000))
        await desk.pin("92000")
        await until(lambda: parent.best == Decimal(92000))
        await desk.pin("91200")  # 0.87 % off the best: inside the 1 % trail
        await desk.fresh_book()
        await desk.fresh_book()
        assert parent.state == "armed" and parent.children == ()
        await desk.pin("91000")  # 1.09 % off: through it
        await finished(parent)
        assert parent.fired and parent.filled == Decimal("0.1")


async def test_a_parent_is_announced_once_not_once_per_child(app_sandbox: AppSandbox) -> None:
    async with open_desk(app_sandbox) as desk:
        events: list[LogEvent] = []
        desk.terminal.session.events.subscribe(events.append)
        parent = desk.engine.submit(twap("300", 3))
        await finished(parent)
        fills = [e for e in events if e.kind is EventKind.FILL]
        assert len(fills) == 1 and parent.id in fills[0].message
        assert "average fill price" in fills[0].message
        assert sum("Bought" in e.message for e in events) == 3  # each child still logged


async def test_no_child_is_priced_on_a_stale_book(app_sandbox: AppSandbox) -> None:
    async with open_desk(app_sandbox) as desk:
        session = desk.terminal.session
        await app_sandbox.faults({"kind": "status", "status": 503, "path": "topofbook$"})
        await until(lambda: session.top_of_book.snapshot().failures > 0)
        parent = desk.engine.submit(
            AlgoSpec("clip", PAIR, "buy", Decimal(100), display=Decimal(50))
        )
        moment = desk.engine._moment(parent)  # what its next decision reads
        assert moment.top is None and session.market.snapshot.top(PAIR) is not None
        assert decide(parent, moment) == Wait(None, f"no fresh price for {PAIR}")
        assert parent.children == ()
        await app_sandbox.clear_faults()
        await finished(parent)
        assert parent.filled == Decimal(100)


@pytest.mark.slow
async def test_a_parent_is_worked_by_one_terminal_process_at_a_time(
    app_sandbox: AppSandbox, tmp_path: Path
) -> None:
    """Two terminals on one store (the window and ``tradeterm algo``): the one working a
    parent holds it; the other shows it, cannot resume, pause or re-state it, and takes it up
    — with the children the first sent — once the first has let it go."""
    journal = tmp_path / "journal.db"
    user = await app_sandbox.new_client({"USD": "1000000", "BTC": "20"})
    async with open_desk(app_sandbox, journal, user) as first:
        # long enough that a busy machine opens the second terminal while the first works it
        parent = first.engine.submit(twap("900", 9, seconds="16"))
        await until(lambda: any(c.status == "filled" for c in parent.children))
        async with open_desk(app_sandbox, journal, user) as second:
            await until(lambda: parent.id in second.engine.parents, timeout=30)
            shown = second.engine.parents[parent.id]
            assert shown.elsewhere and "another Tradeterm process" in shown.note
            for command in (second.engine.resume, second.engine.pause, second.engine.stop):
                with pytest.raises(AlgoRefused, match="another Tradeterm process"):
                    command(parent.id)
            assert parent.live  # the first goes on working it
            first.engine.pause(parent.id)
            await until(lambda: not second.engine.store.worked_elsewhere(parent.id))
            sent_by_first = {c.client_order_id for c in parent.children}
            second.engine.resume(parent.id)
            assert sent_by_first <= {c.client_order_id for c in shown.children}
            await until(lambda: shown.ended, timeout=120)
            assert shown.filled == Decimal(900)  # the rest, and not a unit more
            first.engine.resume(parent.id)  # takes up what the store says: done, nothing sent
            assert (parent.state, parent.live) == ("done", False)
            assert len(parent.children) == len(shown.children)


async def test_the_kill_switch_stops_every_send_in_the_turn_it_is_pressed(
    app_sandbox: AppSandbox,
) -> None:
    async with open_desk(app_sandbox) as desk:
        assert desk.terminal.desks is not None
        risk = desk.terminal.desks.risk
        parents = [
            desk.engine.submit(AlgoSpec("clip", PAIR, "buy", Decimal(5000), display=Decimal(10)))
            for _ in range(5)
        ]
        stop = desk.engine.submit(
            AlgoSpec("stop", PAIR, "sell", Decimal("0.1"), trigger=Decimal(1))
        )
        await until(lambda: all(len(p.children) >= 2 for p in parents))
        risk.halt("pressed in a test")
        # in the same turn: nothing live, the stop disarmed
        assert [p.state for p in parents] == ["paused"] * 5
        assert stop.state == "disarmed" and "trading halted" in stop.note
        sent = {p.id: len(p.children) for p in parents}
        await desk.fresh_book()
        await desk.fresh_book()
        assert {p.id: len(p.children) for p in parents} == sent  # not one child more
        assert all(not c.open for p in parents for c in p.children)  # what was out, ended
        with pytest.raises(AlgoRefused, match="kill switch"):
            desk.engine.resume(parents[0].id)
        with pytest.raises(TicketError, match="halted"):
            desk.engine.submit(AlgoSpec("clip", PAIR, "buy", Decimal(10), display=Decimal(10)))
        risk.resume()
        desk.engine.resume(parents[0].id)
        await until(lambda: len(parents[0].children) > sent[parents[0].id])


async def test_the_open_algo_orders_limit_refuses_by_its_name(app_sandbox: AppSandbox) -> None:
    async with open_desk(app_sandbox) as desk:
        assert desk.terminal.desks is not None
        desk.terminal.desks.risk.limits = RiskLimits(max_open_parents=2)
        for _ in range(2):
            desk.engine.submit(AlgoSpec("stop", PAIR, "sell", Decimal("0.1"), trigger=Decimal(1)))
        with pytest.raises(RiskRefused, match="max open") as refused:
            desk.engine.submit(AlgoSpec("stop", PAIR, "sell", Decimal("0.1"), trigger=Decimal(1)))
        assert refused.value.limit == "max_open_parents"
        assert len(desk.engine.parents) == 2


@pytest.mark.slow
async def test_a_child_the_store_lost_is_found_in_the_journal_at_restart(
    app_sandbox: AppSandbox, tmp_path: Path
) -> None:
    """The store is not synced on every commit (the journal is, before each send): a child
    row an OS crash took is given back by the journal, whose clientOrderIds name the parent."""
    journal = tmp_path / "journal.db"
    user = await app_sandbox.new_client({"USD": "1000000", "BTC": "20"})
    async with open_desk(app_sandbox, journal, user) as desk:
        parent = desk.engine.submit(twap("400", 4, seconds="0.3"))
        await finished(parent)
        lost = parent.children[-1].client_order_id
        assert lost.startswith(f"tt-{parent.id}-")
    with sqlite3.connect(tmp_path / "algos.db") as db:
        db.execute("DELETE FROM children WHERE client_order_id = ?", (lost,))
    async with open_desk(app_sandbox, journal, user) as desk:
        await until(lambda: parent.id in desk.engine.parents)
        back = desk.engine.parents[parent.id]
        assert lost in {c.client_order_id for c in back.children}
        assert back.filled == Decimal(400) and back.state == "done"


@pytest.mark.slow
async def test_a_restore_that_comes_after_a_submit_leaves_the_worked_parent_alone(
    app_sandbox: AppSandbox, tmp_path: Path
) -> None:
    """The start-up restore runs in the background: a parent the trader submitted before it
    came round is in the store already, and must not come back as a second, paused copy."""
    async with open_desk(app_sandbox, tmp_path / "journal.db") as desk:
        parent = desk.engine.submit(twap("400", 4, seconds="2"))
        await until(lambda: bool(parent.children))
        restored = await desk.engine.restore()
        assert parent.id not in {p.id for p in restored}
        assert desk.engine.parents[parent.id] is parent
        assert parent.state == "working" and "restart" not in parent.note
        stored = {p.id: p for p in desk.engine.store.parents(desk.engine.account)}
        assert stored[parent.id].state != "paused"
        await finished(parent)
        assert parent.filled == Decimal(400)
