"""The order feed and the ledger browser against the sandbox's app in this process (httpx's ASGI
transport): what each filter asks the server (seen by a recording transport in front of it), what
comes back, paging back with startAtOrdering, merging new orders on top, the journal's
clientOrderIds, and the ledger's running balance."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from app.api import ClientSettings, InsufficientFunds, ServiceClient
from app.domain import utc_now
from app.domain.records import Order
from app.services import ledger_browser
from app.services.journal import OrderJournal
from app.services.ledger_browser import LedgerBrowser, LedgerQuery, LedgerQueryError, group_rows
from app.services.order_feed import (
    OPEN_REFRESH_PER_POLL,
    OrderFeed,
    OrderFilter,
    OrdersSnapshot,
)
from app.services.session import Environment, TerminalSession
from tests.harness import AppAccount, AppSandbox, until
from tests.services.session_desk import SessionDesk

pytestmark = pytest.mark.anyio

D = Decimal
ORDERS_PATH = "/order/account/"
LEDGER_PATH = "/accounting/ledger/"


class Recorder(httpx.AsyncBaseTransport):
    """The transport into the sandbox, with every request written down before it is sent."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def queries(self, fragment: str) -> list[dict[str, str]]:
        return [dict(r.url.params) for r in self.requests if fragment in r.url.path]

    def clear(self) -> None:
        self.requests.clear()


@dataclass
class Desk(SessionDesk):
    session: TerminalSession
    recorder: Recorder
    journal: OrderJournal
    user: AppAccount

    def order_feed(self, **options: Any) -> OrderFeed:
        """The account's order list over the session's client, pairs and fills."""
        session = self.session
        account = session.environment.account
        return OrderFeed(
            session.client, account, session.pairs, session.fills, self.journal, **options
        )

    def ledger_browser(self) -> LedgerBrowser:
        return LedgerBrowser(self.client, self.session.pairs)


@asynccontextmanager
async def open_account(
    sandbox: AppSandbox, balances: dict[str, str] | None = None
) -> AsyncIterator[Desk]:
    user = await sandbox.new_client(balances or {"USD": "100000", "BTC": "2", "ETH": "10"})
    recorder = Recorder(sandbox.transport())
    client = ServiceClient(ClientSettings(sandbox.url), transport=recorder)
    await client.login(user.user, user.password, user.account)
    session = TerminalSession(client, Environment(sandbox.url, user.user, user.account, True))
    journal = OrderJournal(":memory:")
    try:
        yield Desk(session, recorder, journal, user)
    finally:
        journal.close()
        await client.aclose()


async def resting(client: ServiceClient, end_at: datetime | None = None) -> Order:
    """A USD→BTC limit order asking 1 BTC per USD: it rests (until ``end_at``)."""
    return await client.limit_order("USD", "BTC", D(10), limit=D(1), end_at=end_at)


class Updates:
    def __init__(self, feed: OrderFeed) -> None:
        self.seen: list[OrdersSnapshot] = []
        feed.updates.subscribe(self.seen.append)

    @property
    def last(self) -> OrdersSnapshot:
        return self.seen[-1]

    def ids(self) -> list[str]:
        return [row.order_id for row in self.last.rows]


# -- orders ---------------------------------------------------------------------------------------


async def test_order_feed_pages_back_with_start_at_ordering(app_sandbox: AppSandbox) -> None:
    async with open_account(app_sandbox) as d:
        placed = [await d.client.market_order("USD", "BTC", D(10 + i)) for i in range(5)]
        newest_first = [order.order_id for order in reversed(placed)]
        feed = d.order_feed(page_size=2)
        updates = Updates(feed)
        await feed.poller.poll_once()
        assert updates.ids() == newest_first[:2]
        assert updates.last.reset and updates.last.more
        orderings = [row.order.ordering for row in updates.last.rows]
        assert all(o is not None for o in orderings)
        d.recorder.clear()
        assert await feed.load_more() == 2
        assert updates.ids() == newest_first[:4]
        asked = d.recorder.queries(ORDERS_PATH)
        lowest = min(o for o in orderings if o is not None)
        assert asked == [{"max": "2", "startAtOrdering": str(lowest - 1)}]
        assert await feed.load_more() == 1
        assert updates.ids() == newest_first
        final = updates.last
        assert not final.more
        assert await feed.load_more() == 0  # nothing older: no request either
        assert len(d.recorder.queries(ORDERS_PATH)) == 2


