"""Limit and market orders: validation, idempotent submission, resting orders and the matcher.

Statuses (app/sandbox/README.md): ``submitted`` — a limit order resting with its source funds
locked; ``filled`` — traded in full at one price; ``canceled`` — a resting order whose ``endAt``
passed, funds unlocked; ``rejected`` — refused for funds or credit (424), kept so a replay of its
clientOrderId returns the same refusal. Invalid input (400) creates no order.
"""

from __future__ import annotations

import bisect
import heapq
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from app.domain import AssetPair, ParseError, format_timestamp, parse_decimal, utc_now
from app.domain.money import divide, format_trimmed
from app.sandbox.auth import Principal
from app.sandbox.config import CreditHours
from app.sandbox.funds import book_trade, check_funds
from app.sandbox.market import Market, MarketQuote
from app.sandbox.pricing import Route, current_quote, route_for, significant
from app.sandbox.store import Store
from app.sandbox.validation import (
    MAX_CLIENT_ORDER_ID,
    asset,
    optional_string,
    positive_quantity,
    require_object,
    timestamp,
)
from app.sandbox.wire import ApiError, bad_request, encode, error, ok, order_refusal

REPLAY_WINDOW = timedelta(hours=24)
LIMIT_MIN, LIMIT_MAX = Decimal("1e-12"), Decimal("1e12")
OPEN_STATUS = "submitted"
#: Longest stretch of matching work before the server's loop gets a turn (``match_slice``).
SLICE_SECONDS = 0.002


@dataclass(frozen=True)
class OrderRequest:
    order_type: str
    route: Route
    size: Decimal
    limit: Decimal | None
    end_at: datetime | None
    client_order_id: str | None


class _NotOpen(Exception):
    """A compare-and-set on an order's status found it no longer open: roll the booking back."""


class RestingIndex:
    """Resting orders in memory, by route and limit, and by ``endAt``, so a matcher pass looks
    only at the orders the current price crosses (a prefix of each route's list, sorted by the
    least destination-per-source accepted) and the ones whose time is up.

    Loaded from the store at start and kept in step with every booking by the one process that
    may write the database (see ``store.WriterLock``). The store stays the truth: a fill is a
    compare-and-set there, and an entry found stale is dropped.
    """

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], list[tuple[Decimal, str]]] = {}
        self._ends: list[tuple[str, str]] = []
        self._orders: dict[str, tuple[tuple[str, str], Decimal]] = {}

    def __len__(self) -> int:
        return len(self._orders)

    def __contains__(self, order_id: object) -> bool:
        return order_id in self._orders

    def add(self, row: Any) -> None:
        key = (str(row["source"]), str(row["destination"]))
        limit = Decimal(row["limit_price"]) if row["limit_price"] else Decimal(0)
        order_id = str(row["order_id"])
        self._orders[order_id] = (key, limit)
        bisect.insort(self._routes.setdefault(key, []), (limit, order_id))
        if row["end_at"]:
            heapq.heappush(self._ends, (str(row["end_at"]), order_id))

    def discard(self, order_id: str) -> None:
        found = self._orders.pop(order_id, None)
        if found is None:
            return
        key, limit = found
        entries = self._routes[key]
        at = bisect.bisect_left(entries, (limit, order_id))
        if at < len(entries) and entries[at] == (limit, order_id):
            del entries[at]
        if not entries:
            del self._routes[key]
        # an endAt entry stays in the heap and is skipped when it comes up

    def due(self, stamp: str) -> str | None:
        """The next order whose ``endAt`` is at or before ``stamp``, taken off the heap."""
        while self._ends and self._ends[0][0] <= stamp:
            _, order_id = heapq.heappop(self._ends)
            if order_id in self._orders:
                return order_id
        return None

    def routes(self) -> list[tuple[str, str]]:
        return list(self._routes)

    def lowest(self, key: tuple[str, str]) -> list[tuple[Decimal, str]]:
        """The route's orders, lowest limit first (the first ones a rising price reaches)."""
        return self._routes.get(key, [])


