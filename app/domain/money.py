"""Exact money values: amounts ("0.5 BTC"), prices ("91234.5 BTC/USD") and asset pairs.

Everything is ``Decimal``; a float never takes part. Prices follow the FX pair convention of
design.md §2: ``"p A/B"`` means one A is worth ``p`` B.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation, localcontext

from app.domain.errors import ParseError

#: Enough precision for 18 decimal places on 1e12 and for 1/x of such numbers.
MONEY_CONTEXT = Context(prec=50)

#: Numbers beyond 1e±40 are refused: no amount or price is that large or small, and huge
#: exponents make Decimal arithmetic (and int()) slow or overflow.
MAX_EXPONENT = 40

_ASSET_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$")
_NUMBER_RE = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def parse_decimal(value: object, field: str = "") -> Decimal:
    """A finite Decimal from a JSON number (already Decimal or int) or a numeric string.

    Floats are refused: bodies are decoded with ``parse_float=Decimal`` so a float here is a bug.
    """
    if isinstance(value, bool):
        raise ParseError(field, "expected a number, got a boolean")
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, str):
        text = value.strip()
        if not _NUMBER_RE.match(text):
            raise ParseError(field, f"not a number: {value!r}")
        try:
            number = Decimal(text)
        except InvalidOperation:
            raise ParseError(field, f"not a number: {value!r}") from None
    else:
        raise ParseError(field, f"expected a number, got {type(value).__name__}")
    if not number.is_finite():
        raise ParseError(field, f"not a finite number: {value!r}")
    if not number.is_zero() and not -MAX_EXPONENT <= number.adjusted() <= MAX_EXPONENT:
        raise ParseError(field, f"number out of range: {value!r}")
    return number


def parse_asset(value: object, field: str = "asset") -> str:
    """An asset code such as ``BTC``; letters, digits and ``._-``, at most 20 characters."""
    if not isinstance(value, str):
        raise ParseError(field, f"expected an asset code, got {type(value).__name__}")
    if not _ASSET_RE.match(value):
        raise ParseError(field, f"not an asset code: {value!r}")
    return value


def format_decimal(value: Decimal) -> str:
    """Plain notation without exponent (``1E-5`` becomes ``0.00001``) and without ``-0``."""
    text = format(value, "f")
    if text.startswith("-") and value.is_zero():
        text = text[1:]
    return text


def format_trimmed(value: Decimal) -> str:
    """Plain notation without trailing fractional zeros: ``0.50000000`` becomes ``0.5``.

    Exact for any number of digits (unlike ``normalize()``, which rounds to the context).
    """
    text = format_decimal(value)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def divide(numerator: Decimal, denominator: Decimal) -> Decimal:
    """Exact-as-possible division in the money context (50 significant digits)."""
    with localcontext(MONEY_CONTEXT):
        return numerator / denominator


def _two_parts(text: object, field: str, form: str, sep: str | None = None) -> tuple[str, str]:
    """``text`` split in two at ``sep`` (white space by default), else the ParseError naming
    ``form``: the first step of every wire value parser here."""
    if not isinstance(text, str):
        raise ParseError(field, f"expected '{form}', got {type(text).__name__}")
    parts = text.split(sep)
    if len(parts) != 2:
        raise ParseError(field, f"expected '{form}', got {text!r}")
    return parts[0], parts[1]


@dataclass(frozen=True, slots=True)
class Amount:
    """A quantity of one asset, e.g. ``Amount(Decimal("0.5"), "BTC")`` for ``"0.5 BTC"``."""

    value: Decimal
    asset: str

    @classmethod
    def parse(cls, text: object, field: str = "amount") -> Amount:
        value, asset = _two_parts(text, field, "<amount> <ASSET>")
        return cls(parse_decimal(value, field), parse_asset(asset, field))

    def __str__(self) -> str:
        return f"{format_decimal(self.value)} {self.asset}"


@dataclass(frozen=True, slots=True)
class AssetPair:
    """An asset pair ``BASE/QUOTE``; prices on it are in QUOTE per one BASE."""

    base: str
    quote: str

    @classmethod
    def parse(cls, text: object, field: str = "assetPair") -> AssetPair:
        first, second = _two_parts(text, field, "<BASE>/<QUOTE>", "/")
        base, quote = parse_asset(first, field), parse_asset(second, field)
        if base == quote:
            raise ParseError(field, f"base and quote are the same asset: {text!r}")
        return cls(base, quote)

    def inverted(self) -> AssetPair:
        return AssetPair(self.quote, self.base)

    def __str__(self) -> str:
        return f"{self.base}/{self.quote}"


@dataclass(frozen=True, slots=True)
class Price:
    """``value`` units of ``quote`` for one ``base``: ``"91234.5 BTC/USD"`` is 91234.5 USD/BTC."""

    value: Decimal
    base: str
    quote: str

    @classmethod
    def parse(cls, text: object, field: str = "price") -> Price:
        value, pair_text = _two_parts(text, field, "<price> <A>/<B>")
        pair = AssetPair.parse(pair_text, field)
        return cls(parse_decimal(value, field), pair.base, pair.quote)

    @property
    def pair(self) -> AssetPair:
        return AssetPair(self.base, self.quote)

    def invert(self) -> Price:
        """The same rate seen from the other side: ``1/value``, assets swapped."""
        if self.value.is_zero():
            raise ZeroDivisionError("cannot invert a zero price")
        return Price(divide(Decimal(1), self.value), self.quote, self.base)

    def convert(self, amount: Amount) -> Amount:
        """What ``amount`` of the base asset is worth in the quote asset at this price."""
        if amount.asset != self.base:
            raise ValueError(f"cannot convert {amount.asset} with a {self.pair} price")
        with localcontext(MONEY_CONTEXT):
            return Amount(amount.value * self.value, self.quote)

    def __str__(self) -> str:
        return f"{format_decimal(self.value)} {self.base}/{self.quote}"
