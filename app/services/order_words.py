"""Orders in the trader's words: Buy or Sell of a pair's base, prices as QUOTE per BASE, numbers
grouped and in the asset's precision (design.md §8). One place for the ticket, its
confirmation, its Send button and the desk's log line, so they all say the same thing.

The wire's SOURCE/DESTINATION view never appears here; the ticket shows it in a details line.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import ROUND_DOWN, Decimal, localcontext

from app.domain import Price, utc_now
from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import Order
from app.services.limit_prices import display_number, trader_view
from app.services.ticket import TicketInput


def side_of(ticket: TicketInput, known_pairs: Iterable[str] = ()) -> PairSide:
    """The ticket as Buy or Sell of its pair's base."""
    return PairSide.of(ticket.source, ticket.destination, known_pairs)


def limit_price(
    source: str, destination: str, wire: Price, known_pairs: Iterable[str] = ()
) -> Decimal:
    """A wire limit (SOURCE/DESTINATION) as QUOTE per BASE."""
    pair_side = PairSide.of(source, destination, known_pairs)
    return trader_view(source, destination, wire, pair_side.pair.base).value


def limit_phrase(pair_side: PairSide, natural: Decimal, precision: Precision) -> str:
    """``at ≤ 90,000.00 USD`` for a buy, ``at ≥ 95,000.00 USD`` for a sell."""
    sign = "≤" if pair_side.side == "buy" else "≥"
    pair = pair_side.pair
    return f"at {sign} {precision.price_text(natural, str(pair))} {pair.quote}"


def action(ticket: TicketInput, known_pairs: Iterable[str], precision: Precision) -> str:
    """What sending does, short enough for a button: ``Buy BTC for 10,000 USD``,
    ``Sell 2 ETH``, with ``at ≤ 90,000.00 USD`` for a limit."""
    return request_action(
        ticket.source, ticket.destination, ticket.size, ticket.wire_limit(), known_pairs, precision
    )


def request_action(
    source: str,
    destination: str,
    size: Decimal,
    wire: Price | None,
    known_pairs: Iterable[str],
    precision: Precision,
) -> str:
    """``action`` for what was asked of the service (a journaled request, say): sell ``size``
    of ``source`` for ``destination``, ``wire`` the limit as the wire says it."""
    pairs = list(known_pairs)
    pair_side = PairSide.of(source, destination, pairs)
    amount = display_number(size)
    base = pair_side.pair.base
    text = (
        f"Buy {base} for {amount} {source}" if pair_side.side == "buy" else f"Sell {amount} {base}"
    )
    if wire is not None:
        natural = limit_price(source, destination, wire, pairs)
        text += " " + limit_phrase(pair_side, natural, precision)
    return text


def until_text(end: datetime, now: datetime | None = None) -> str:
    """``14:05 UTC`` today, ``2026-11-25 14:05 UTC`` another day."""
    today = (now or utc_now()).date()
    if end.date() == today:
        return f"{end:%H:%M} UTC"
    return f"{end:%Y-%m-%d %H:%M} UTC"


def fill_sentence(order: Order, known_pairs: Iterable[str], precision: Precision) -> str | None:
    """``Bought 0.11001837 BTC at 90,893.91 USD (spent 10,000.00 USD) · order …``."""
    trade = Trade.of(order, known_pairs)
    if trade is None:
        return None
    return f"{trade.sentence(precision)} · order {order.order_id}"


def resting_sentence(order: Order, known_pairs: Iterable[str], precision: Precision) -> str:
    """``Resting: buy ≥ 0.2 BTC for 18,000.00 USD at ≤ 90,000.00 USD until 14:05 UTC · order …``
    (a buy spends a fixed amount: at a better price it receives more)."""
    pairs = list(known_pairs)
    pair_side = PairSide.of(order.source, order.destination, pairs)
    pair = pair_side.pair
    size = order.size.value
    words = f"Resting: {pair_side.side} {precision.exact(size, order.source)} {pair.base}"
    if order.limit is not None and (order.limit.base, order.limit.quote) == (
        order.source,
        order.destination,
    ):
        natural = limit_price(order.source, order.destination, order.limit, pairs)
        if pair_side.side == "buy" and natural > 0:
            words = (
                f"Resting: buy ≥ {at_least(size / natural, pair.base, precision)} {pair.base} "
                f"for {precision.exact(size, pair.quote)} {pair.quote}"
            )
        words += " " + limit_phrase(pair_side, natural, precision)
    elif pair_side.side == "buy":
        words = f"Resting: buy {pair.base} for {precision.exact(size, pair.quote)} {pair.quote}"
    if order.end_at is not None:
        words += f" until {until_text(order.end_at)}"
    else:
        words += " with no end time (it cannot be cancelled)"
    return f"{words} · order {order.order_id}"


def at_least(value: Decimal, asset: str, precision: Precision) -> str:
    """``value`` rounded down to the asset's decimals (a floor, never an overstatement)."""
    with localcontext(MONEY_CONTEXT):
        floor = value.quantize(Decimal(1).scaleb(-precision.asset(asset)), rounding=ROUND_DOWN)
    return precision.amount(floor, asset)
