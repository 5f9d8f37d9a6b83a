"""The positions service against the sandbox's app in this process (httpx's ASGI transport), with
prices that stay put (one tick an hour) unless a test moves the simulated market on: scripted
buys and sells whose fills the test reads from the orders, a paper top-up and a withdrawal, the
expected figures computed by hand; the cache across restarts and when it disagrees; the CSV."""

from __future__ import annotations

import csv
import re
import sqlite3
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal, localcontext
from pathlib import Path

import pytest

from app.api import ClientSettings, ServiceClient
from app.domain import Amount, format_decimal, utc_now
from app.domain.money import AssetPair, divide
from app.domain.positions import BOOK_CONTEXT, CostMethod
from app.domain.records import Balances, BlockchainInstruction, LedgerEntry, TopOfBook
from app.services.events import Topic
from app.services.market import Market
from app.services.positions import (
    PositionsCache,
    PositionsReport,
    PositionsService,
    csv_rows,
    service_key,
    write_csv,
)
from app.services.session import Environment, TerminalSession
from tests.harness import AppAccount, AppSandbox, body
from tests.helpers.positions import pro_rata

pytestmark = pytest.mark.anyio

D = Decimal
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"


@pytest.fixture
async def still() -> AsyncIterator[AppSandbox]:
    """A sandbox whose prices move only when a test moves them (``move_prices``)."""
    async with AppSandbox(tick_seconds=3600) as sandbox:
        yield sandbox


@pytest.fixture
def cache(tmp_path: Path) -> PositionsCache:
    """The positions cache in the test's folder (``positions.db``), as most tests open it."""
    return PositionsCache(tmp_path / "positions.db")


def move_prices(sandbox: AppSandbox, steps: int = 200) -> None:
    """Run the sandbox's price simulation ``steps`` ticks on, as time would."""
    market = sandbox.state.market
    for _ in range(steps):
        market._step()
    market._quotes.clear()


@dataclass
class Desk:
    user: AppAccount
    client: ServiceClient
    session: TerminalSession

    def positions(
        self, cache: PositionsCache, method: CostMethod, page_size: int = 10_000
    ) -> PositionsService:
        return PositionsService(
            self.client,
            cache,
            service=service_key(self.session.environment),
            account=self.session.environment.account,
            pairs=self.session.pairs,
            method=method,
            page_size=page_size,
        )

    async def mid(self, pair: str = "BTC/USD") -> Decimal:
        return (await self.client.top_of_book([pair]))[pair].mid

    async def top_up(self, amount: str) -> str:
        response = await self.user.post(TOP_UP, {"amount": amount})
        assert response.status_code == 200, response.text
        transaction: str = body(response)["deposit"]["transactionId"]
        return transaction

    async def withdraw_btc(self, amount: str) -> None:
        found = [
            i
            for i in await self.client.withdraw_instructions()
            if isinstance(i, BlockchainInstruction) and i.asset == "BTC"
        ]
        await self.client.withdraw_blockchain(
            Amount(D(amount), "BTC"), found[0].network_type, found[0].address
        )


@asynccontextmanager
async def open_desk(sandbox: AppSandbox, balances: dict[str, str]) -> AsyncIterator[Desk]:
    user = await sandbox.new_client(balances)
    client = ServiceClient(ClientSettings(sandbox.url), transport=sandbox.transport())
    await client.login(user.user, user.password, user.account)
    session = TerminalSession(client, Environment(sandbox.url, user.user, user.account, True))
    try:
        yield Desk(user, client, session)
    finally:
        await client.aclose()


