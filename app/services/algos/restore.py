"""What became of a stored parent's children, asked of the journal and the server — never of
memory — when the terminal starts again.

A child the algo store holds but the journal does not was never handed to the desk (the store
writes first): nothing was sent. A child the journal shows filled is filled for the amounts
the journal froze from the server's answer; one resting is looked up on the server (it may have
filled or ended since); one whose answer was lost stays unknown and blocks its parent until
the journal (the start-up reconcile, the unknown-outcomes list) or the server says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

from app.api import ServiceClient, ServiceError
from app.domain import Price, parse_timestamp
from app.services.algos.parents import Child, Parent, child_prefix
from app.services.journal import FILL, JournalEntry, OrderJournal

#: Journal statuses that say the request reached no order.
ENDED_EMPTY = ("rejected", "failed", "canceled")


async def child_fates(
    children: Sequence[Child], journal: OrderJournal, client: ServiceClient
) -> dict[str, Child]:
    """Each child as far as the journal and the server show it, by clientOrderId."""
    fates: dict[str, Child] = {}
    entries = {child.client_order_id: journal.entry(child.client_order_id) for child in children}
    order_ids = [entry.order_id for entry in entries.values() if entry and entry.order_id]
    fills = journal.facts(FILL, order_ids)
    for child in children:
        entry = entries[child.client_order_id]
        if entry is None:
            fates[child.client_order_id] = child.ended("empty", detail="never sent")
        elif entry.status == "filled" and entry.order_id in fills:
            fact = fills[entry.order_id]
            fates[child.client_order_id] = child.ended(
                "filled",
                filled=Decimal(str(fact["size"])),
                received=Decimal(str(fact["total"])),
                order_id=entry.order_id,
            )
        elif entry.status == "submitted" or (entry.status == "filled" and entry.order_id):
            fates[child.client_order_id] = await _on_server(child, entry.order_id, journal, client)
        elif entry.status in ENDED_EMPTY:
            fates[child.client_order_id] = child.ended(
                "empty", order_id=entry.order_id, detail=entry.detail
            )
        else:  # sending, unknown, dismissed: the server has not shown it
            fates[child.client_order_id] = child.ended(
                "unknown", detail=entry.detail or "the answer was lost"
            )
    return fates


async def _on_server(
    child: Child, order_id: str, journal: OrderJournal, client: ServiceClient
) -> Child:
    """A child the server took: as it shows it now (resting while it cannot be asked)."""
    try:
        order = await client.order(order_id)
    except ServiceError:
        return child.ended("resting", order_id=order_id, detail="could not be looked up yet")
    status = order.result.status
    if status == "filled":
        journal.record_order(child.client_order_id, order)
        total = order.result.total
        return child.ended(
            "filled",
            filled=order.size.value,
            received=Decimal(0) if total is None else total.value,
            order_id=order_id,
            filled_at=order.result.executed_at,
        )
    if status in ("canceled", "rejected"):
        journal.record_order(child.client_order_id, order)
        return child.ended("empty", order_id=order_id, detail="ended without filling")
    return child.ended("resting", order_id=order_id)


def journaled_children(parent: Parent, journal: OrderJournal) -> list[Child]:
    """Children of ``parent`` the journal holds and the algo store does not (its last write
    lost to an OS crash: the journal's intent is synced before each send, the store's row is
    not), each as it was sent; ``child_fates`` then finds out what it became."""
    known = {child.client_order_id for child in parent.children}
    return [
        child
        for entry in journal.entries_starting(child_prefix(parent.id))
        if entry.client_order_id not in known and (child := _from_entry(parent, entry)) is not None
    ]


def _from_entry(parent: Parent, entry: JournalEntry) -> Child | None:
    body = entry.request
    try:
        size = Decimal(str(body["size"]))
        wire = Price(Decimal(str(body["limit"])), str(body["source"]), str(body["destination"]))
        limit = parent.spec.pair_side.price(wire).value
        end_at = parse_timestamp(str(body["endAt"])) if body.get("endAt") else None
    except (KeyError, InvalidOperation, ValueError, ArithmeticError):
        return None  # not a body this engine wrote; its entry stays in the journal
    sent_at = entry.sent_server_at or entry.created_at
    return Child(entry.client_order_id, parent.id, size, limit, sent_at, end_at)
