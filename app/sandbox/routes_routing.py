"""Routing: market data, estimates, orders, RFQ, order queries, pairs and service time."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from starlette.responses import Response

from app.domain import format_timestamp
from app.domain.money import divide, format_trimmed
from app.sandbox import queries
from app.sandbox.api import Call, Handler, Param, endpoint
from app.sandbox.catalogue import ASSETS, PAIRS
from app.sandbox.market import MAX_BOOK_LEVELS
from app.sandbox.pricing import current_quote, route_for, significant
from app.sandbox.queries import MAX_ORDERS, ORDER_STATUSES, ORDER_TYPES
from app.sandbox.schemas import (
    AMOUNT,
    ASSET,
    CLIENT_ORDER_ID,
    INTEGER,
    LEVEL,
    NUMBER,
    ORDER,
    PAIR,
    PRICE,
    STRING,
    TEXT,
    TIMESTAMP,
    TIMESTAMP_PATTERN,
    Schema,
    array,
    map_of,
    obj,
    record,
    ref,
    success,
)
from app.sandbox.validation import asset, positive_quantity, query_int
from app.sandbox.wire import ApiError, bad_request, error, ok, order_refusal

ACCOUNT = "/api/v1/routing/account/{accountId}"
_ASSETS = tuple(sorted(ASSETS))
#: A positive decimal size, optionally followed by its asset (``0.5`` or ``0.5 BTC``).
_SIZE = r"^[0-9]*\.?[0-9]+( [A-Z]+)?$"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PAIR_NAME = "(" + "|".join(sorted(PAIRS)) + ")"
_PAIRS = Param(
    "assetPairs",
    "Comma-separated pairs like BTC/USD,ETH/USD (absent or empty: all pairs)",
    pattern=f"^({_PAIR_NAME}( *, *{_PAIR_NAME})*)?$",
)
_TOP_OF_BOOK = success(
    ("topOfBooks",),
    topOfBooks=map_of(obj(("spread", "ask", "bid"), spread=NUMBER, ask=LEVEL, bid=LEVEL), PAIR),
)
_ORDER_ANSWER = success(("order",), order=ORDER)
#: Order routes answer invalid input and refusals with the seed's order refusal body.
_ORDER_ERRORS = {400: "OrderRefusal", 424: "OrderRefusal", 500: "InternalError"}


def _pair_names(raw: str | None) -> list[str]:
    if not raw:
        return sorted(PAIRS)
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if not names:
        raise bad_request("assetPairs names no pair; give e.g. BTC/USD,ETH/USD")
    unknown = [name for name in names if name not in PAIRS]
    if unknown:
        raise bad_request(
            f"Unknown asset pair {', '.join(unknown)}; available: {', '.join(sorted(PAIRS))}"
        )
    return names


async def _top_of_book(call: Call) -> Response:
    body = call.sandbox.top_bodies.body(
        call.sandbox.market, call.params.get("assetPairs") or "", _pair_names
    )
    return Response(body, media_type="application/json")


def _read_route(
    path: str, summary: str, query: tuple[Param, ...], response: Schema
) -> Callable[[Handler], Handler]:
    """Top of book and the order query stand at the spec's path and at the usage example's
    variant: both paths of each are declared alike, so they refuse and answer alike."""
    return endpoint(
        "GET", path, summary, tag="routing", query=query, errors=(400, 401, 403), response=response
    )


@_read_route(
    ACCOUNT + "/topofbook", "Get top of book: ask and bid as [price, size]", (_PAIRS,), _TOP_OF_BOOK
)
async def top_of_book(call: Call) -> Response:
    return await _top_of_book(call)


@_read_route(
    "/api/v1/routing/ops/account/{accountId}/topofbook",
    "Get top of book (the usage example's path variant)",
    (_PAIRS,),
    _TOP_OF_BOOK,
)
async def top_of_book_ops(call: Call) -> Response:
    return await _top_of_book(call)


@endpoint(
    "GET",
    ACCOUNT + "/book",
    "Get order book: bids and asks as [price, size] per level",
    tag="routing",
    extension=True,
    errors=(400, 401, 403),
    query=(
        Param("assetPair", "The pair, e.g. ETH/BTC", required=True, enum=tuple(sorted(PAIRS))),
        Param(
            "levels",
            f"Levels per side (1-{MAX_BOOK_LEVELS}, default 25)",
            "integer",
            minimum=1,
            maximum=MAX_BOOK_LEVELS,
        ),
    ),
    response=success(
        ("assetPair", "bids", "asks", "timestamp"),
        assetPair=PAIR,
        bids=array(LEVEL),
        asks=array(LEVEL),
        timestamp=TIMESTAMP,
    ),
)
async def order_book(call: Call) -> dict[str, Any]:
    name = call.params.get("assetPair")
    if not name:
        raise bad_request("Query parameter assetPair is required")
    if name not in PAIRS:
        raise bad_request(f"assetPair must be one of {', '.join(sorted(PAIRS))}, got {name!r}")
    levels = query_int(call.params, "levels", default=25, minimum=1, maximum=MAX_BOOK_LEVELS)
    assert levels is not None
    book = call.sandbox.market.book(name, levels)
    return ok(
        {
            "assetPair": name,
            "bids": [list(level) for level in book.bids],
            "asks": [list(level) for level in book.asks],
            "timestamp": format_timestamp(call.now),
        }
    )


@endpoint(
    "GET",
    ACCOUNT + "/order/estimate",
    "Request indicative price for selling size of source",
    tag="routing",
    errors=(400, 401, 403),
    query=(
        Param("source", "Asset sold", required=True, enum=_ASSETS),
        Param("destination", "Asset bought", required=True, enum=_ASSETS),
        Param("size", "Amount of source asset", required=True, pattern=_SIZE),
        Param(
            "quote",
            "Asset in which the price is shown (source or destination)",
            required=True,
            enum=_ASSETS,
        ),
    ),
    response=success(
        ("source", "destination", "price"), source=AMOUNT, destination=AMOUNT, price=PRICE
    ),
)
async def estimate(call: Call) -> dict[str, Any]:
    params = call.params
    source = asset(params.get("source"), "source")
    destination = asset(params.get("destination"), "destination")
    route = route_for(source.code, destination.code)
    size = positive_quantity(params.get("size"), "size", source)
    quote_asset = params.get("quote")
    if quote_asset not in (source.code, destination.code):
        raise bad_request("quote must be the source or the destination asset")
    top = current_quote(call.sandbox.market, route)
    total = route.total(size, top)
    rate = route.rate(top)  # destination per source
    if quote_asset == destination.code:
        price = f"{format_trimmed(significant(rate))} {source.code}/{destination.code}"
    else:
        inverse = top.ask if not route.source_is_base else significant(divide(Decimal(1), rate))
        price = f"{format_trimmed(inverse)} {destination.code}/{source.code}"
    return ok(
        {
            "source": f"{format_trimmed(size)} {source.code}",
            "destination": f"{format_trimmed(total)} {destination.code}",
            "price": price,
        }
    )


_ORDER_BODY = dict(
    accountId=obj(("value",), value=TEXT),
    type={"type": "string", "enum": ["limit", "market"]},
    source=ASSET,
    destination=ASSET,
    size={"type": ["string", "number"], "example": "0.5"},
    clientOrderId=CLIENT_ORDER_ID,
    limit={"type": ["string", "number"], "example": "59000"},
    endAt=TIMESTAMP,
)


@endpoint(
    "POST",
    ACCOUNT + "/order/limit",
    "Submit limit order (sell size of source for destination)",
    tag="routing",
    errors=(400, 401, 403, 409, 424, 500),
    body=obj(
        ("accountId", "source", "destination", "size"),
        **{**_ORDER_BODY, "type": {"type": "string", "enum": ["limit"]}},
    ),
    response=_ORDER_ANSWER,
    error_bodies=_ORDER_ERRORS,
)
async def limit_order(call: Call) -> dict[str, Any]:
    return _submit(call, await _order_body(call), "limit")


@endpoint(
    "POST",
    ACCOUNT + "/order",
    "Submit market order (type market) or limit order (type limit)",
    tag="routing",
    extension=True,
    errors=(400, 401, 403, 409, 424, 500),
    body=obj(("type", "source", "destination", "size"), **_ORDER_BODY),
    response=_ORDER_ANSWER,
    error_bodies=_ORDER_ERRORS,
)
async def market_order(call: Call) -> dict[str, Any]:
    return _submit(call, await _order_body(call), "market")


async def _order_body(call: Call) -> Any:
    try:
        return await call.json()
    except ApiError as exc:
        if exc.status_code != 400:
            raise
        raise order_refusal(400, str(uuid.uuid4()), "; ".join(exc.messages), trades=True) from None


def _submit(call: Call, body: Any, path_type: str) -> dict[str, Any]:
    return call.sandbox.orders.submit(call.user, call.account_id, body, call.now, path_type)


@endpoint(
    "POST",
    ACCOUNT + "/order/rfq",
    "Request quote (RFQ): a buy and a sell side that expire",
    tag="routing",
    errors=(400, 401, 403),
    body=obj(
        ("assetPair", "size"),
        assetPair=PAIR,
        size=AMOUNT,
        clientOrderId=CLIENT_ORDER_ID,
    ),
    response=success(
        ("orderId", "assetPair", "size", "buy", "sell"),
        orderId=TEXT,
        assetPair=PAIR,
        size=AMOUNT,
        clientOrderId=STRING,
        buy=ref("QuoteSide"),
        sell=ref("QuoteSide"),
    ),
)
async def request_quote(call: Call) -> dict[str, Any]:
    return call.sandbox.quotes.request(call.user, call.account_id, await call.json(), call.now)


@endpoint(
    "POST",
    ACCOUNT + "/order/rfq/{orderId}/accept",
    "Accept one side of a quote before it expires",
    tag="routing",
    errors=(400, 401, 403, 404, 409, 410, 424),
    body=obj(("side",), side={"type": "string", "enum": ["buy", "sell"]}),
    response=_ORDER_ANSWER,
    error_bodies={424: "OrderRefusal"},
)
async def accept_quote(call: Call) -> dict[str, Any]:
    sandbox = call.sandbox
    return sandbox.quotes.accept(
        call.user,
        call.account_id,
        call.path("orderId"),
        await call.json(),
        call.now,
        sandbox.orders,
    )


_ORDER_QUERY = (
    Param(
        "max",
        f"Maximum number of orders (1-{MAX_ORDERS}, default 100)",
        "integer",
        minimum=1,
        maximum=MAX_ORDERS,
    ),
    Param("submittedAtStart", "Orders submitted at or after", pattern=TIMESTAMP_PATTERN),
    Param("submittedAtEnd", "Orders submitted before", pattern=TIMESTAMP_PATTERN),
    Param("source", "Asset sold", enum=_ASSETS),
    Param("destination", "Asset bought", enum=_ASSETS),
    Param("type", "limit, market or rfq", enum=ORDER_TYPES),
    Param("status", "submitted, filled, canceled or rejected", enum=ORDER_STATUSES),
    Param(
        "startAtOrdering",
        "Begin at this ordering (inclusive, in the direction read)",
        "integer",
        minimum=0,
    ),
    Param("asc", "true: oldest first; default newest first", "boolean"),
    Param("clientOrderId", "Sandbox extension: only orders with this clientOrderId (empty: any)"),
)
_ORDERS = success(("max", "orders"), max=INTEGER, orders=array(ORDER))


@_read_route(
    "/api/v1/routing/order/account/{accountId}", "Query multiple orders", _ORDER_QUERY, _ORDERS
)
async def query_orders(call: Call) -> dict[str, Any]:
    return ok(queries.orders(call.sandbox.store, call.account_id, call.params))


@_read_route(
    "/api/v1/routing/ops/order/account/{accountId}/orders",
    "Query multiple orders (the usage example's path variant)",
    _ORDER_QUERY,
    _ORDERS,
)
async def query_orders_ops(call: Call) -> dict[str, Any]:
    return ok(queries.orders(call.sandbox.store, call.account_id, call.params))


@endpoint(
    "GET",
    "/api/v1/routing/order/account/{accountId}/order/{orderId}",
    "Get order",
    tag="routing",
    errors=(401, 403, 404),
    response=_ORDER_ANSWER,
)
async def get_order(call: Call) -> dict[str, Any]:
    orders = call.sandbox.orders
    row = orders.get_row(call.path("orderId"))
    if row is None or row["account_id"] != call.account_id:
        raise error(404, f"Order {call.path('orderId')} not found")
    return ok({"order": orders.view(row)})


@endpoint(
    "GET",
    ACCOUNT + "/pairs",
    "Available asset pairs with increments and precisions",
    tag="routing",
    extension=True,
    errors=(401, 403),
    response=success(
        ("assetPairs",),
        assetPairs=array(
            record(
                {
                    "assetPair": PAIR,
                    "base": ASSET,
                    "quote": ASSET,
                    "priceIncrement": NUMBER,
                    "baseDecimals": INTEGER,
                    "quoteDecimals": INTEGER,
                }
            )
        ),
    ),
)
async def asset_pairs(call: Call) -> dict[str, Any]:
    pairs = [
        {
            "assetPair": name,
            "base": spec.pair.base,
            "quote": spec.pair.quote,
            "priceIncrement": spec.tick,
            "baseDecimals": ASSETS[spec.pair.base].decimals,
            "quoteDecimals": ASSETS[spec.pair.quote].decimals,
        }
        for name, spec in sorted(PAIRS.items())
    ]
    return ok({"assetPairs": pairs})


@endpoint(
    "GET",
    "/api/v1/routing/time",
    "Service time (for clock offset estimates)",
    tag="routing",
    auth=False,
    extension=True,
    errors=(),
    response=success(("time", "unixMillis"), time=TIMESTAMP, unixMillis=INTEGER),
)
async def service_time(call: Call) -> dict[str, Any]:
    now = call.now
    millis = (now - _EPOCH) // timedelta(milliseconds=1)
    return ok({"time": format_timestamp(now), "unixMillis": millis})
