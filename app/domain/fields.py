"""Reading wire objects field by field: strict about what we need, tolerant of everything else.

``Fields(obj, "order")`` wraps one JSON object; each accessor names the field in the error it
raises (``order.result.price: ...``), ignores fields nobody asked for, and never lets a
KeyError or TypeError escape.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from app.domain.errors import ParseError
from app.domain.money import Amount, Price, parse_decimal
from app.domain.timefmt import parse_timestamp

T = TypeVar("T")
V = TypeVar("V")

_MISSING = object()
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Fields:
    """Typed access to one JSON object; ``where`` is its path for error messages."""

    def __init__(self, obj: object, where: str) -> None:
        if not isinstance(obj, dict):
            raise ParseError(where, f"expected an object, got {_kind(obj)}")
        self._obj: dict[str, Any] = obj
        self.where = where

    def _path(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def _get(self, name: str, required: bool) -> Any:
        value = self._obj.get(name, _MISSING)
        if value is _MISSING or value is None:
            if required:
                raise ParseError(self._path(name), "required field is missing")
            return None
        return value

    def has(self, name: str) -> bool:
        return self._obj.get(name) is not None

    def _typed(self, name: str, required: bool, default: V, kind: type[V], expected: str) -> V:
        """The value when it is a ``kind`` (``default`` when optional and absent); else the
        ParseError saying it was not ``expected``."""
        value = self._get(name, required)
        if value is None:
            return default
        if not isinstance(value, kind):
            raise ParseError(self._path(name), f"expected {expected}, got {_kind(value)}")
        return value

    def text(self, name: str, *, required: bool = True, default: str = "") -> str:
        return self._typed(name, required, default, str, "a string")

    def integer(self, name: str, *, required: bool = True, default: int = 0) -> int:
        value = self._get(name, required)
        if value is None:
            return default
        if isinstance(value, bool):
            raise ParseError(self._path(name), "expected an integer, got a boolean")
        if not isinstance(value, int):
            number = parse_decimal(value, self._path(name))
            if number != number.to_integral_value():
                raise ParseError(self._path(name), f"expected an integer, got {value!r}")
            value = int(number)
        if not INT64_MIN <= value <= INT64_MAX:
            raise ParseError(self._path(name), f"integer out of range (int64): {value!r}")
        return value

    def flag(self, name: str, *, required: bool = True, default: bool = False) -> bool:
        return self._typed(name, required, default, bool, "true or false")

    def decimal(self, name: str, *, required: bool = True) -> Decimal:
        value = self._get(name, required)
        if value is None:
            return Decimal(0)
        return parse_decimal(value, self._path(name))

    def optional_decimal(self, name: str) -> Decimal | None:
        value = self._get(name, False)
        return None if value is None else parse_decimal(value, self._path(name))

    def amount(self, name: str) -> Amount:
        return Amount.parse(self._get(name, True), self._path(name))

    def optional_amount(self, name: str) -> Amount | None:
        return self._optional(name, Amount.parse)

    def price(self, name: str) -> Price:
        return Price.parse(self._get(name, True), self._path(name))

    def optional_price(self, name: str) -> Price | None:
        return self._optional(name, Price.parse)

    def time(self, name: str) -> datetime:
        return parse_timestamp(self._get(name, True), self._path(name))

    def optional_time(self, name: str) -> datetime | None:
        return self._optional(name, parse_timestamp)

    def _optional(self, name: str, parse: Callable[[object, str], T]) -> T | None:
        """An optional wire value: absent, null or "" is None, anything else parsed (a
        malformed one still raises, naming where)."""
        value = self._get(name, False)
        if value is None or value == "":
            return None
        return parse(value, self._path(name))

    def obj(self, name: str, *, required: bool = True) -> Fields | None:
        value = self._get(name, required)
        return None if value is None else Fields(value, self._path(name))

    def need_obj(self, name: str) -> Fields:
        return Fields(self._get(name, True), self._path(name))

    def array(
        self, name: str, parse: Callable[[object, str], T], *, required: bool = True
    ) -> list[T]:
        value = self._get(name, required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise ParseError(self._path(name), f"expected an array, got {_kind(value)}")
        return [parse(item, f"{self._path(name)}[{index}]") for index, item in enumerate(value)]

    def mapping(self, name: str, parse: Callable[[object, str], T]) -> dict[str, T]:
        value = self._get(name, True)
        if not isinstance(value, dict):
            raise ParseError(self._path(name), f"expected an object, got {_kind(value)}")
        return {str(key): parse(item, f"{self._path(name)}.{key}") for key, item in value.items()}

    @property
    def raw(self) -> dict[str, Any]:
        return self._obj


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | Decimal | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
