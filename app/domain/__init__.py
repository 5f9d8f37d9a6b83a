"""Plain values of the trading service: Decimal inside, parsing of wire strings, no I/O, no Qt."""

from app.domain.errors import ParseError
from app.domain.money import (
    Amount,
    AssetPair,
    Price,
    format_decimal,
    format_trimmed,
    parse_asset,
    parse_decimal,
)
from app.domain.timefmt import format_timestamp, parse_timestamp, utc_now

__all__ = [
    "Amount",
    "AssetPair",
    "ParseError",
    "Price",
    "format_decimal",
    "format_timestamp",
    "format_trimmed",
    "parse_asset",
    "parse_decimal",
    "parse_timestamp",
    "utc_now",
]