class OrderEngine:
    def __init__(
        self,
        store: Store,
        market: Market,
        credit_hours: CreditHours,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._market = market
        #: Settable while running (the admin route): tests open and close the window on cue.
        self.credit_hours = credit_hours
        self._clock = clock
        self.resting = RestingIndex()
        for row in store.query("SELECT * FROM orders WHERE status = ?", (OPEN_STATUS,)):
            self.resting.add(row)

    # -- submission ---------------------------------------------------------------------------

    def submit(
        self, principal: Principal, account_id: str, raw_body: Any, now: datetime, path_type: str
    ) -> dict[str, Any]:
        """Validate and execute one order; returns the success body or raises the refusal."""
        try:
            request = self._parse(account_id, raw_body, now, path_type)
        except ApiError as exc:
            if exc.status_code != 400:
                raise
            raise order_refusal(
                400, str(uuid.uuid4()), "; ".join(exc.messages), trades=True
            ) from None
        with self._store.transaction(durable=True):
            moment = max(now, self._clock())  # read inside the transaction that books
            replay = self._replay(account_id, request.client_order_id, moment)
            if replay is not None:
                return self._replay_response(replay, request)
            row = self._execute(principal, account_id, request, moment)
        if row["status"] == OPEN_STATUS:
            self.resting.add(row)
        if row["status"] == "rejected":
            raise ApiError(int(row["http_status"]), json.loads(row["error_body"]))
        return ok({"order": self.view(self.get_row(row["order_id"]))})

    def _parse(self, account_id: str, raw_body: Any, now: datetime, path_type: str) -> OrderRequest:
        body = require_object(raw_body)
        owner = body.get("accountId")
        if path_type == "limit" or owner is not None:
            if not isinstance(owner, dict) or not isinstance(owner.get("value"), str):
                raise bad_request('accountId is required as {"value": "<account id>"}')
            if owner["value"] != account_id:
                raise bad_request("accountId in the body does not match the account in the path")
        order_type = body.get("type", path_type if path_type == "limit" else None)
        if order_type not in ("limit", "market") or (
            path_type == "limit" and order_type != "limit"
        ):
            allowed = "limit" if path_type == "limit" else "limit or market"
            raise bad_request(f"type must be {allowed}, got {order_type!r}")
        source = asset(body.get("source"), "source")
        destination = asset(body.get("destination"), "destination")
        route = route_for(source.code, destination.code)
        size = positive_quantity(body.get("size"), "size", source)
        limit = None
        if order_type == "limit" and body.get("limit") is not None:
            limit = _parse_limit(body["limit"], source.code, destination.code)
        elif order_type == "market" and body.get("limit") is not None:
            raise bad_request("a market order takes no limit")
        end_at = None
        if body.get("endAt") is not None:
            if order_type != "limit":
                raise bad_request("endAt applies to limit orders only")
            end_at = timestamp(body["endAt"], "endAt")
            if end_at <= now:
                raise bad_request(f"endAt must be in the future, got {body['endAt']}")
        client_order_id = optional_string(body, "clientOrderId", MAX_CLIENT_ORDER_ID)
        return OrderRequest(order_type, route, size, limit, end_at, client_order_id)

    def _replay(self, account_id: str, client_order_id: str | None, now: datetime) -> Any:
        if client_order_id is None:
            return None
        return self._store.query_one(
            "SELECT * FROM orders WHERE account_id = ? AND client_order_id = ? "
            "AND submitted_at >= ? ORDER BY seq DESC LIMIT 1",
            (account_id, client_order_id, format_timestamp(now - REPLAY_WINDOW)),
        )

    def _replay_response(self, row: Any, request: OrderRequest) -> dict[str, Any]:
        """The original outcome, if the replay asks for exactly the same order; a clientOrderId
        reused with any field changed (or taken by an RFQ) is a 409 naming the fields, never a
        silent wrong order (Stripe's rule for idempotency keys)."""
        differs = _differences(row, request)
        if differs:
            raise error(
                409,
                f"clientOrderId {request.client_order_id} was already used within 24 h for a "
                f"different order ({row['order_id']}): {'; '.join(differs)}; "
                "use a new clientOrderId",
            )
        if row["status"] == "rejected":
            raise ApiError(int(row["http_status"]), json.loads(row["error_body"]))
        return ok({"order": self.view(row)})

    def _execute(
        self, principal: Principal, account_id: str, request: OrderRequest, now: datetime
    ) -> dict[str, Any]:
        order_id = str(uuid.uuid4())
        stamp = format_timestamp(now)
        route = request.route
        row: dict[str, Any] = {
            "order_id": order_id,
            "account_id": account_id,
            "user_id": principal.user_id,
            "email": principal.email,
            "client_order_id": request.client_order_id,
            "type": request.order_type,
            "source": route.source,
            "destination": route.destination,
            "size": request.size,
            "limit_price": request.limit,
            "end_at": format_timestamp(request.end_at) if request.end_at else None,
            "submitted_at": stamp,
            "updated_at": stamp,
            "status": OPEN_STATUS,
        }
        quote = current_quote(self._market, route)
        if route.total(request.size, quote) <= 0:
            raise order_refusal(
                400,
                order_id,
                f"size {format_trimmed(request.size)} {route.source} is too small: it would "
                f"receive nothing at the current price",
                trades=True,
            )
        refusal = check_funds(
            self._store, self.credit_hours, account_id, route.source, request.size, now
        )
        if refusal is not None:
            err = refusal.error(order_id)
            row.update(
                status="rejected",
                error=refusal.message,
                http_status=424,
                error_body=encode(err.body),
            )
            self._store.insert("orders", row)
            return row
        if route.marketable(request.limit, quote):
            total = route.total(request.size, quote)
            price, inverted = route.price_strings(quote)
            book_trade(
                self._store,
                account_id=account_id,
                transaction_id=order_id,
                source=route.source,
                size=request.size,
                destination=route.destination,
                total=total,
                event_time=stamp,
            )
            row.update(
                status="filled",
                price=price,
                inverted_price=inverted,
                total=total,
                executed_at=stamp,
            )
        else:
            self._store.move_to_locked(account_id, route.source, request.size)
        self._store.insert("orders", row)
        return row

    # -- resting orders -----------------------------------------------------------------------

    def match_resting(self) -> int:
        """Run matcher slices until no work is left; returns how many orders changed."""
        changed = 0
        while True:
            done, more = self.match_slice(float("inf"))
            changed += done
            if not more:
                return changed

    def match_slice(self, budget: float = SLICE_SECONDS) -> tuple[int, bool]:
        """Cancel orders past ``endAt`` and fill the ones the current price crosses, for at most
        ``budget`` seconds; returns (orders changed, whether work is left). Only crossed orders
        are touched (see :class:`RestingIndex`), so a quiet market costs one comparison per
        route whatever the number of resting orders."""
        give_up = time.perf_counter() + budget
        changed = 0
        stamp = format_timestamp(self._clock())
        while (order_id := self.resting.due(stamp)) is not None:
            changed += self.cancel_expired(order_id)
            if time.perf_counter() > give_up:
                return changed, True
        for key in self.resting.routes():
            route = route_for(*key)
            quote = current_quote(self._market, route)
            while (entries := self.resting.lowest(key)) and route.marketable(entries[0][0], quote):
                changed += self.fill(entries[0][1], quote)
                if time.perf_counter() > give_up:
                    return changed, True
        return changed, False

    def fill(self, order_id: str, quote: MarketQuote) -> bool:
        """Fill one resting order at ``quote``: a compare-and-set from ``submitted`` to
        ``filled`` and the trade's booking in one transaction; False (nothing booked) when the
        order is no longer open."""
        try:
            with self._store.transaction():
                row = self.get_row(order_id)
                if row is None:
                    raise _NotOpen
                moment = format_timestamp(self._clock())
                route = route_for(row["source"], row["destination"])
                size = Decimal(row["size"])
                total = route.total(size, quote)
                price, inverted = route.price_strings(quote)
                self._set_status(
                    order_id,
                    status="filled",
                    price=price,
                    inverted_price=inverted,
                    total=str(total),
                    executed_at=moment,
                    updated_at=moment,
                )
                book_trade(
                    self._store,
                    account_id=row["account_id"],
                    transaction_id=order_id,
                    source=row["source"],
                    size=size,
                    destination=row["destination"],
                    total=total,
                    event_time=moment,
                    from_locked=True,
                )
        except _NotOpen:
            self.resting.discard(order_id)
            return False
        self.resting.discard(order_id)
        return True

    def cancel_expired(self, order_id: str) -> bool:
        """Cancel a resting order whose ``endAt`` passed and unlock its funds (compare-and-set
        like :meth:`fill`)."""
        try:
            with self._store.transaction():
                row = self.get_row(order_id)
                if row is None:
                    raise _NotOpen
                self._set_status(
                    order_id,
                    status="canceled",
                    updated_at=format_timestamp(self._clock()),
                    error="Canceled: endAt reached before the limit was met",
                )
                self._store.move_to_locked(row["account_id"], row["source"], -Decimal(row["size"]))
        except _NotOpen:
            self.resting.discard(order_id)
            return False
        self.resting.discard(order_id)
        return True

    def _set_status(self, order_id: str, **values: Any) -> None:
        """``UPDATE ... WHERE status = 'submitted'``; raises :class:`_NotOpen` (rolling the
        caller's transaction back) when the order was not open any more."""
        assignments = ", ".join(f"{name} = ?" for name in values)
        changed = self._store.update(
            f"UPDATE orders SET {assignments} WHERE order_id = ? AND status = ?",  # noqa: S608
            [*values.values(), order_id, OPEN_STATUS],
        )
        if changed != 1:
            raise _NotOpen

    # -- reading ------------------------------------------------------------------------------

    def get_row(self, order_id: str) -> Any:
        return self._store.query_one("SELECT * FROM orders WHERE order_id = ?", (order_id,))

    @staticmethod
    def view(row: Any) -> dict[str, Any]:
        """An order in the seed's shape (with the query fields), plus ``clientOrderId``,
        ``limit`` and ``endAt`` when set (sandbox extensions)."""
        result: dict[str, Any] = {"status": row["status"]}
        if row["price"]:
            result["price"] = row["price"]
            result["invertedPrice"] = row["inverted_price"]
        if row["executed_at"]:
            result["executedAt"] = row["executed_at"]
        result["updatedAt"] = row["updated_at"]
        if row["total"] is not None:
            result["total"] = f"{format_trimmed(Decimal(row['total']))} {row['destination']}"
        result["error"] = row["error"] or ""
        order: dict[str, Any] = {
            "orderId": row["order_id"],
            "ordering": row["seq"],
            "accountId": row["account_id"],
            "userId": row["user_id"],
            "email": row["email"],
            "size": f"{format_trimmed(Decimal(row['size']))} {row['source']}",
            "source": row["source"],
            "destination": row["destination"],
            "type": row["type"],
            "submittedAt": row["submitted_at"],
            "result": result,
        }
        if row["client_order_id"] is not None:
            order["clientOrderId"] = row["client_order_id"]
        if row["limit_price"]:
            limit = format_trimmed(significant(Decimal(row["limit_price"])))
            order["limit"] = f"{limit} {row['source']}/{row['destination']}"
        if row["end_at"]:
            order["endAt"] = row["end_at"]
        return order


def _differences(row: Any, request: OrderRequest) -> list[str]:
    """The fields of ``request`` that differ from the order ``row`` recorded for the same
    clientOrderId. The order row keeps every field of the request, normalised (type, assets,
    size, limit as destination per source, endAt), so it is the request's fingerprint."""
    limit = Decimal(row["limit_price"]) if row["limit_price"] else None
    end_at = format_timestamp(request.end_at) if request.end_at else None
    pairs: list[tuple[str, Any, Any]] = [
        ("type", request.order_type, row["type"]),
        ("source", request.route.source, row["source"]),
        ("destination", request.route.destination, row["destination"]),
        ("size", request.size, Decimal(row["size"])),
        ("limit", request.limit, limit),
        ("endAt", end_at, row["end_at"]),
    ]
    return [
        f"{name} differs ({_shown(given)} here, {_shown(original)} in the original)"
        for name, given, original in pairs
        if given != original
    ]


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    return format_trimmed(value) if isinstance(value, Decimal) else str(value)


def _parse_limit(value: Any, source: str, destination: str) -> Decimal:
    """The limit as destination per source. ``"59000"`` or ``"59000 BTC/USD"`` is read as
    SOURCE/DESTINATION; a price in DESTINATION/SOURCE units is unambiguous and is inverted."""
    number_text: Any = value
    inverted = False
    if isinstance(value, str) and len(value.split()) == 2:
        number_text, unit = value.split()
        try:
            pair = AssetPair.parse(unit, "limit")
        except ParseError as exc:
            raise bad_request(f"Invalid limit: {exc.problem}") from None
        if pair == AssetPair(destination, source):
            inverted = True
        elif pair != AssetPair(source, destination):
            raise bad_request(f"limit is in {pair} but the order trades {source}/{destination}")
    try:
        number = parse_decimal(number_text, "limit")
    except ParseError as exc:
        raise bad_request(f"Invalid limit: {exc.problem}") from None
    if number <= 0:
        raise bad_request(f"limit must be greater than zero, got {value!r}")
    if not LIMIT_MIN <= number <= LIMIT_MAX:
        raise bad_request(f"limit is out of range ({LIMIT_MIN} to {LIMIT_MAX}), got {value!r}")
    return divide(Decimal(1), number) if inverted else number
