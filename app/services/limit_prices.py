"""Limit prices between the trader's terms and the wire, and numbers shown in the pair's terms.

An order sells ``size`` of ``source`` for ``destination``; its wire ``limit`` is a
SOURCE/DESTINATION price: the least destination accepted per unit of source (design.md §2).
A trader thinks in the pair's natural units instead, QUOTE per BASE: "buy BTC at most 90,000
USD per BTC" is typed as ``90000 BTC/USD`` while the order (source USD, destination BTC) sends
``0.0000111… USD/BTC``. These helpers convert both ways and say in words what a limit means.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Decimal, localcontext

from app.domain import Price
from app.domain.money import MONEY_CONTEXT, format_trimmed
from app.domain.valuation import HOP_ASSETS

#: Significant digits kept when a converted price is shown (1/(1/x) is not exactly x).
DISPLAY_DIGITS = 12
#: Significant digits of a limit that had to be inverted for the wire (1/90000 has no end):
#: three more than are shown, so the wire value converted back reads as the trader typed it.
WIRE_DIGITS = 15


def wire_limit(source: str, destination: str, price: Price) -> Price:
    """The limit in SOURCE/DESTINATION units, as the order sends it.

    A price already in SOURCE/DESTINATION passes through exactly; one in DESTINATION/SOURCE
    (the trader's "90000 BTC/USD" when buying BTC with USD) is inverted and rounded to
    ``WIRE_DIGITS`` significant digits **up**: the wire limit is the least destination accepted
    per source, so rounding up never loosens the trader's limit ("at most 90,000" stays at
    most 90,000, by less than one part in 10^14). Other units, and prices that are not
    positive, raise ValueError saying what was expected.
    """
    if price.value <= 0:
        raise ValueError(
            f"a limit price must be greater than zero, not {format_trimmed(price.value)}"
        )
    if price.base == source and price.quote == destination:
        return price
    if price.base == destination and price.quote == source:
        inverted = price.invert()
        return Price(
            round_significant(inverted.value, WIRE_DIGITS, ROUND_CEILING), source, destination
        )
    raise ValueError(
        f"a limit for selling {source} for {destination} is in {source}/{destination} or "
        f"{destination}/{source}, not {price.base}/{price.quote}"
    )


def trader_view(source: str, destination: str, wire: Price, pair_base: str) -> Price:
    """The wire limit (SOURCE/DESTINATION) in the pair's natural units: QUOTE per BASE, where
    ``pair_base`` is the pair's base asset (one of source and destination)."""
    if wire.base != source or wire.quote != destination:
        raise ValueError(f"a wire limit is in {source}/{destination}, not {wire.base}/{wire.quote}")
    if pair_base == source:
        return wire
    if pair_base == destination:
        return wire.invert()
    raise ValueError(f"{pair_base} is neither {source} nor {destination}")


def pair_base(source: str, destination: str, known_pairs: Iterable[str] = ()) -> str:
    """The base asset of the pair that trades ``source`` against ``destination``: from the
    known pairs when one matches, else the asset that is not a quote-like currency."""
    names = set(known_pairs)
    if f"{source}/{destination}" in names:
        return source
    if f"{destination}/{source}" in names:
        return destination
    if source in HOP_ASSETS and destination not in HOP_ASSETS:
        return destination
    return source


def describe_limit(source: str, destination: str, wire: Price, base: str) -> str:
    """What the limit means, in the trader's words, e.g. ``sell BTC receiving at least 59,000
    USD per BTC`` or ``buy BTC paying at most 90,000 USD per BTC``."""
    natural = trader_view(source, destination, wire, base)
    shown = display_number(natural.value)
    if base == source:
        return f"sell {source} receiving at least {shown} {destination} per {source}"
    return f"buy {destination} paying at most {shown} {source} per {destination}"


def round_significant(value: Decimal, digits: int, rounding: str = ROUND_HALF_EVEN) -> Decimal:
    """``value`` rounded to ``digits`` significant digits (exact values stay as they are)."""
    if value.is_zero():
        return value
    with localcontext(MONEY_CONTEXT):
        exponent = value.adjusted() - digits + 1
        return value.quantize(Decimal(1).scaleb(exponent), rounding=rounding).normalize()


def display_number(value: Decimal, digits: int = DISPLAY_DIGITS) -> str:
    """``value`` rounded to ``digits`` significant digits, trailing zeros trimmed, with
    thousands separators: ``89999.99999999999999…`` becomes ``90,000``."""
    if value.is_zero():
        return "0"
    text = format_trimmed(round_significant(value, digits))
    sign = "-" if text.startswith("-") else ""
    whole, _, fraction = text.lstrip("-").partition(".")
    grouped = f"{int(whole):,}"
    return f"{sign}{grouped}.{fraction}" if fraction else f"{sign}{grouped}"