async def test_each_order_filter_is_asked_of_the_server_and_checked_here(
    app_sandbox: AppSandbox,
) -> None:
    async with open_account(app_sandbox) as d:
        start = utc_now() - timedelta(seconds=1)
        market = await d.client.market_order("USD", "BTC", D(100))
        rests = await resting(d.client)
        eth = await d.client.market_order("ETH", "USD", D("0.5"))
        with pytest.raises(InsufficientFunds):
            await d.client.market_order("BTC", "USD", D(50))
        everything = await d.client.orders(10)
        rejected = next(o for o in everything if o.result.status == "rejected")
        feed = d.order_feed()
        updates = Updates(feed)
        cases: list[tuple[OrderFilter, list[dict[str, str]], list[str]]] = [
            (OrderFilter(), [{"max": "100"}], [rejected.order_id, eth.order_id, rests.order_id,
                                              market.order_id]),
            (OrderFilter(status="filled"), [{"max": "100", "status": "filled"}],
             [eth.order_id, market.order_id]),
            (OrderFilter(status="submitted"), [{"max": "100", "status": "submitted"}],
             [rests.order_id]),
            (OrderFilter(order_type="limit"), [{"max": "100", "type": "limit"}],
             [rests.order_id]),
            (OrderFilter(pair="BTC/USD"),
             [{"max": "100", "source": "BTC", "destination": "USD"},
              {"max": "100", "source": "USD", "destination": "BTC"}],
             [rejected.order_id, rests.order_id, market.order_id]),
            (OrderFilter(asset="ETH"),
             [{"max": "100", "source": "ETH"}, {"max": "100", "destination": "ETH"}],
             [eth.order_id]),
        ]  # fmt: skip
        for wanted, asked, shown in cases:
            feed.set_filter(wanted)
            assert updates.last.reset and updates.last.loading and not updates.last.rows
            d.recorder.clear()
            await feed.poller.poll_once()
            assert d.recorder.queries(ORDERS_PATH) == asked, wanted
            assert updates.ids() == shown, wanted
        # Time range: both bounds on the wire (end exclusive), orders outside left out.
        end = eth.submitted_at
        assert end is not None
        feed.set_filter(OrderFilter(start=start, end=end))
        d.recorder.clear()
        await feed.poller.poll_once()
        (asked_range,) = d.recorder.queries(ORDERS_PATH)
        assert asked_range["submittedAtStart"].startswith(start.strftime("%Y-%m-%dT%H:%M:%S"))
        assert asked_range["submittedAtEnd"].startswith(end.strftime("%Y-%m-%dT%H:%M:%S"))
        assert updates.ids() == [rests.order_id, market.order_id]
        with pytest.raises(ValueError, match="start of the time range"):
            feed.set_filter(OrderFilter(start=end, end=start))


async def test_local_check_keeps_what_a_server_ignoring_a_filter_sends() -> None:
    """The server may ignore a parameter (the seed documents only ``max``): the local check
    is the same filter."""
    now = utc_now()
    order = Order.parse(
        {
            "orderId": "o1",
            "size": "1 BTC",
            "source": "BTC",
            "destination": "USD",
            "type": "market",
            "submittedAt": "2026-01-02T03:04:05Z",
            "result": {"status": "filled"},
        },
        "order",
    )
    assert OrderFilter(pair="USD/BTC").matches(order)
    assert OrderFilter(asset="USD").matches(order)
    assert not OrderFilter(asset="ETH").matches(order)
    assert not OrderFilter(status="submitted").matches(order)
    assert not OrderFilter(order_type="limit").matches(order)
    assert not OrderFilter(start=now).matches(order)
    assert OrderFilter(end=now).matches(order)
    assert order.submitted_at is not None
    assert not OrderFilter(end=order.submitted_at).matches(order)  # end is exclusive


