"""Checking what the user typed before anything is sent: a bad value is a usage error (exit 2),
not a request the service has to refuse.

Each converter is an argparse ``type=``: it raises ``argparse.ArgumentTypeError`` with a message
naming what is wrong, and argparse reports it against the option.
"""

from __future__ import annotations

import argparse
import math
from datetime import UTC, datetime
from decimal import Decimal

from app.domain import Amount, AssetPair, ParseError, parse_asset, parse_decimal

#: No asset needs more digits than this either side of the point; ``1e-999999`` would otherwise
#: become a million zeros on the wire.
MAX_DIGITS = 30


def positive_decimal(text: str) -> Decimal:
    """A finite number above zero, exact (``0.5``, ``1e-3``); never a float."""
    try:
        value = parse_decimal(text)
    except ParseError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than zero, got {text!r}")
    exponent = value.as_tuple().exponent
    decimals = -exponent if isinstance(exponent, int) else 0
    if value.adjusted() >= MAX_DIGITS or decimals > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"out of range: {text!r}")
    return value


def positive_int(text: str) -> int:
    value = _integer(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a whole number above zero, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number, zero or more, got {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def seconds(text: str) -> float:
    """A timeout: a finite number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above zero, got {text!r}")
    return value


def asset(text: str) -> str:
    """An asset code such as ``BTC`` (upper-cased: the service's codes are upper case)."""
    try:
        return parse_asset(text.strip().upper())
    except ParseError:
        raise argparse.ArgumentTypeError(f"not an asset code: {text!r}") from None


def pair(text: str) -> str:
    """An asset pair ``BASE/QUOTE`` such as ``BTC/USD``."""
    try:
        return str(AssetPair.parse(text.strip().upper()))
    except ParseError:
        raise argparse.ArgumentTypeError(f"not an asset pair like BTC/USD: {text!r}") from None


def amount(text: str) -> Amount:
    """``<amount> <ASSET>`` such as ``0.5 BTC``, the amount above zero."""
    parts = text.split()
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(
            f"expected an amount with its asset, like '0.5 BTC', got {text!r}"
        )
    value = positive_decimal(parts[0])
    return Amount(value, asset(parts[1]))


def timestamp(text: str) -> datetime:
    """ISO 8601, e.g. ``2026-01-02T03:04:05Z``, ``2026-01-02T03:04:05+02:00`` or ``2026-01-02``.
    A time without a zone is taken as UTC, the service's zone."""
    cleaned = text.strip()
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time like 2026-01-02T03:04:05Z: {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
