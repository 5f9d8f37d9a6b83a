"""The trader's own resting orders of one pair, in the pair's terms, for the depth ladder.

The ladder reads the same order query the Orders dock reads (an ``OrderFeed`` of its own,
filtered to resting orders of the ladder's pair, ``resting_filter``) and shows each order on a
price row. An order is taken in the trader's terms (``OwnOrder``):

- its side: Buy or Sell of the pair's base;
- its price: the limit in QUOTE per BASE. A sell's wire limit is already that, and is kept
  exactly. A buy's is the inverse (BASE per QUOTE, rounded by the ticket and again by the
  service to 12 significant digits), so turned back it reads 90,536.9999999 for a typed
  90,537: it is rounded to the pair's price increment, the figure the trader typed, the one
  the Orders dock's Limit column shows, and the one its row is chosen by;
- its size in BASE: a sell's is the amount sold. A buy spends a fixed amount of QUOTE and
  receives at least that amount divided by its limit (more at a better price): that floor,
  rounded down to the base asset's decimals (never an overstatement). The service fills an
  order whole or not at all (no partial fills on the wire), so a resting order's size is its
  whole size; filled, cancelled (its end passed) or rejected, it is no longer resting and
  leaves the ladder with the next read of the feed.

Where a price falls between the ladder's rows, the order goes on the row the book's own level
at that price would go on (``app.ui.models.ladder_rows``): a buy on the highest row at or below
its limit, a sell on the lowest row at or above it. So an own buy shown on a bid row is never
priced worse than that row (it is ahead of the row's level in the queue, or at it), and the
row's price is one a limit of the trader's would rest behind or at. The exact price is in the
cell's tooltip. An order beyond the rows (a buy below the deepest row, a sell above the
highest) is on no row: the ladder counts it in its header.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal, localcontext

from app.domain.money import MONEY_CONTEXT
from app.services.order_feed import OrderFilter, OrderRow

#: The wire's status of an order that rests.
RESTING = "submitted"


@dataclass(frozen=True)
class OwnOrder:
    """One resting limit order of the trader's in pair terms (see the module)."""

    order_id: str
    side: str  # "buy" | "sell"
    price: Decimal  # the limit, QUOTE per BASE
    size: Decimal  # BASE: sold (sell), or at least received at the limit (buy)
    end_at: datetime | None = None


def resting_filter(pair: str) -> OrderFilter:
    """The order query of the ladder: resting orders between the two assets of ``pair``."""
    return OrderFilter(status=RESTING, pair=pair)


def own_orders(
    rows: Iterable[OrderRow], pair: str, base_decimals: int, price_decimals: int
) -> tuple[OwnOrder, ...]:
    """The resting limit orders among ``rows`` that trade ``pair``, in its terms, in the order
    given; an order without a usable limit is left out (it has no price row). Sizes are
    floored to ``base_decimals``, turned-round limits rounded to ``price_decimals``."""
    found: list[OwnOrder] = []
    quantum = Decimal(1).scaleb(-base_decimals)
    increment = Decimal(1).scaleb(-price_decimals)
    for row in rows:
        order = row.order
        if order.result.status != RESTING or order.type not in ("limit", ""):
            continue
        terms = row.terms
        if str(terms.pair_side.pair) != pair or terms.limit is None or terms.limit <= 0:
            continue
        price = terms.limit
        wire = order.limit
        if wire is not None and (wire.base, wire.quote) != (
            terms.pair_side.pair.base,
            terms.pair_side.pair.quote,
        ):
            with localcontext(MONEY_CONTEXT):
                price = price.quantize(increment, rounding=ROUND_HALF_EVEN)
        amount = order.size.value
        if terms.pair_side.side == "buy":
            with localcontext(MONEY_CONTEXT):
                amount = (amount / price).quantize(quantum, rounding=ROUND_DOWN)
        if amount <= 0:
            continue
        found.append(OwnOrder(order.order_id, terms.pair_side.side, price, amount, order.end_at))
    return tuple(found)


def row_of(order: OwnOrder, ascending: Sequence[Decimal]) -> int | None:
    """The index in ``ascending`` (the rows' prices, lowest first) of the row ``order`` is
    shown on: a buy's highest row at or below its price, a sell's lowest at or above it; None
    when it lies beyond the rows."""
    if order.side == "buy":
        at = bisect_right(ascending, order.price) - 1
        return at if at >= 0 else None
    at = bisect_left(ascending, order.price)
    return at if at < len(ascending) else None


def on_rows(
    orders: Iterable[OwnOrder], prices: Sequence[Decimal]
) -> tuple[dict[Decimal, tuple[OwnOrder, ...]], tuple[OwnOrder, ...]]:
    """``orders`` laid on the rows of ``prices`` (descending, as the ladder lists them): the
    orders of each row's price (best priced first: a buy's highest, a sell's lowest), and the
    orders beyond the rows."""
    ascending = list(reversed(prices))
    rows: dict[Decimal, list[OwnOrder]] = {}
    beyond: list[OwnOrder] = []
    for order in orders:
        at = row_of(order, ascending)
        if at is None:
            beyond.append(order)
        else:
            rows.setdefault(ascending[at], []).append(order)
    placed = {
        price: tuple(
            sorted(found, key=lambda o: (o.side, -o.price if o.side == "buy" else o.price))
        )
        for price, found in rows.items()
    }
    return placed, tuple(beyond)


def _best_first(order: OwnOrder) -> tuple[str, Decimal]:
    """Buys before sells; a buy's highest price first, a sell's lowest."""
    return order.side, -order.price if order.side == "buy" else order.price


def side_total(orders: Iterable[OwnOrder], side: str) -> Decimal:
    """The BASE size of ``orders`` on ``side`` ("buy" or "sell")."""
    return sum((order.size for order in orders if order.side == side), Decimal(0))