async def test_new_orders_go_on_top_and_a_fill_refreshes_at_once(app_sandbox: AppSandbox) -> None:
    async with open_account(app_sandbox) as d:
        first = await d.client.market_order("USD", "BTC", D(100))
        feed = d.order_feed(interval=60.0)
        updates = Updates(feed)
        feed.start()
        try:
            await until(lambda: updates.seen and not updates.last.loading)
            assert updates.ids() == [first.order_id]
            assert updates.last.new_ids == frozenset()  # the first load is not "new"
            before = updates.last
            second = await d.client.market_order("USD", "BTC", D(200))
            d.session.after_fill()  # what the order desk does after a fill
            await until(lambda: updates.ids()[:1] == [second.order_id], timeout=3.0)
            assert updates.ids() == [second.order_id, first.order_id]
            assert updates.last.new_ids == frozenset({second.order_id})
            assert not updates.last.reset
            # the unchanged order keeps its row (its pair terms and cells are not made again)
            assert updates.last.rows[1] is before.rows[0]
        finally:
            await feed.stop()


@pytest.mark.slow
async def test_a_resting_order_beyond_the_first_page_is_read_again(
    app_sandbox: AppSandbox,
) -> None:
    async with open_account(app_sandbox) as d:
        ends = utc_now() + timedelta(seconds=0.5)
        rests = await resting(d.client, ends)
        newer = await d.client.market_order("USD", "BTC", D(100))
        feed = d.order_feed(page_size=1)
        updates = Updates(feed)
        await feed.poller.poll_once()
        await feed.load_more()
        assert updates.ids() == [newer.order_id, rests.order_id]
        assert updates.last.rows[1].order.result.status == "submitted"

        async def canceled() -> bool:
            return (await d.client.order(rests.order_id)).result.status == "canceled"

        deadline = asyncio.get_running_loop().time() + 10
        while not await canceled():
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.1)
        d.recorder.clear()
        await feed.poller.poll_once()
        assert updates.last.rows[1].order.result.status == "canceled"
        paths = [r.url.path for r in d.recorder.requests]
        assert any(path.endswith(f"/order/{rests.order_id}") for path in paths)
        d.recorder.clear()  # no longer resting: not read again
        await feed.poller.poll_once()
        assert not any(r.url.path.endswith(f"/order/{rests.order_id}") for r in d.recorder.requests)


async def test_every_resting_order_beyond_the_first_page_comes_round(
    app_sandbox: AppSandbox,
) -> None:
    """More resting orders than a poll re-reads: the ones re-read longest ago go first, so a
    fill on any of them shows (the newest few used to be re-read every time, the rest never)."""
    async with open_account(app_sandbox) as d:
        rests = {(await resting(d.client)).order_id for _ in range(OPEN_REFRESH_PER_POLL + 2)}
        await d.client.market_order("USD", "BTC", D(100))
        feed = d.order_feed(page_size=1)
        Updates(feed)
        await feed.poller.poll_once()
        while await feed.load_more():
            pass

        async def reread() -> set[str]:
            d.recorder.clear()
            await feed.poller.poll_once()
            return {
                name for r in d.recorder.requests if (name := r.url.path.split("/")[-1]) in rests
            }

        first, second = await reread(), await reread()
        assert len(first) == len(second) == OPEN_REFRESH_PER_POLL
        assert first | second == rests


async def test_a_re_read_order_without_its_ordering_keeps_its_place(
    app_sandbox: AppSandbox,
) -> None:
    """The seed promises ``ordering`` in order queries, not in a single order's read: a re-read
    that lacks it keeps the ordering the list knew, so the order neither drops to the bottom
    nor makes the whole list sort again."""
    async with open_account(app_sandbox) as d:
        placed = [await resting(d.client) for _ in range(3)]
        feed = d.order_feed()
        updates = Updates(feed)
        await feed.poller.poll_once()
        newest_first = [order.order_id for order in reversed(placed)]
        assert updates.ids() == newest_first
        middle = await d.client.order(placed[1].order_id)
        assert middle.ordering is not None
        feed._state.put([dataclasses.replace(middle, ordering=None)])
        assert [row.order_id for row in feed.snapshot().rows] == newest_first
        assert feed.snapshot().rows[1].order.ordering == middle.ordering