async def test_scripted_trades_deposit_and_withdrawal_by_hand(
    still: AppSandbox, cache: PositionsCache
) -> None:
    async with open_desk(still, {"USD": "100000", "BTC": "1"}) as d:
        average = d.positions(cache, CostMethod.AVERAGE)
        fifo = d.positions(cache, CostMethod.FIFO)
        start = utc_now() - timedelta(seconds=1)
        m0 = await d.mid()
        await average.refresh()  # the initial balance's first mark: m0

        buy1 = await d.client.market_order("USD", "BTC", D(20000))
        buy2 = await d.client.limit_order("USD", "BTC", D(10000), limit=D("0.000001"))
        sell = await d.client.market_order("BTC", "USD", D("0.5"))
        assert buy1.filled and buy2.filled and sell.filled
        assert buy1.result.total and buy2.result.total and sell.result.total
        got1, got2 = buy1.result.total.value, buy2.result.total.value
        proceeds = sell.result.total.value
        deposit = await d.top_up("0.25 BTC")
        await average.refresh()  # the deposit's first mark: still m0
        move_prices(still)
        m1 = await d.mid()
        assert m1 != m0
        await d.withdraw_btc("0.1")
        await fifo.refresh()  # the withdrawal's first mark: m1
        report_a = await average.refresh(today=start, since=start + timedelta(days=1))
        report_f = await fifo.refresh(today=start)

        with localcontext(BOOK_CONTEXT):  # the hand computation, with no rounding of its own
            held = D(1) + got1 + got2 - D("0.5") + D("0.25") - D("0.1")
            # FIFO: the sale and the withdrawal take from the initial lot (1 BTC at m0)
            fifo_basis = D("0.4") * m0 + D(20000) + D(10000) + D("0.25") * m0
            fifo_realised = (proceeds - D("0.5") * m0) + (D("0.1") * m1 - D("0.1") * m0)
            # average cost: one pool, each disposal takes its pro-rata share of the basis
            pool, basis = D(1) + got1 + got2, m0 + D(30000)
            taken = pro_rata(basis, D("0.5"), pool)
            realised = proceeds - taken
            pool, basis = pool - D("0.5") + D("0.25"), basis - taken + D("0.25") * m0
            taken = pro_rata(basis, D("0.1"), pool)
            realised += D("0.1") * m1 - taken
            pool, basis = pool - D("0.1"), basis - taken
            worth = held * m1
            unrealised_f, unrealised_a = worth - fifo_basis, worth - basis
        account = await d.client.account()
        assert held == pool == account.balances["BTC"].free + account.balances["BTC"].locked

        btc = report_f.table.row("BTC")
        assert btc.quantity == held
        assert btc.cost_basis == fifo_basis
        assert btc.average_cost == divide(fifo_basis, held)
        assert btc.realised_total == btc.realised_today == fifo_realised
        assert btc.mark == m1 and btc.market_value == worth
        assert btc.unrealised == unrealised_f

        btc = report_a.table.row("BTC")
        assert (btc.quantity, btc.cost_basis, btc.realised_total) == (held, basis, realised)
        assert btc.average_cost == divide(basis, held)
        assert btc.unrealised == unrealised_a
        assert btc.realised_today == realised and btc.realised_since == 0
        # the method is a setting: switched, the same entries give FIFO's figures
        average.set_method(CostMethod.FIFO)
        assert average.report(today=start).table == report_f.table
        average.set_method(CostMethod.AVERAGE)

        # USD moves at face value: no P&L; the totals add the rows up
        usd = report_a.table.row("USD")
        assert usd.quantity == D(100000) - D(30000) + proceeds
        assert usd.unrealised == usd.realised_total == 0
        totals = report_a.table.totals
        assert totals.market_value == usd.quantity + worth
        assert totals.unrealised == btc.unrealised and totals.realised_total == realised
        assert btc.share == divide(worth, totals.market_value)

        # what each non-trade entry entered at, and when the terminal first saw it
        firsts = {key.transaction_id: v for key, v in report_a.values.items()}
        assert firsts[f"initial-{d.user.account}-BTC"].unit == m0
        assert firsts[deposit].unit == m0 and firsts[deposit].source == "first mark"
        assert sorted(v.unit for v in report_a.values.values()) == sorted([m0, m0, m1])
        assert report_a.unpriced == ()
        cache.close()


