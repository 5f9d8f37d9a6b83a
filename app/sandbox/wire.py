"""JSON in and out for the sandbox, and the error bodies of the seed.

Decimals are written as JSON numbers straight from their string form (never via float), and
request bodies are read with ``parse_float=Decimal``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from json import encoder as _json_encoder
from typing import Any

from starlette.responses import Response

from app.domain.money import format_trimmed

#: The json module's own escapers (its C versions when built): what ``json.dumps`` of a string
#: calls, without building an encoder per call.
_encode_string = _json_encoder.encode_basestring
_encode_key = _json_encoder.encode_basestring_ascii

#: Decimal texts remembered by :func:`_decimal_text`, forgotten all at once past this many.
_DECIMAL_TEXTS_KEPT = 4096
_DECIMAL_TEXTS: dict[Decimal, str] = {}

_STATUS_WORDS = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "notFound",
    405: "methodNotAllowed",
    408: "requestTimeout",
    409: "conflict",
    410: "gone",
    413: "payloadTooLarge",
    424: "failedDependency",
    429: "tooManyRequests",
    503: "serviceUnavailable",
}


def encode(value: Any) -> str:
    """Compact JSON where Decimals keep every digit (``0.1`` stays ``0.1``).

    Written into one list of parts, with the json module's C string escapers, rather than as
    nested joins over generators of ``json.dumps``: encoding was most of what the top-of-book
    handler cost. The text is the same: strings as ``json.dumps(s,
    ensure_ascii=False)``, keys as ``json.dumps(str(k))``.
    """
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, parts: list[str]) -> None:
    kind = type(value)
    if kind is str:
        parts.append(_encode_string(value))
    elif kind is Decimal:
        parts.append(_decimal_text(value))
    elif kind is int:
        parts.append(str(value))
    elif kind is dict:
        _write_object(value, parts)
    elif kind is list or kind is tuple:
        _write_array(value, parts)
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    else:
        _write_subclass(value, parts)


def _decimal_text(value: Decimal) -> str:
    """:func:`format_trimmed`, remembered: the same prices and sizes are written again and
    again between two market ticks. Equal Decimals (``1.50`` and ``1.5``, ``0`` and ``-0``)
    trim to the same text, so the value is the key."""
    text = _DECIMAL_TEXTS.get(value)
    if text is None:
        if len(_DECIMAL_TEXTS) >= _DECIMAL_TEXTS_KEPT:
            _DECIMAL_TEXTS.clear()
        text = _DECIMAL_TEXTS[value] = format_trimmed(value)
    return text


def _write_subclass(value: Any, parts: list[str]) -> None:
    """Subclasses of the plain types (str and int enums, ...), written as the plain types are."""
    if isinstance(value, Decimal):
        parts.append(format_trimmed(value))
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, str):
        parts.append(_encode_string(value))
    elif isinstance(value, dict):
        _write_object(value, parts)
    elif isinstance(value, list | tuple):
        _write_array(value, parts)
    else:
        raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _write_object(value: dict[Any, Any], parts: list[str]) -> None:
    parts.append("{")
    first = True
    for key, item in value.items():
        if not first:
            parts.append(",")
        first = False
        parts.append(_encode_key(str(key)))
        parts.append(":")
        _write(item, parts)
    parts.append("}")


def _write_array(value: list[Any] | tuple[Any, ...], parts: list[str]) -> None:
    parts.append("[")
    first = True
    for item in value:
        if not first:
            parts.append(",")
        first = False
        _write(item, parts)
    parts.append("]")


def booking_head(row: Any, transaction_column: str) -> dict[str, Any]:
    """The fields a ledger entry and a deposit/withdrawal record open with, from a stored row
    (``transaction_column`` names the row's column that is the wire's ``transactionId``)."""
    return {
        "ordering": row["ordering"],
        "accountId": row["account_id"],
        "transactionId": row[transaction_column],
        "asset": row["asset"],
        "amount": Decimal(row["amount"]),
    }


def json_response(
    body: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(
        encode(body).encode(), status_code, headers=headers, media_type="application/json"
    )


def ok(body: dict[str, Any]) -> dict[str, Any]:
    """A success body: the payload plus ``status: ok`` and ``httpStatusCode: 200``."""
    return {**body, "status": "ok", "httpStatusCode": 200}


class ApiError(Exception):
    """A refusal with a ready-made body; the server turns it into the response."""

    def __init__(
        self, status_code: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{status_code}: {body}")
        self.status_code = status_code
        self.body = body
        self.headers = headers or {}

    @property
    def messages(self) -> list[str]:
        errors = self.body.get("errors")
        return [str(e) for e in errors] if isinstance(errors, list) else [str(self.body)]


def error(status_code: int, *messages: str, headers: dict[str, str] | None = None) -> ApiError:
    """The generic failure body: ``errors``, a status word and ``httpStatusCode``."""
    body = {
        "errors": list(messages),
        "status": _STATUS_WORDS.get(status_code, "error"),
        "httpStatusCode": status_code,
    }
    return ApiError(status_code, body, headers)


def bad_request(*messages: str) -> ApiError:
    return error(400, *messages)


def order_refusal(status_code: int, order_id: str, message: str, *, trades: bool) -> ApiError:
    """The limit-order failure bodies of the seed: with ``tradesSubmitted``/``trades`` for invalid
    input and plain insufficient funds, without them for credit refusals."""
    body: dict[str, Any] = {}
    if trades:
        body = {"tradesSubmitted": False, "orderId": order_id, "trades": []}
    else:
        body = {"orderId": order_id}
    body.update({"errors": [message], "status": "failedDependency", "httpStatusCode": status_code})
    return ApiError(status_code, body)


def internal_error_body(message: str = "Internal Server Error") -> dict[str, Any]:
    """The seed's 500 shape: an integer ``status`` and an ``error`` string."""
    return {"status": 500, "error": message}


def decode_body(raw: bytes) -> Any:
    """A request body as JSON with Decimal numbers; malformed JSON is a 400."""
    if not raw.strip():
        raise bad_request("Request body is empty; a JSON object is required")
    try:
        return json.loads(
            raw,
            parse_float=Decimal,
            parse_constant=_refuse_constant,
            object_pairs_hook=_unique_keys,
        )
    except (ValueError, RecursionError) as exc:
        raise bad_request(f"Malformed JSON body: {exc}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose key appears twice is refused: which of the two values counts is
    decided differently by different parsers (a proxy may check one, the service act on the
    other)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears more than once")
        found[key] = value
    return found