async def test_client_order_id_comes_from_the_journal_when_the_server_does_not_echo_it(
    app_sandbox: AppSandbox,
) -> None:
    async with open_account(app_sandbox) as d:
        response = await d.user.post(
            "/api/v1/routing/account/{account}/order",
            {"type": "market", "source": "USD", "destination": "BTC", "size": "100"},
        )
        assert response.status_code == 200, response.text
        order_id = response.json()["order"]["orderId"]
        assert "clientOrderId" not in response.json()["order"]
        d.journal.record_intent("tt-journal-1", "market", d.user.account, {"size": "100"})
        d.journal.record_outcome("tt-journal-1", "filled", order_id=order_id)
        echoed = await d.client.market_order("USD", "BTC", D(5), client_order_id="tt-echoed")
        feed = d.order_feed()
        updates = Updates(feed)
        await feed.poller.poll_once()
        ids = {row.order_id: row.client_order_id for row in updates.last.rows}
        assert ids == {order_id: "tt-journal-1", echoed.order_id: "tt-echoed"}


# -- ledger ---------------------------------------------------------------------------------------


async def test_every_ledger_filter_is_asked_of_the_server(app_sandbox: AppSandbox) -> None:
    async with open_account(app_sandbox) as d:
        trade = await d.client.market_order("USD", "BTC", D(1000))
        browser = d.ledger_browser()
        snapshot = await browser.load(LedgerQuery())
        everything = await d.client.ledger(100)
        assert [row.entry for row in snapshot.rows] == everything
        trade_entries = [e for e in everything if e.transaction_id == trade.order_id]
        at = trade_entries[0].event_time
        cases: list[tuple[LedgerQuery, dict[str, str]]] = [
            (LedgerQuery(asset="BTC"), {"max": "100", "asset": "BTC"}),
            (LedgerQuery(event_type="trade"), {"max": "100", "type": "trade"}),
            (
                LedgerQuery(transaction_id=trade.order_id),
                {"max": "100", "transactionId": trade.order_id},
            ),
            (
                LedgerQuery(start=at),
                {"max": "100", "startTimeUtc": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")},
            ),
            (
                LedgerQuery(end=at),
                {"max": "100", "endTimeUtc": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")},
            ),
            (
                LedgerQuery(start_at_ordering=trade_entries[0].ordering - 1),
                {"max": "100", "startAtOrdering": str(trade_entries[0].ordering - 1)},
            ),
            (LedgerQuery(max_transactions=2), {"max": "2"}),
        ]
        expected_rows = {
            "asset": [e for e in everything if e.asset == "BTC"],
            "type": trade_entries,
            "transactionId": trade_entries,
            "startTimeUtc": trade_entries,
            "endTimeUtc": [e for e in everything if e.event_time < at],
            "startAtOrdering": [e for e in everything if e.ordering < trade_entries[0].ordering],
        }
        for query, asked in cases:
            d.recorder.clear()
            result = await browser.load(query)
            assert d.recorder.queries(LEDGER_PATH)[0] == asked, query
            name = next((key for key in asked if key != "max"), "")
            if name:
                assert [row.entry for row in result.rows] == expected_rows[name], name
        # max counts transactions: the trade's two legs come together as one.
        two = await browser.load(LedgerQuery(max_transactions=2))
        assert len({row.group for row in two.rows}) == 2
        assert [row.entry for row in two.rows][:2] == trade_entries
        with pytest.raises(LedgerQueryError) as caught:
            await browser.load(LedgerQuery(max_transactions=0))
        assert caught.value.field == "max"
        with pytest.raises(LedgerQueryError):
            await browser.load(LedgerQuery(start=at, end=at))


# Big ledgers are grouped as sliced jobs, a page added by "load more" on its own: 0 takes that
# path at any size.
@pytest.fixture(params=[ledger_browser.SLICED_ENTRIES, 0])
def sliced_above(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Each test runs with the usual threshold and with 0 (every ledger sliced)."""
    above: int = request.param
    monkeypatch.setattr(ledger_browser, "SLICED_ENTRIES", above)
    return above


async def test_ledger_pages_back_with_legs_together(
    app_sandbox: AppSandbox, sliced_above: int
) -> None:
    async with open_account(app_sandbox) as d:
        trades = [await d.client.market_order("USD", "BTC", D(100 + i)) for i in range(2)]
        everything = await d.client.ledger(100)  # 2 trades x 2 legs + 3 initial balances
        assert len(everything) == 7
        browser = d.ledger_browser()
        page = await browser.load(LedgerQuery(max_transactions=1))
        assert [row.entry.transaction_id for row in page.rows] == [trades[1].order_id] * 2
        assert [(row.position, row.size) for row in page.rows] == [(0, 2), (1, 2)]
        more = page.more
        assert more
        seen = list(page.rows)
        while more:
            before = seen[-1].entry.ordering
            d.recorder.clear()
            page = await browser.load_more()
            asked = d.recorder.queries(LEDGER_PATH)
            assert asked == [{"max": "1", "startAtOrdering": str(before - 1)}]
            seen, more = list(page.rows), page.more
        assert [row.entry for row in seen] == everything
        assert [row.group for row in seen] == [0, 0, 1, 1, 2, 3, 4]


async def test_running_balance_is_anchored_on_the_account(
    app_sandbox: AppSandbox, sliced_above: int
) -> None:
    async with open_account(app_sandbox) as d:
        for size in ("1000", "250.5", "13.37"):
            await d.client.market_order("USD", "BTC", D(size))
        await d.client.market_order("BTC", "USD", D("0.001"))
        holding = await app_sandbox.invariant(d.user.account)
        browser = d.ledger_browser()
        snapshot = await browser.load(LedgerQuery(asset="USD"))
        assert snapshot.balance_note == ""
        rows = snapshot.rows
        account = await d.client.account()
        usd = account.balances["USD"]
        assert rows[0].balance == usd.free + usd.locked
        for newer, older in itertools.pairwise(rows):
            assert newer.balance is not None
            assert older.balance == newer.balance - newer.entry.amount
        assert rows[-1].entry.event_type == "initialBalances"
        assert rows[-1].balance == D(100000)
        assert holding["assets"]["USD"]["holds"]  # the anchor's premise: free + locked = sum
        # An upper bound: the anchor subtracts the entries above it.
        bounded = await browser.load(
            LedgerQuery(asset="USD", start_at_ordering=rows[2].entry.ordering)
        )
        assert [(r.entry, r.balance) for r in bounded.rows] == [
            (r.entry, r.balance) for r in rows[2:]
        ]
        # Refresh after a new trade puts it on top and keeps the balances right.
        unbounded = await browser.load(LedgerQuery(asset="USD"))
        await d.client.market_order("USD", "BTC", D(7))
        refreshed = await browser.refresh()
        assert refreshed.added == 1
        assert refreshed.rows[0].entry.amount == D(-7)
        assert rows[0].balance is not None
        assert refreshed.rows[0].balance == rows[0].balance - D(7)
        assert [r.balance for r in refreshed.rows[1:]] == [r.balance for r in unbounded.rows]
        # No running balance across assets or with a type filter.
        # Paged back one transaction at a time, the balances walk on from page to page.
        page = await browser.load(LedgerQuery(asset="USD", max_transactions=1))
        while page.more:
            page = await browser.load_more()
        assert [(r.entry, r.balance) for r in page.rows] == [
            (r.entry, r.balance) for r in refreshed.rows
        ]
        assert (await browser.load(LedgerQuery())).rows[0].balance is None
        typed = await browser.load(LedgerQuery(asset="USD", event_type="trade"))
        assert typed.rows[0].balance is None and "type" in typed.balance_note


def test_group_rows_links_adjacent_legs_only() -> None:
    from app.domain.records import LedgerEntry

    def entry(ordering: int, tx: str, amount: str) -> LedgerEntry:
        return LedgerEntry(ordering, "a", tx, "USD", D(amount), "trade", "", utc_now())

    rows = group_rows([entry(9, "t9", "5"), entry(9, "t9", "-1"), entry(8, "t8", "2")], D(10))
    assert [(r.group, r.position, r.size, r.linked) for r in rows] == [
        (0, 0, 2, True),
        (0, 1, 2, True),
        (1, 0, 1, False),
    ]
    assert [r.balance for r in rows] == [D(10), D(5), D(6)]
