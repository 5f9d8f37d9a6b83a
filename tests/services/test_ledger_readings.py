"""The ledger browser and the positions against a stand-in service (tests/standin) in each fair
reading of Get Transactions' paging: ``max`` counting entries or transactions, pages running
newest first or oldest first. Whatever the reading: every entry once, a trade's two legs
together even when a page ended between them, Load more while there is more, and no spin."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from app.api import ClientSettings, ServiceClient
from app.domain.records import LedgerEntry
from app.services import ledger_browser
from app.services.ledger_browser import LedgerBrowser, LedgerQuery, LedgerSnapshot
from app.services.ledger_pages import (
    STALLED_NOTE,
    LedgerOrder,
    LedgerPages,
    Page,
    entry_key,
    is_full,
    newest_first_steps,
    shown_order,
)
from app.services.positions import PositionsCache, PositionsService
from app.services.slices import run_now
from tests.standin.ledger_data import PAIRS, STRADDLES, holdings
from tests.standin.server import URL, Standin, StandinConfig

pytestmark = pytest.mark.anyio

READINGS = [
    pytest.param((counts, order), id=f"max={counts}-{order}")
    for counts in ("entries", "transactions")
    for order in ("ascending", "descending")
]


@pytest.fixture(params=READINGS)
def standin(request: pytest.FixtureRequest) -> Standin:
    counts, order = request.param
    return Standin(StandinConfig(max_counts=counts, order=order))


@asynccontextmanager
async def logged_in(standin: Standin) -> AsyncIterator[ServiceClient]:
    client = ServiceClient(ClientSettings(URL), transport=standin.transport())
    try:
        await client.login("trader", "secret", standin.config.account)
        yield client
    finally:
        await client.aclose()


def everything(standin: Standin) -> list[tuple[int, str, str, str]]:
    """The stand-in's whole ledger, newest first (a trade's source leg first), by entry key."""
    ledger = sorted(standin.ledger, key=lambda e: (-e.ordering, e.sub_event_type != "source"))
    return [entry.key() for entry in ledger]


def keys(snapshot: LedgerSnapshot) -> list[tuple[int, str, str, str]]:
    return [entry_key(row.entry) for row in snapshot.rows]


def check_trades_paired(snapshot: LedgerSnapshot) -> None:
    """Every trade entry shows in a group of its two legs with the trade they make."""
    for row in snapshot.rows:
        if row.entry.event_type == "trade":
            assert row.size == 2 and row.trade is not None, row.entry
    groups: dict[int, list[LedgerEntry]] = {}
    for row in snapshot.rows:
        groups.setdefault(row.group, []).append(row.entry)
    for legs in groups.values():
        assert len({(leg.ordering, leg.transaction_id) for leg in legs}) == 1


def test_the_stand_in_ledger_splits_trades_at_every_page_boundary() -> None:
    """The premise of the tests below: 300 entries, trades across 99|100 and 199|200."""
    ledger = Standin().ledger
    assert len(ledger) == 300 and len({entry.key() for entry in ledger}) == 300
    for at in STRADDLES:
        first, second = ledger[at], ledger[at + 1]
        assert first.event_type == second.event_type == "trade"
        assert (first.ordering, first.transaction_id) == (second.ordering, second.transaction_id)
    transactions = len({(e.ordering, e.transaction_id) for e in ledger})
    assert transactions < 300 - 50  # many trades: a page of 100 entries holds far fewer


@pytest.mark.parametrize("sliced_above", [ledger_browser.SLICED_ENTRIES, 0])
async def test_the_browser_loads_every_entry_with_load_more(
    standin: Standin, sliced_above: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger_browser, "SLICED_ENTRIES", sliced_above)
    async with logged_in(standin) as client:
        browser = LedgerBrowser(client, lambda: PAIRS)
        snapshot = await browser.load(LedgerQuery())
        assert (len(snapshot.rows) >= 100, snapshot.more) == (True, True)
        assert snapshot.older is (standin.config.order == "descending")
        clicks = 0
        while snapshot.more:
            clicks += 1
            assert clicks < 10, "Load more never ends"
            count = len(snapshot.rows)
            snapshot = await browser.load_more()
            assert len(snapshot.rows) > count or not snapshot.more
            check_trades_paired(snapshot)
        assert keys(snapshot) == everything(standin)  # newest first, each entry once
        assert clicks >= 2
        assert snapshot.paging_note == ""
        check_trades_paired(snapshot)
        assert [row.group for row in snapshot.rows][-1] + 1 == len(
            {(e.ordering, e.transaction_id) for e in standin.ledger}
        )


async def test_one_entry_pages_page_through_everything(standin: Standin) -> None:
    """``max`` 1: every page is ambiguous about its order (and, counting entries, holds one
    leg of a trade): the browser still ends, having read every entry of one asset."""
    async with logged_in(standin) as client:
        browser = LedgerBrowser(client, lambda: PAIRS)
        snapshot = await browser.load(LedgerQuery(max_transactions=1, asset="ETH"))
        for _ in range(400):
            if not snapshot.more:
                break
            snapshot = await browser.load_more()
        assert not snapshot.more
        eth = [key for key in everything(standin) if key[2] == "ETH"]
        assert keys(snapshot) == eth


async def test_running_balance_holds_in_each_reading(standin: Standin) -> None:
    async with logged_in(standin) as client:
        browser = LedgerBrowser(client, lambda: PAIRS)
        snapshot = await browser.load(LedgerQuery(asset="BTC", max_transactions=40))
        while snapshot.more:
            snapshot = await browser.load_more()
        rows = snapshot.rows
        assert rows[0].balance == holdings(standin.ledger)["BTC"]
        for newer, older in itertools.pairwise(rows):
            assert newer.balance is not None
            assert older.balance == newer.balance - newer.entry.amount
        assert rows[-1].entry.event_type == "initialBalances"
        assert rows[-1].balance == rows[-1].entry.amount


async def test_a_server_that_ignores_the_start_ends_paging_with_a_note(standin: Standin) -> None:
    """Every page the same: Load more stops with a note after a bounded number of reads."""
    standin.config.honours_start = False
    async with logged_in(standin) as client:
        browser = LedgerBrowser(client, lambda: PAIRS)
        snapshot = await browser.load(LedgerQuery())
        assert snapshot.more
        asked = len(standin.ledger_queries)
        snapshot = await browser.load_more()
        assert not snapshot.more
        assert snapshot.paging_note == STALLED_NOTE
        assert len(standin.ledger_queries) - asked <= 2
        assert len(snapshot.rows) == 100 or standin.config.max_counts == "transactions"


async def test_the_whole_ledger_read_in_pages_is_every_entry_once(standin: Standin) -> None:
    async with logged_in(standin) as client:
        pages = LedgerPages(client)
        found = await pages.read_from(None, 100)
        assert [entry_key(e) for e in found] == everything(standin)
        top = standin.ledger[150].ordering
        above = await pages.read_from(top, 100)
        assert [entry_key(e) for e in above] == everything(standin)[: 300 - 150]
        assert await pages.newest() == standin.ledger[-1].ordering


async def test_positions_from_pages_equal_positions_from_the_whole_list(
    standin: Standin, tmp_path: Path
) -> None:
    async with logged_in(standin) as client:
        paged = PositionsService(
            client,
            PositionsCache(tmp_path / "paged.db"),
            service=URL,
            account=standin.config.account,
            pairs=lambda: PAIRS,
            page_size=100,
        )
        whole = PositionsService(
            client,
            PositionsCache(tmp_path / "whole.db"),
            service=URL,
            account=standin.config.account,
            pairs=lambda: PAIRS,
            page_size=10_000,  # one page: the whole list
        )
        try:
            report = await paged.refresh()
            expected = await whole.refresh()
            assert [entry_key(e) for e in paged.entries] == [e.key() for e in standin.ledger]
            assert paged.entries == whole.entries
            assert report.verified and expected.verified and not report.rebuilt
            assert report.table.rows == expected.table.rows
            quantities = {row.asset: row.quantity for row in report.table.rows}
            assert quantities == {a: q for a, q in holdings(standin.ledger).items() if q}
            # A second refresh reads only what is new (nothing) and still agrees.
            again = await paged.refresh()
            assert again.verified and not again.rebuilt and again.table.rows == report.table.rows
        finally:
            paged.cache.close()
            whole.cache.close()


def entry(ordering: int, leg: str = "", asset: str = "USD") -> LedgerEntry:
    kind = "trade" if leg else "deposit"
    moment = datetime(2026, 3, 2, tzinfo=UTC)
    return LedgerEntry(ordering, "acct", f"tx-{ordering}", asset, Decimal(1), kind, leg, moment)


def test_the_order_of_a_page_comes_from_the_page_or_from_the_ordering_asked() -> None:
    down, up = [entry(9), entry(7)], [entry(7), entry(9)]
    assert shown_order(down, None) is LedgerOrder.NEWEST_FIRST
    assert shown_order(up, 3) is LedgerOrder.OLDEST_FIRST
    one = [entry(7)]
    assert shown_order(one, None) is None  # one ordering and nothing asked: cannot tell
    assert shown_order(one, 7) is None
    assert shown_order(one, 8) is LedgerOrder.NEWEST_FIRST
    assert shown_order(one, 6) is LedgerOrder.OLDEST_FIRST
    legs = [entry(7, "source"), entry(7, "destination", "BTC")]
    assert shown_order(legs, None) is None


def test_the_next_page_starts_past_a_whole_transaction_and_on_a_split_one() -> None:
    def page(entries: list[LedgerEntry], order: LedgerOrder, at: int | None = None) -> Page:
        return Page(entries, at, order, True)

    newest, oldest = LedgerOrder.NEWEST_FIRST, LedgerOrder.OLDEST_FIRST
    assert page([entry(9), entry(7)], newest).next_start == 6
    assert page([entry(9), entry(7, "source")], newest).next_start == 7  # split: again at 7
    both = [entry(9), entry(7, "source"), entry(7, "destination", "BTC")]
    assert page(both, newest).next_start == 6
    assert page([entry(3), entry(5, "destination", "BTC")], oldest).next_start == 5
    assert page([entry(3), entry(5)], oldest).next_start == 6
    # A page wholly at the ordering asked steps past it, else it would come again.
    assert page([entry(7, "source")], newest, 7).next_start == 6
    assert page([entry(7, "source")], oldest, 7).next_start == 8
    one_asset = Page([entry(9), entry(7, "source")], None, newest, True, one_asset=True)
    assert one_asset.next_start == 6  # a query of one asset shows one leg of a trade
    assert is_full([entry(9), entry(7, "source"), entry(7, "destination", "BTC")], 3)
    assert is_full([entry(9), entry(7, "source"), entry(7, "destination", "BTC")], 2)
    assert not is_full([entry(9), entry(7, "source"), entry(7, "destination", "BTC")], 4)


def test_a_page_is_turned_newest_first_with_source_legs_first() -> None:
    def run(entries: list[LedgerEntry]) -> list[tuple[int, str]]:
        return [(e.ordering, e.sub_event_type) for e in run_now(newest_first_steps(entries))]

    up = [entry(3), entry(5, "source"), entry(5, "destination", "BTC"), entry(8)]
    expected = [(8, ""), (5, "source"), (5, "destination"), (3, "")]
    assert run(up) == expected
    down = [entry(8), entry(5, "destination", "BTC"), entry(5, "source"), entry(3)]
    assert run(down) == expected
    assert run([entry(5), entry(8), entry(3)]) == [(8, ""), (5, ""), (3, "")]  # neither order
    many = [entry(n) for n in range(1000)]
    assert run(many) == [(n, "") for n in reversed(range(1000))]


async def test_refresh_puts_new_entries_on_top_with_the_balance_right(standin: Standin) -> None:
    async with logged_in(standin) as client:
        browser = LedgerBrowser(client, lambda: PAIRS)
        snapshot = await browser.load(LedgerQuery(asset="BTC", max_transactions=30))
        while snapshot.more:
            snapshot = await browser.load_more()
        count = len(snapshot.rows)
        last = standin.ledger[-1]
        moment = last.event_time + timedelta(seconds=1)
        for step, amount in ((2, "-0.25"), (5, "0.125")):
            standin.ledger += [
                dataclasses.replace(
                    last,
                    ordering=last.ordering + step,
                    transaction_id=f"new-{step}",
                    asset="BTC",
                    amount=Decimal(amount),
                    event_type="deposit" if step == 5 else "withdrawal",
                    sub_event_type="",
                    event_time=moment,
                )
            ]
        snapshot = await browser.refresh()
        rows = snapshot.rows
        assert len(rows) == count + 2
        assert [row.entry.transaction_id for row in rows[:2]] == ["new-5", "new-2"]
        assert rows[0].balance == holdings(standin.ledger)["BTC"]
        for newer, older in itertools.pairwise(rows):
            assert newer.balance is not None
            assert older.balance == newer.balance - newer.entry.amount
        assert rows[-1].balance == rows[-1].entry.amount  # the initial balance
        again = await browser.refresh()
        assert len(again.rows) == count + 2 and again.paging_note == ""
