"""The ladder's rows: a book laid on a list of price rows (the grid), Qt-free.

The grid is a descending list of prices. Taken from the book itself, every level gets its own
row (asks from the deepest down to the best, then the bids from the best down). Held while the
book moves (the ladder holds still under the trader's pointer, as TT's fixed price rows do),
the new book is laid on the old rows:

- an ask is shown on the lowest row priced at or above it, a bid on the highest row at or
  below it, so a row's size is always liquidity that a limit at the row's own price reaches
  (a buy at an ask row's price lifts it, a sell at a bid row's price hits it);
- the cumulative size of an ask row is every ask at or below its price, of a bid row every bid
  at or above it (the running sum from the touch outward); a row with no level at its price
  (a held row the book has no level for any more) shows no cumulative size either: a running
  sum beside an empty size reads as a level with no size, and the sum a limit there reaches
  is the one on the next row nearer the touch that has a level;
- a row at or above the best ask is an ask row, at or below the best bid a bid row, and a row
  left between them (the touch moved away from it) is ``INSIDE``: no side, no size, no trade;
- levels beyond the first or last row are not shown until the ladder recentres (takes a new
  grid from the book);
- the trader's own resting orders (``app.services.own_orders``) go on the row the book's level
  at their price would go on (a buy on the highest row at or below it, a sell on the lowest at
  or above it), whatever side the row is on now: each row carries its orders and their sizes
  per side; orders beyond the rows are returned apart.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from decimal import Decimal

from app.domain.records import OrderBook
from app.services.own_orders import OwnOrder, on_rows, side_total

ASK = "ask"
BID = "bid"
#: A held row between the best bid and the best ask.
INSIDE = "inside"

SIDES = (ASK, BID)


@dataclass(frozen=True)
class DepthRow:
    side: str
    price: Decimal
    size: Decimal
    cumulative: Decimal
    pair: str = ""
    #: The trader's resting orders shown on this row, and their BASE sizes per side.
    own: tuple[OwnOrder, ...] = ()
    own_buy: Decimal = Decimal(0)
    own_sell: Decimal = Decimal(0)

    @property
    def own_size(self) -> Decimal:
        """The BASE size of the trader's resting orders on this row, both sides."""
        return self.own_buy + self.own_sell


def grid_of(book: OrderBook) -> list[Decimal]:
    """One row per price of ``book``, highest first (a price on both sides is one row)."""
    prices = {price for price, _ in book.asks} | {price for price, _ in book.bids}
    return sorted(prices, reverse=True)


@dataclass(frozen=True)
class Ladder:
    """A book laid on a grid: the rows, how many are asks (the first ones) and bids (the last
    ones), and the trader's orders beyond the rows."""

    rows: list[DepthRow]
    ask_count: int
    bid_count: int
    beyond: tuple[OwnOrder, ...] = ()


def ladder_rows(
    book: OrderBook, grid: list[Decimal] | None = None, own: tuple[OwnOrder, ...] = ()
) -> Ladder:
    """``book`` laid on ``grid`` (descending prices; None: the book's own, ``grid_of``), with
    the trader's resting orders ``own`` (of the book's pair) on their rows."""
    prices = grid_of(book) if grid is None else grid
    mine, beyond = on_rows(own, prices) if own else ({}, ())
    pair = str(book.pair)
    ascending = prices[::-1]
    asks = sorted(book.asks)
    bids = sorted(book.bids, reverse=True)
    best_ask = asks[0][0] if asks else None
    best_bid = bids[0][0] if bids else None

    shown: dict[Decimal, Decimal] = {}
    for price, size in asks:  # onto the lowest row at or above it
        at = bisect_left(ascending, price)
        if at < len(ascending):
            shown[ascending[at]] = shown.get(ascending[at], Decimal(0)) + size
    for price, size in bids:  # onto the highest row at or below it
        at = bisect_right(ascending, price) - 1
        if at >= 0:
            shown[ascending[at]] = shown.get(ascending[at], Decimal(0)) + size

    # The running totals from the touch outward: asks up from the lowest row, bids down.
    ask_totals: dict[Decimal, Decimal] = {}
    ask_total, taken = Decimal(0), 0
    for price in ascending:
        while taken < len(asks) and asks[taken][0] <= price:
            ask_total += asks[taken][1]
            taken += 1
        ask_totals[price] = ask_total

    rows: list[DepthRow] = []
    ask_count = bid_count = 0
    bid_total, taken = Decimal(0), 0
    zero = Decimal(0)
    for price in prices:
        size = shown.get(price, zero)
        if best_ask is not None and price >= best_ask:
            side, cumulative = ASK, ask_totals[price] if size else size
            ask_count += 1
        elif best_bid is not None and price <= best_bid:
            while taken < len(bids) and bids[taken][0] >= price:
                bid_total += bids[taken][1]
                taken += 1
            side, cumulative = BID, bid_total if size else size
            bid_count += 1
        else:
            side, size, cumulative = INSIDE, zero, zero
        orders = mine.get(price)
        if orders:
            buy, sell = side_total(orders, "buy"), side_total(orders, "sell")
            rows.append(DepthRow(side, price, size, cumulative, pair, orders, buy, sell))
        else:
            rows.append(DepthRow(side, price, size, cumulative, pair))
    return Ladder(rows, ask_count, bid_count, beyond)
