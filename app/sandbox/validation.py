"""Checks of request values shared by the sandbox's routes; each failure is a 400 that says why."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from app.domain import ParseError, parse_decimal, parse_timestamp
from app.domain.money import MONEY_CONTEXT
from app.sandbox.catalogue import ASSETS, AssetSpec
from app.sandbox.wire import bad_request

MAX_CLIENT_ORDER_ID = 128
MAX_QUANTITY = Decimal("1e15")


def require_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request("Request body must be a JSON object")
    return body


def asset(value: Any, field: str) -> AssetSpec:
    if value is None:
        raise bad_request(f"{field} is required")
    if not isinstance(value, str):
        raise bad_request(f"{field} must be a string asset code")
    spec = ASSETS.get(value)
    if spec is None:
        known = ", ".join(sorted(ASSETS))
        raise bad_request(f"Unknown asset {value!r} in {field}; known assets: {known}")
    return spec


def positive_quantity(value: Any, field: str, spec: AssetSpec) -> Decimal:
    """A size in ``spec``'s asset: ``"0.5"``, ``"0.5 BTC"`` or a JSON number; > 0, not too fine."""
    if value is None:
        raise bad_request(f"{field} is required")
    text = value
    if isinstance(value, str):
        parts = value.split()
        if len(parts) == 2:
            if parts[1] != spec.code:
                raise bad_request(f"{field} is in {parts[1]} but must be in {spec.code}")
            text = parts[0]
        elif len(parts) != 1:
            raise bad_request(f"{field} must look like '0.5' or '0.5 {spec.code}', got {value!r}")
    number = decimal_value(text, field)
    if number <= 0:
        raise bad_request(f"{field} must be greater than zero, got {value!r}")
    if number >= MAX_QUANTITY:
        raise bad_request(f"{field} is too large: {value!r}")
    quantized = number.quantize(spec.quantum, context=MONEY_CONTEXT)
    if quantized != number:
        raise bad_request(
            f"{field} has more than the {spec.decimals} decimal places allowed for {spec.code}"
        )
    return quantized


def decimal_value(value: Any, field: str) -> Decimal:
    if isinstance(value, float):  # cannot happen with parse_float=Decimal; refuse all the same
        raise bad_request(f"{field} must be an exact number")
    try:
        return parse_decimal(value, field)
    except ParseError as exc:
        raise bad_request(f"Invalid {field}: {exc.problem}") from None


def optional_string(body: Mapping[str, Any], field: str, max_length: int = 256) -> str | None:
    """The field when present; absent is None, but an explicit ``null`` is refused: a client
    that sent ``"clientOrderId": null`` meant an id and would lose its idempotency silently."""
    if field not in body:
        return None
    value = body[field]
    if value is None:
        raise bad_request(f"{field} must be a string when given (null is not an id)")
    if not isinstance(value, str):
        raise bad_request(f"{field} must be a string")
    if not value or len(value) > max_length:
        raise bad_request(f"{field} must be 1 to {max_length} characters")
    return value


def timestamp(value: Any, field: str) -> datetime:
    try:
        return parse_timestamp(value, field)
    except ParseError as exc:
        raise bad_request(f"Invalid {field}: {exc.problem}") from None


# -- query strings --------------------------------------------------------------------------
#
# A parameter that is absent takes its default; one that is present must hold a value of its
# type. ``?max=`` is refused (400) rather than read as absent, as the OpenAPI document says.


def _given(params: Mapping[str, str], name: str) -> str | None:
    raw = params.get(name)
    if raw == "":
        raise bad_request(f"Query parameter {name} is empty; leave it out or give a value")
    return raw


def query_int(
    params: Mapping[str, str],
    name: str,
    *,
    required: bool = False,
    default: int | None = None,
    minimum: int = 0,
    maximum: int = 2**62,
) -> int | None:
    raw = _given(params, name)
    if raw is None:
        if required:
            raise bad_request(f"Query parameter {name} is required")
        return default
    if not (raw.isascii() and raw.strip().isdigit()):
        raise bad_request(f"Query parameter {name} must be a whole number, got {raw!r}")
    number = int(raw)
    if not minimum <= number <= maximum:
        raise bad_request(f"Query parameter {name} must be between {minimum} and {maximum}")
    return number


def query_bool(params: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _given(params, name)
    if raw is None:
        return default
    lowered = raw.lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise bad_request(f"Query parameter {name} must be true or false, got {raw!r}")


def query_time(params: Mapping[str, str], name: str) -> datetime | None:
    raw = _given(params, name)
    if raw is None:
        return None
    return timestamp(raw, name)


def query_asset(params: Mapping[str, str], name: str) -> str | None:
    raw = _given(params, name)
    if raw is None:
        return None
    return asset(raw, name).code


def query_choice(params: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str | None:
    raw = _given(params, name)
    if raw is None:
        return None
    if raw not in choices:
        raise bad_request(f"Query parameter {name} must be one of {', '.join(choices)}")
    return raw