async def test_a_cost_the_trader_enters_replaces_the_first_mark(
    still: AppSandbox, tmp_path: Path, cache: PositionsCache
) -> None:
    async with open_desk(still, {"USD": "1000"}) as d:
        service = d.positions(cache, CostMethod.FIFO)
        deposit = await d.top_up("2 BTC")
        m0 = await d.mid()
        assert (await service.refresh()).table.row("BTC").cost_basis == 2 * m0
        service.set_cost(deposit, "BTC", D("45000.5"))
        report = service.report()
        assert report.table.row("BTC").cost_basis == D("90001.0")
        key = next(k for k in report.values if k.transaction_id == deposit)
        assert report.values[key].source == "cost"
        cache.close()
        # kept across a restart; forgetting it goes back to the first mark
        again = d.positions(PositionsCache(tmp_path / "positions.db"), CostMethod.FIFO)
        assert (await again.refresh()).table.row("BTC").average_cost == D("45000.5")
        again.set_cost(deposit, "BTC", None)
        assert again.report().table.row("BTC").average_cost == m0
        again.cache.close()


async def test_the_service_follows_the_market_and_publishes_each_revaluation(
    still: AppSandbox, tmp_path: Path, cache: PositionsCache
) -> None:
    """No widget in the loop: a top of book the market publishes re-values the last book and
    the report goes out on ``reports`` — only after a refresh made a book, and only while
    someone looks (``active``)."""
    async with open_desk(still, {"USD": "1000", "BTC": "2"}) as d:
        tops: Topic[dict[str, TopOfBook]] = Topic("tops")
        balances: Topic[Balances] = Topic("balances")
        fills: Topic[None] = Topic("fills")
        market = Market(tops, balances)
        service = PositionsService(
            d.client,
            cache,
            service=service_key(d.session.environment),
            account=d.user.account,
            pairs=d.session.pairs,
            market=market.changed,
            fills=fills,
        )
        published: list[PositionsReport] = []
        service.reports.subscribe(published.append)
        moved: list[None] = []
        service.moved.subscribe(moved.append)
        tops.publish({"BTC/USD": top_of_book("BTC/USD", "50000", "50002")})
        assert published == []  # no book yet: nothing to re-value
        basis = (await service.refresh()).table.row("BTC").cost_basis
        assert basis is not None
        tops.publish({"BTC/USD": top_of_book("BTC/USD", "60000", "60002")})
        [report] = published
        btc = report.table.row("BTC")
        assert btc.mark == D(60001) and btc.cost_basis == basis
        assert btc.unrealised == 2 * D(60001) - basis
        # the ledger moved: holdings the book does not have, or a fill
        balances.publish(Balances(await d.client.account(), await d.client.portfolio()))
        assert moved == [] and len(published) == 1  # the same holdings, no price moved
        await d.top_up("0.5 BTC")
        balances.publish(Balances(await d.client.account(), await d.client.portfolio()))
        assert moved == [None]
        fills.publish(None)
        assert moved == [None, None]
        service.active = False
        tops.publish({"BTC/USD": top_of_book("BTC/USD", "61000", "61002")})
        assert len(published) == 1
        service.active = True
        service.close()
        tops.publish({"BTC/USD": top_of_book("BTC/USD", "62000", "62002")})
        fills.publish(None)
        assert len(published) == 1 and len(moved) == 2  # closed: nothing is followed
        cache.close()


def top_of_book(pair: str, bid: str, ask: str) -> TopOfBook:
    one = D(1)
    return TopOfBook(AssetPair.parse(pair), D(bid), one, D(ask), one, D(ask) - D(bid))


