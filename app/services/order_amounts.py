"""An order ticket's amount is a value with its asset; these are the rules that keep it so.

The rule (the same as the RFQ ticket's units switch): when a side switch, a pair switch or the
units toggle changes the asset of the amount, the amount is converted at the current mid of
the book, rounded half-even to the new asset's decimals, with a note saying so
("10,000 USD → 0.10988 BTC at 91,007.71"); with no price it is cleared with a note. Its digits
never stay to mean another asset.

The service takes the size in the asset the order sells only. An amount in the asset it buys
(units toggled to it) is converted to the asset sold: at the limit for a limit order (exact
terms), at the touch for a market order (≈: the fill decides what it really buys; a
confirmation holds the touch it shows); the size sent is rounded to the sold asset's
decimals and is what the confirmation shows.

Increments come from the service's pairs list (``PairInfo``): an amount takes at most its
asset's decimals, a limit is a whole number of the pair's price increments. Both are checked
while typing, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext

from app.domain.display import Precision, decimals_of, digits_of, format_number
from app.domain.money import MONEY_CONTEXT, AssetPair
from app.domain.pair_terms import PairSide, Side
from app.domain.records import PairInfo, TopOfBook
from app.domain.valuation import value_in
from app.services.ticket import TicketError, parse_number


@dataclass(frozen=True)
class Carried:
    """The amount's text after its asset changed, and the note saying how (None: unchanged)."""

    text: str
    note: tuple[str, str] | None = None


def plain(value: Decimal, places: int) -> str:
    """``value`` rounded half-even to ``places`` as typed text (no grouping)."""
    return format_number(value, places, grouping=False)


def convert_amount(
    text: str,
    old: str,
    new: str,
    tops: Mapping[str, TopOfBook],
    precision: Precision,
) -> Carried:
    """``text`` of ``old`` as ``new``: the same text when the asset stays, else the value at
    the mid (directly when the two assets make a pair, else through the valuation's hops),
    or cleared with a note."""
    if old == new or not text.strip() or not old or not new:
        return Carried(text)
    try:
        value = parse_number(text, "size", "an amount")
    except TicketError:
        return Carried("", ("warning", f"The amount was cleared (not a number): enter {new}."))
    if value <= 0:
        return Carried("", ("warning", f"The amount was cleared: enter it in {new}."))
    places = precision.asset(new)
    converted, price_words = _at_mid(value, old, new, tops, precision)
    if converted is None:
        return Carried(
            "",
            ("warning", f"The amount was cleared (no price for {old} in {new}): enter {new}."),
        )
    shown = plain(converted, places)
    typed = f"{format_number(value, max(digits_of(value), 0))} {old}"
    if Decimal(shown).is_zero():
        return Carried(
            "", ("warning", f"The amount was cleared ({typed} is under 1 unit of {new}).")
        )
    return Carried(
        shown, ("info", f"{typed} → {format_number(converted, places)} {new}{price_words}")
    )


def _at_mid(
    value: Decimal, old: str, new: str, tops: Mapping[str, TopOfBook], precision: Precision
) -> tuple[Decimal | None, str]:
    with localcontext(MONEY_CONTEXT):
        for base, quote in ((old, new), (new, old)):
            top = tops.get(f"{base}/{quote}")
            if top is not None and top.bid > 0 and top.ask > 0:
                mid = top.mid
                converted = value * mid if base == old else value / mid
                return converted, f" at {precision.price_text(mid, f'{base}/{quote}')} (mid)"
        valued = value_in(value, old, new, tops)
    return valued, " at the mids"


def amount_places(asset: str, pair: AssetPair, infos: Mapping[str, PairInfo]) -> int | None:
    """How many decimals an amount of ``asset`` takes on ``pair`` (the service's word)."""
    info = infos.get(str(pair))
    if info is None:
        return None
    return info.base_decimals if asset == pair.base else info.quote_decimals


def increment_error(
    amount: Decimal,
    asset: str,
    limit: Decimal | None,
    pair: AssetPair,
    infos: Mapping[str, PairInfo],
) -> TicketError | None:
    """The first increment the service would refuse: an amount with more decimals than its
    asset takes, a limit off the pair's price increment (None: both fit)."""
    places = amount_places(asset, pair, infos)
    if places is not None and digits_of(amount.normalize()) > places:
        many = "no decimals" if places == 0 else f"at most {places} decimal" + "s" * (places != 1)
        return TicketError("size", f"{asset} amounts take {many} ({amount} {asset} has more)")
    info = infos.get(str(pair))
    step = None if info is None else info.price_increment
    if limit is not None and step is not None and step > 0:
        with localcontext(MONEY_CONTEXT):
            off = limit % step != 0
        if off:
            return TicketError(
                "limit",
                f"{pair} limits are in steps of {format_number(step, decimals_of(step))} "
                f"{pair.quote}",
            )
    return None


def sold_size(
    amount: Decimal,
    pair_side: PairSide,
    price: Decimal,
    places: int,
) -> Decimal:
    """An amount of the asset bought as the size of the asset sold at ``price`` (QUOTE per
    BASE), rounded half-even to the sold asset's ``places``."""
    with localcontext(MONEY_CONTEXT):
        raw = amount * price if pair_side.side == "buy" else amount / price
        return raw.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)


def collar_price(touch: Decimal, side: Side, bps: Decimal, tick: Decimal) -> Decimal:
    """The worst price a marketable order accepts: the touch moved ``bps`` against the trader,
    kept on the pair's ``tick`` on the inside of the collar (never beyond it) and never
    inside the touch."""
    with localcontext(MONEY_CONTEXT):
        factor = bps / Decimal(10_000)
        if side == "buy":
            raw = touch * (1 + factor)
            price = (raw / tick).to_integral_value(rounding=ROUND_FLOOR) * tick
            return max(price, (touch / tick).to_integral_value(rounding=ROUND_CEILING) * tick)
        raw = touch * (1 - factor)
        price = (raw / tick).to_integral_value(rounding=ROUND_CEILING) * tick
        return min(price, (touch / tick).to_integral_value(rounding=ROUND_FLOOR) * tick)
