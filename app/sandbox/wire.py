"""JSON in and out for the sandbox, and the error bodies of the seed.

Decimals are written as JSON numbers straight from their string form (never via float), and
request bodies are read with ``parse_float=Decimal``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from starlette.responses import Response

from app.domain.money import format_trimmed

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
    """Compact JSON where Decimals keep every digit (``0.1`` stays ``0.1``)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Decimal):
        return format_trimmed(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(encode(item) for item in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


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
        return json.loads(raw, parse_float=Decimal, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise bad_request(f"Malformed JSON body: {exc}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")