async def test_first_marks_and_entries_survive_a_restart(still: AppSandbox, tmp_path: Path) -> None:
    async with open_desk(still, {"USD": "50000", "ETH": "10"}) as d:
        path = tmp_path / "data" / "positions.db"
        first = d.positions(PositionsCache(path), CostMethod.AVERAGE, page_size=2)
        eth0 = await d.mid("ETH/USD")
        await d.client.market_order("USD", "ETH", D(3000))
        await d.client.market_order("USD", "BTC", D(5000))
        await d.client.market_order("ETH", "BTC", D(1))  # a cross: BTC at its mark of the time
        btc0 = await d.mid()
        before = await first.refresh()
        assert before.fetched == len(await d.client.ledger(100)) and not before.rebuilt
        assert before.verified
        first.cache.close()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

        move_prices(still)
        await d.client.market_order("BTC", "USD", D("0.01"))
        resting = await d.client.limit_order("USD", "BTC", D(10), limit=D(1))  # locks 10 USD
        assert resting.result.status == "submitted"
        again = d.positions(PositionsCache(path), CostMethod.AVERAGE, page_size=2)
        after = await again.refresh()
        # only the new trade was read; the first marks are those seen before the move
        assert (after.fetched, after.rebuilt, after.verified) == (2, False, True)
        assert after.last_ordering == (await d.client.ledger(1))[0].ordering
        usd = (await d.client.account()).balances["USD"]
        assert usd.locked == 10 and after.table.row("USD").quantity == usd.free + usd.locked
        eth = after.table.row("ETH")
        initial = f"initial-{d.user.account}-ETH"
        assert [v.unit for k, v in after.values.items() if k.transaction_id == initial] == [eth0]
        cross = [k for k in after.values if k.transaction_id != initial]
        assert {after.values[k].unit for k in cross if k.asset == "BTC"} == {btc0}
        assert eth.mark == await d.mid("ETH/USD") != eth0
        # the same figures as a terminal that reads the whole ledger into an empty cache
        whole = d.positions(PositionsCache(tmp_path / "other.db"), CostMethod.AVERAGE)
        whole.cache.record_marks(
            whole.service,
            whole.account,
            "USD",
            again.cache.marks(again.service, again.account, "USD"),
        )
        fresh = await whole.refresh(today=after.table.today)
        assert fresh.table == after.table
        again.cache.close()
        whole.cache.close()


async def test_a_cache_that_disagrees_with_the_ledger_is_rebuilt(
    still: AppSandbox, cache: PositionsCache
) -> None:
    async with open_desk(still, {"USD": "50000", "BTC": "1"}) as d:
        service = d.positions(cache, CostMethod.FIFO)
        await d.client.market_order("USD", "BTC", D(9000))
        good = await service.refresh()
        entries = cache.entries(service.service, service.account)
        assert len(entries) == 4

        # a damaged amount: the holdings no longer match the account's balances
        wrong = entries[0]
        cache.add_entries(service.service, service.account, [replace(wrong, amount=D(123))])
        report = await service.refresh(today=good.table.today)
        assert report.rebuilt and report.verified and report.table == good.table
        assert cache.entries(service.service, service.account) == entries

        # a cache ahead of the ledger (another database behind the same name)
        top = entries[-1]
        ghost = replace(top, ordering=top.ordering + 1000, transaction_id="ghost")
        cache.add_entries(service.service, service.account, [ghost])
        report = await service.refresh(today=good.table.today)
        assert report.rebuilt and report.table == good.table
        assert report.last_ordering == top.ordering
        cache.close()


