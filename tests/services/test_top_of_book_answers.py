"""Top-of-book answers are encoded once per set of prices and never serve a price the
market has left: each answer is the market's quotes at the moment it is asked."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from app.sandbox.market import Market
from app.sandbox.server import POLLED
from app.sandbox.top_bodies import TopOfBookBodies
from tests.harness import AppAccount, AppSandbox

pytestmark = pytest.mark.anyio

TOP = "/api/v1/routing/account/{account}/topofbook"
PAIRS = "BTC/USD,ETH/USD,ETH/BTC"


def market_books(sandbox: AppSandbox, names: list[str]) -> dict[str, Any]:
    """What the market says now, in the wire's shape (numbers as Decimals)."""
    books = {}
    for name in names:
        quote = sandbox.state.market.quote(name)
        books[name] = {
            "spread": quote.ask - quote.bid,
            "ask": [quote.ask, quote.ask_size],
            "bid": [quote.bid, quote.bid_size],
        }
    return books


async def answer(account: AppAccount, pairs: str) -> tuple[bytes, dict[str, Any]]:
    response = await account.get(TOP, assetPairs=pairs)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json(parse_float=Decimal, parse_int=Decimal)
    return response.content, body["topOfBooks"]


def one_tick_later(sandbox: AppSandbox) -> None:
    """The market's clock one tick further on (the sandbox runs with one tick an hour)."""
    market = sandbox.state.market
    market._start -= sandbox.config.tick_seconds
    market.advance()


async def test_the_same_prices_give_the_same_bytes_and_a_tick_gives_the_new_ones() -> None:
    async with AppSandbox(tick_seconds=3600) as sandbox:
        account = await sandbox.new_client()
        names = PAIRS.split(",")
        first, books = await answer(account, PAIRS)
        assert books == market_books(sandbox, names)
        again, _ = await answer(account, PAIRS)
        assert again == first
        for _ in range(5):
            one_tick_later(sandbox)
            _, books = await answer(account, PAIRS)
            assert books == market_books(sandbox, names)


async def test_each_pair_list_has_its_own_answer_and_bad_lists_are_refused_each_time() -> None:
    async with AppSandbox(tick_seconds=3600) as sandbox:
        account = await sandbox.new_client()
        _, some = await answer(account, "ETH/BTC")
        _, both = await answer(account, "ETH/BTC,BTC/USD")
        assert list(some) == ["ETH/BTC"]
        assert list(both) == ["ETH/BTC", "BTC/USD"]
        _, every = await answer(account, "")
        assert len(every) > 2
        for _ in range(2):
            refused = await account.get(TOP, assetPairs="BTC/XYZ")
            assert refused.status_code == 400
            assert "Unknown asset pair BTC/XYZ" in refused.text


async def test_the_polled_routes_are_tried_first(app_sandbox: AppSandbox) -> None:
    """Every path in ``POLLED`` is a route (a renamed one would silently fall back to the end)."""
    paths = [route.path for route in app_sandbox.app.routes]  # type: ignore[attr-defined]
    assert paths[: len(POLLED)] == list(POLLED)


def test_an_answer_is_encoded_once_per_set_of_prices() -> None:
    """The same prices: the very same bytes, not encoded again; a tick: a new answer."""
    now = [0.0]
    market = Market(seed=7, tick_seconds=1.0, clock=lambda: now[0])
    bodies = TopOfBookBodies()
    parsed: list[str] = []

    def names(raw: str) -> list[str]:
        parsed.append(raw)
        return raw.split(",")

    first = bodies.body(market, PAIRS, names)
    assert bodies.body(market, PAIRS, names) is first
    assert parsed == [PAIRS]  # the text is parsed once
    now[0] = 1.5  # one tick later
    moved = bodies.body(market, PAIRS, names)
    assert moved is not first
    books = json.loads(moved, parse_float=Decimal, parse_int=Decimal)["topOfBooks"]
    assert books["BTC/USD"]["bid"][0] == market.quote("BTC/USD").bid
