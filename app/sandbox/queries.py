"""Filtered reads of the ledger and of orders, with paging by ``ordering``.

Both default to newest first; ``asc=true`` (a sandbox extension for the ledger) reads oldest
first. ``startAtOrdering`` is inclusive and bounds the direction of travel: newest first returns
entries at or below it, oldest first at or above it — so a client pages back by passing the
last ordering it saw minus one. The ledger's ``max`` counts transactions: both legs of a trade
share one ordering and come together.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.domain import format_timestamp
from app.domain.records import EVENT_TYPES
from app.sandbox.orders import OrderEngine
from app.sandbox.store import Store
from app.sandbox.validation import (
    query_asset,
    query_bool,
    query_choice,
    query_int,
    query_time,
)
from app.sandbox.wire import bad_request, booking_head

ORDER_TYPES = ("limit", "market", "rfq")
ORDER_STATUSES = ("submitted", "filled", "canceled", "rejected")
MAX_LEDGER = 10_000
MAX_ORDERS = 1_000


class _Where:
    def __init__(self, first: str, value: Any) -> None:
        self.clauses = [first]
        self.params: list[Any] = [value]

    def add(self, clause: str, value: Any) -> None:
        if value is not None:
            self.clauses.append(clause)
            self.params.append(value)

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses)


def _time_range(params: Mapping[str, str], start: str, end: str) -> tuple[str | None, str | None]:
    begin, finish = query_time(params, start), query_time(params, end)
    if begin and finish and begin > finish:
        raise bad_request(f"{start} is after {end}")
    return _stamp(begin), _stamp(finish)


def _stamp(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment else None


def ledger(store: Store, account_id: str, params: Mapping[str, str]) -> list[dict[str, Any]]:
    limit = query_int(params, "max", required=True, minimum=1, maximum=MAX_LEDGER)
    query_choice(params, "format", ("json",))
    ascending = query_bool(params, "asc", False)
    start_at = query_int(params, "startAtOrdering")
    begin, finish = _time_range(params, "startTimeUtc", "endTimeUtc")
    where = _Where("account_id = ?", account_id)
    where.add("transaction_id = ?", params.get("transactionId") or None)
    where.add("asset = ?", query_asset(params, "asset"))
    where.add("event_type = ?", query_choice(params, "type", EVENT_TYPES))
    where.add("ordering >= ?" if ascending else "ordering <= ?", start_at)
    where.add("event_time >= ?", begin)
    where.add("event_time < ?", finish)
    direction = "ASC" if ascending else "DESC"
    rows = store.query(
        f"SELECT * FROM ledger WHERE {where.sql} AND ordering IN "  # noqa: S608 - built from ours
        f"(SELECT DISTINCT ordering FROM ledger WHERE {where.sql} "
        f"ORDER BY ordering {direction} LIMIT ?) ORDER BY ordering {direction}, leg",
        [*where.params, *where.params, limit],
    )
    entries = []
    for row in rows:
        entry = booking_head(row, "transaction_id")
        entry["eventType"] = row["event_type"]
        if row["sub_event_type"]:
            entry["subEventType"] = row["sub_event_type"]
        entry["eventTime"] = row["event_time"]
        entries.append(entry)
    return entries


def orders(store: Store, account_id: str, params: Mapping[str, str]) -> dict[str, Any]:
    limit = query_int(params, "max", default=100, minimum=1, maximum=MAX_ORDERS)
    assert limit is not None
    ascending = query_bool(params, "asc", False)
    begin, finish = _time_range(params, "submittedAtStart", "submittedAtEnd")
    where = _Where("account_id = ?", account_id)
    where.add("source = ?", query_asset(params, "source"))
    where.add("destination = ?", query_asset(params, "destination"))
    where.add("type = ?", query_choice(params, "type", ORDER_TYPES))
    where.add("status = ?", query_choice(params, "status", ORDER_STATUSES))
    where.add("client_order_id = ?", params.get("clientOrderId") or None)
    where.add("seq >= ?" if ascending else "seq <= ?", query_int(params, "startAtOrdering"))
    where.add("submitted_at >= ?", begin)
    where.add("submitted_at < ?", finish)
    direction = "ASC" if ascending else "DESC"
    rows = store.query(
        f"SELECT * FROM orders WHERE {where.sql} ORDER BY seq {direction} LIMIT ?",  # noqa: S608
        [*where.params, limit],
    )
    return {"max": limit, "orders": [OrderEngine.view(row) for row in rows]}
