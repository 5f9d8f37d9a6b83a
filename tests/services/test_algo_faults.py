"""Parents under faults, against a sandbox over loopback: answers dropped after the order was
committed must neither overfill a parent nor lose a child."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from app.api import ClientSettings, RetryPolicy, ServiceClient
from app.domain.records import Order
from app.services.algos.specs import AlgoSpec
from app.services.session import FeedIntervals
from tests.harness import ADMIN_TOKEN, SandboxProcess, new_client, open_terminal, until

pytestmark = pytest.mark.anyio

PAIR = "BTC/USD"
PARENTS = 20
CHILDREN_EACH = 50
CLIP = Decimal(10)  # USD per child


def set_faults(sandbox: SandboxProcess, rules: list[dict[str, object]], seed: int) -> int:
    """Set the rules; the number of requests they hit so far (0)."""
    with sandbox.admin() as admin:
        response = admin.post("/api/v1/sandbox/admin/faults", json={"faults": rules, "seed": seed})
        assert response.status_code == 200, response.text
    return 0


def hits(sandbox: SandboxProcess, kind: str) -> int:
    with sandbox.admin() as admin:
        report = admin.get("/api/v1/sandbox/admin/faults").json()
    return sum(1 for hit in report["hits"] if hit["kind"] == kind)


async def every_order(client: ServiceClient) -> list[Order]:
    """The account's whole order list, a page of 1,000 at a time, oldest first."""
    found: list[Order] = []
    cursor: int | None = None
    while True:
        page = await client.orders(max_orders=1000, ascending=True, start_at_ordering=cursor)
        fresh = [o for o in page if cursor is None or (o.ordering or 0) > cursor]
        found += fresh
        if len(page) < 1000 or not fresh:
            return found
        cursor = max(o.ordering or 0 for o in page)


@pytest.mark.slow
async def test_twenty_parents_fill_exactly_their_targets_with_a_fifth_of_answers_dropped(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    sandbox = sandbox_factory()
    assert sandbox.admin_token == ADMIN_TOKEN
    user = new_client(sandbox, {"USD": "1000000", "BTC": "0"})
    user.close()
    client = ServiceClient(
        ClientSettings(sandbox.url, read_timeout=10), retry=RetryPolicy(attempts=1)
    )
    terminal = await open_terminal(sandbox, user, client, FeedIntervals(0.1, 1, 5), [PAIR])
    desks = terminal.open_desks(":memory:")
    engine = terminal.algos
    assert engine is not None
    engine.resting_poll = 0.1
    engine.unknown_poll = 0.2
    desks.orders.settle_delays = (0.1, 0.2, 0.4, 0.8)
    desks.orders.session_delay = 0.5
    await terminal.start()
    try:
        await until(lambda: terminal.session.market.snapshot.top(PAIR) is not None)
        set_faults(
            sandbox,
            [{"kind": "drop_after_commit", "rate": 0.2, "method": "POST", "path": "/order/limit$"}],
            seed=25,
        )
        target = CLIP * CHILDREN_EACH
        spec = AlgoSpec(
            "clip", PAIR, "buy", target, display=CLIP, collar_bps=Decimal(200), child_seconds=30
        )
        parents = [engine.submit(spec) for _ in range(PARENTS)]
        await until(lambda: all(p.ended for p in parents), timeout=240)
        dropped = hits(sandbox, "drop_after_commit")

        # every parent exactly at its target: nothing over, nothing lost
        assert [p.filled for p in parents] == [target] * PARENTS
        assert [p.note for p in parents] == ["filled"] * PARENTS
        assert all(len(p.children) == CHILDREN_EACH for p in parents)
        assert dropped >= PARENTS * CHILDREN_EACH // 10  # the faults did fire (a fifth, seeded)

        # the server agrees: one order per child, each filled, sizes summing to the targets
        mine = {c.client_order_id: p.id for p in parents for c in p.children}
        server = [o for o in await every_order(client) if o.client_order_id in mine]
        assert len(server) == PARENTS * CHILDREN_EACH
        assert len({o.client_order_id for o in server}) == len(server)  # none sent twice
        assert {o.result.status for o in server} == {"filled"}
        by_parent: dict[str, Decimal] = {}
        for order in server:
            parent_id = mine[order.client_order_id]
            by_parent[parent_id] = by_parent.get(parent_id, Decimal(0)) + order.size.value
        assert by_parent == {p.id: target for p in parents}
    finally:
        await terminal.aclose()


@pytest.mark.slow
async def test_a_lost_answer_blocks_its_parent_until_the_server_shows_the_child(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    sandbox = sandbox_factory()
    user = new_client(sandbox, {"USD": "100000", "BTC": "0"})
    user.close()
    client = ServiceClient(
        ClientSettings(sandbox.url, read_timeout=10), retry=RetryPolicy(attempts=1)
    )
    terminal = await open_terminal(sandbox, user, client, FeedIntervals(0.1, 1, 5), [PAIR])
    desks = terminal.open_desks(":memory:")
    engine = terminal.algos
    assert engine is not None
    engine.unknown_poll = 0.05
    desks.orders.settle_delays = (0.05,) * 400  # looks up again and again while it cannot
    await terminal.start()
    try:
        await until(lambda: terminal.session.market.snapshot.top(PAIR) is not None)
        set_faults(
            sandbox,
            [
                {
                    "kind": "drop_after_commit",
                    "method": "POST",
                    "path": "/order/limit$",
                    "count": 1,
                },
                {"kind": "status", "status": 503, "method": "GET", "path": "/order/account/[^/]+$"},
            ],
            seed=1,
        )
        spec = AlgoSpec(
            "clip", PAIR, "buy", Decimal(300), display=Decimal(100), collar_bps=Decimal(200)
        )
        parent = engine.submit(spec)
        await until(lambda: parent.blocked)
        lost = parent.children[0]
        assert (lost.status, parent.room) == ("unknown", Decimal(200))
        # many look-ups fail meanwhile; the parent sends nothing while it cannot know
        await until(lambda: hits(sandbox, "status") >= 5)
        assert len(parent.children) == 1 and parent.blocked
        with sandbox.admin() as admin:
            assert admin.delete("/api/v1/sandbox/admin/faults").status_code == 200
        await until(lambda: parent.ended, timeout=30)
        assert parent.children[0].status == "filled"  # it had been placed: found, not re-sent
        assert (parent.filled, len(parent.children)) == (Decimal(300), 3)
        server = [o for o in await every_order(client) if o.client_order_id]
        assert sorted(o.size.value for o in server) == [Decimal(100)] * 3
    finally:
        await terminal.aclose()