async def test_csv_names_the_currency_and_writes_exact_decimals(
    still: AppSandbox, tmp_path: Path
) -> None:
    async with open_desk(still, {"USD": "10000", "BTC": "0.5"}) as d:
        cache = PositionsCache(":memory:")
        service = d.positions(cache, CostMethod.FIFO)
        await d.client.market_order("USD", "BTC", D("1234.56"))
        table = (await service.refresh()).table
        path = tmp_path / "positions.csv"
        assert write_csv(table, path) == 2
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert rows == csv_rows(table)
        header, btc, usd, total = rows
        assert header[2] == "Average cost (USD, FIFO)" and header[6] == "Unrealised P&L (USD)"
        row = table.row("BTC")
        assert btc[:4] == [
            "BTC",
            format_decimal(row.quantity),
            format_decimal(row.average_cost or D(0)),
            format_decimal(row.cost_basis or D(0)),
        ]
        assert D(usd[1]) == D("8765.44") and D(usd[6]) == 0
        assert total[0] == "Total" and D(total[5]) == table.totals.market_value
        assert total[10] == "1"
        numbers = [cell for cell in btc[1:] + usd[1:] + total[1:] if cell]
        assert all(re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", cell) for cell in numbers), numbers
        cache.close()


def many_entries(count: int) -> list[LedgerEntry]:
    """``count`` ledger entries (trade legs, two per transaction), in ledger order."""
    at = utc_now()
    return [
        LedgerEntry(
            n // 2,
            "acct",
            f"tx{n // 2}",
            "BTC" if n % 2 else "USD",
            D("1.25") * (n % 7),
            "trade",
            "source" if n % 2 else "destination",
            at,
        )
        for n in range(count)
    ]


def cached_count(path: Path, *, main_file_only: bool = False) -> int:
    """Entries another connection sees: committed ones (``main_file_only``: those already
    copied from the WAL into the database file)."""
    uri = f"file:{path}?immutable=1" if main_file_only else f"file:{path}"
    with closing(sqlite3.connect(uri, uri=True)) as db:
        return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])


@pytest.mark.slow
def test_a_big_cache_write_commits_in_steps_and_a_cost_fits_between(tmp_path: Path) -> None:
    """Writing 100,000 entries at once held the loop 0.45 s: a write goes in steps, each
    committed (a crash leaves a prefix the next refresh completes), none left open across a
    step, so a cost the trader enters meanwhile is written at once."""
    path = tmp_path / "positions.db"
    cache = PositionsCache(path)
    cache.checkpoint()  # the tables into the database file
    entries = many_entries(40_000)
    steps = cache.replace_entry_steps("svc", "acct", entries)
    next(steps)
    taken = 0
    while (taken := cached_count(path)) == 0:
        next(steps)
    assert 0 < taken < len(entries)  # a committed prefix, the rest still to come
    cache.set_cost("svc", "acct", "USD", "tx1", "BTC", D("50000"))
    assert cache.costs("svc", "acct", "USD") == {("tx1", "BTC"): D("50000")}
    for _ in steps:
        pass
    assert cache.entries("svc", "acct") == sorted(
        entries, key=lambda e: (e.ordering, e.transaction_id, e.sub_event_type != "source")
    )
    assert cached_count(path, main_file_only=True) < len(entries)  # still in the WAL
    cache.checkpoint()
    assert cached_count(path, main_file_only=True) == len(entries)
    for name in ("positions.db", "positions.db-wal", "positions.db-shm"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    cache.close()


def test_a_rebuild_drops_the_newest_entries_first(tmp_path: Path) -> None:
    """A rebuild cut short (a crash, the terminal closed) leaves the oldest entries: a prefix
    of the ledger as cached, which the next refresh checks and completes like any other."""
    cache = PositionsCache(tmp_path / "positions.db")
    old, new = many_entries(3_000), many_entries(10)
    cache.add_entries("svc", "acct", old)
    cached = cache.entries("svc", "acct")
    steps = cache.replace_entry_steps("svc", "acct", new)
    next(steps)  # one batch deleted, then the loop's turn
    left = cache.entries("svc", "acct")
    assert 0 < len(left) < len(old)
    assert left == cached[: len(left)]  # the oldest ones, in ledger order
    for _ in steps:
        pass
    assert set(cache.entries("svc", "acct")) == set(new)
    cache.close()
