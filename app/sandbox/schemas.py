"""JSON schemas of the sandbox's responses and request values, for its OpenAPI document.

Why: every declared response used to be ``{"type": ["object", "array"]}``, so a client (or a
contract test) learnt nothing from the document. These follow the seed's field tables: names,
types and which fields are always present; fields the sandbox adds are optional. Objects stay
open (``additionalProperties`` is not closed) because the seed tells clients to tolerate unknown
fields. Routes reference them from their ``@endpoint`` declaration.
"""

from __future__ import annotations

from typing import Any

from app.domain.records import EVENT_TYPES, FIAT_FIELDS
from app.sandbox.catalogue import ASSETS, PAIRS

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
TEXT: Schema = {"type": "string", "minLength": 1}
NUMBER: Schema = {"type": "number"}
INTEGER: Schema = {"type": "integer"}
BOOLEAN: Schema = {"type": "boolean"}
#: The one date-time form the service reads and writes: UTC with ``Z`` (an offset such as
#: ``+02:00`` is refused, so the document does not say ``format: date-time``, which allows it).
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$"
TIMESTAMP: Schema = {
    "type": "string",
    "pattern": TIMESTAMP_PATTERN,
    "description": "ISO 8601 UTC with fractional seconds and Z",
}
ASSET: Schema = {"type": "string", "enum": sorted(ASSETS)}
PAIR: Schema = {"type": "string", "enum": sorted(PAIRS)}
#: ``"<amount> <ASSET>"``
AMOUNT: Schema = {"type": "string", "pattern": r"^-?[0-9.]+ [A-Z0-9]+$", "example": "0.5 BTC"}
#: ``"<price> <A>/<B>"``
PRICE: Schema = {
    "type": "string",
    "pattern": r"^[0-9.]+ [A-Z0-9]+/[A-Z0-9]+$",
    "example": "91234.5 BTC/USD",
}
#: ``[price, size]``
LEVEL: Schema = {"type": "array", "items": NUMBER, "minItems": 2, "maxItems": 2}
CLIENT_ORDER_ID: Schema = {"type": "string", "minLength": 1, "maxLength": 128}
PASSWORD_DIGEST: Schema = {"type": "string", "pattern": "^[0-9a-f]{64}$"}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(required: tuple[str, ...] = (), **properties: Schema) -> Schema:
    """An object with these properties, of which ``required`` are always present."""
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def record(required: dict[str, Schema], **optional: Schema) -> Schema:
    """An object whose always-present fields are named once, with their schemas, not twice."""
    return obj(tuple(required), **required, **optional)


def success(required: tuple[str, ...] = (), **properties: Schema) -> Schema:
    """A success body: the payload plus ``status: ok`` and ``httpStatusCode: 200``."""
    return obj(
        (*required, "status", "httpStatusCode"),
        **properties,
        status={"type": "string", "const": "ok"},
        httpStatusCode={"type": "integer", "const": 200},
    )


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def map_of(values: Schema, keys: Schema | None = None) -> Schema:
    schema: Schema = {"type": "object", "additionalProperties": values}
    if keys is not None:
        schema["propertyNames"] = keys
    return schema


_USER = obj(("id", "email", "name"), id=STRING, email=STRING, name=STRING)
_STAMP = obj(("at", "user"), at=TIMESTAMP, user=_USER)

COMPONENTS: dict[str, Schema] = {
    "Error": obj(
        ("errors", "status", "httpStatusCode"),
        errors={"type": "array", "items": STRING, "minItems": 1},
        status=STRING,
        httpStatusCode=INTEGER,
    ),
    "InternalError": obj(("status", "error"), status={"const": 500}, error=STRING),
    "OrderRefusal": obj(
        ("orderId", "errors", "status", "httpStatusCode"),
        tradesSubmitted={"const": False},
        orderId=STRING,
        trades={"type": "array", "maxItems": 0},
        errors={"type": "array", "items": STRING, "minItems": 1},
        status={"const": "failedDependency"},
        httpStatusCode=INTEGER,
    ),
    "OrderResult": obj(
        ("status", "updatedAt", "error"),
        status={"type": "string", "enum": ["submitted", "filled", "canceled", "rejected"]},
        price=PRICE,
        invertedPrice=PRICE,
        executedAt=TIMESTAMP,
        updatedAt=TIMESTAMP,
        total=AMOUNT,
        error=STRING,
    ),
    "Order": record(
        {
            "orderId": STRING,
            "ordering": INTEGER,
            "accountId": STRING,
            "userId": STRING,
            "email": STRING,
            "size": AMOUNT,
            "source": ASSET,
            "destination": ASSET,
            "type": {"type": "string", "enum": ["limit", "market", "rfq"]},
            "submittedAt": TIMESTAMP,
            "result": ref("OrderResult"),
        },
        clientOrderId=STRING,
        limit=PRICE,
        endAt=TIMESTAMP,
    ),
    "LedgerEntry": obj(
        ("ordering", "accountId", "transactionId", "asset", "amount", "eventType", "eventTime"),
        ordering=INTEGER,
        accountId=STRING,
        transactionId=STRING,
        asset=STRING,
        amount=NUMBER,
        eventType={"type": "string", "enum": list(EVENT_TYPES)},
        subEventType={"type": "string", "enum": ["source", "destination"]},
        eventTime=TIMESTAMP,
    ),
    "Transfer": record(
        {
            "ordering": INTEGER,
            "accountId": STRING,
            "transactionId": STRING,
            "asset": STRING,
            "amount": NUMBER,
            "status": {"type": "string", "enum": ["pending", "completed"]},
            "network": STRING,
            "hash": STRING,
            "created": _STAMP,
        },
        completed=_STAMP,
        type={"type": "string", "enum": ["blockchain", "fiat"]},
        method=STRING,
        address=STRING,
    ),
    "Instruction": {
        "anyOf": [
            obj(
                ("asset", "assetType", "networkType", "address"),
                asset=STRING,
                assetType={"const": "blockchain"},
                networkType=STRING,
                address=STRING,
            ),
            record(
                {"asset": STRING, "assetType": {"const": "fiat"}}
                | dict.fromkeys(FIAT_FIELDS, STRING)
            ),
        ]
    },
    "QuoteSide": obj(
        ("price", "source", "destination", "expiresAt"),
        price=PRICE,
        source=AMOUNT,
        destination=AMOUNT,
        expiresAt=TIMESTAMP,
    ),
}

ORDER = ref("Order")


def account(balance: Schema) -> Schema:
    """Get Account and Get Account Credit: one wrapper, a map of asset to ``balance``."""
    return success(
        ("account",),
        account=obj(
            ("accountId", "type", "name", "balances"),
            accountId=STRING,
            type=STRING,
            name=STRING,
            balances=map_of(balance, ASSET),
        ),
    )


def numbers(*names: str) -> Schema:
    """An object of these number fields, all present."""
    return obj(names, **dict.fromkeys(names, NUMBER))
