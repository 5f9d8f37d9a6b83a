"""Settling orders and accepts whose answer was lost (design.md §6, §7).

The client raises ``OutcomeUnknown`` and stops. ``OrderSettler.look_up`` is the one function
that then asks the server what became of the request: live, right after the loss (the order
desk and the RFQ desk, then again with back-off in the background; the command line for a
second or so), and at the next start for what the journal left open (``reconcile_on_start``).
It only reports what the server shows: ``Found`` (the order), ``Absent`` (not on the list) or
``Unreadable`` (the server could not be asked). ``match`` is the one rule that picks our order
from a list.

What a look-up means to the trader is decided in one place, ``verdict``: the order found is its
outcome; absence from a list, or a server that cannot be asked, is never proof (design.md §7),
so such an order stays visibly ``unknown`` and is looked for again — by the order desk with
back-off for the whole session, and at every start until it is found (or the trader, told the
facts, dismisses it). Only a request that provably never left is "not sent", and that is the
client's ``NotSent``, not a look-up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation

from app.api import NotFound, OutcomeUnknown, RequestTimeout, ServiceClient, ServiceError
from app.domain import format_timestamp
from app.domain.order_request import OrderRequest
from app.domain.records import Order
from app.services.journal import JournalEntry, OrderJournal
from app.services.log_events import LogLevel

log = logging.getLogger("tradeterm.services")

#: Seconds between the live look-ups after the first (made at once).
SETTLE_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
#: The order list is read from this long before the request left (server time).
LOOKUP_WINDOW = timedelta(minutes=2)
LOOKUP_MAX = 200
#: After the scheduled look-ups, the desk keeps looking at this pace for the whole session.
SESSION_DELAY_SECONDS = 60.0
NOT_LISTED = (
    "not on the server's order list yet — absence is not proof, so it stays unknown and is "
    "looked for again"
)


@dataclass(frozen=True)
class Sought:
    """What was sent and is looked for. ``sent_at`` is in server time (design.md §7)."""

    kind: str  # "limit", "market" or "accept"
    client_order_id: str
    sent_at: datetime
    source: str = ""
    destination: str = ""
    size: Decimal = Decimal(0)
    quote_id: str = ""  # accepts: the quote's orderId, which the accepted order keeps

    @classmethod
    def order(cls, request: OrderRequest, sent_at: datetime) -> Sought:
        return cls(
            request.order_type,
            request.client_order_id,
            sent_at,
            request.source,
            request.destination,
            request.size,
        )

    @classmethod
    def accept(cls, quote_id: str, client_order_id: str, sent_at: datetime) -> Sought:
        return cls("accept", client_order_id, sent_at, quote_id=quote_id)

    @classmethod
    def from_entry(cls, entry: JournalEntry, offset: timedelta) -> Sought:
        """A journal entry; its stamp (this machine's clock) moved to server time by the
        client's measured ``offset`` (server minus local)."""
        sent_at = entry.created_at + offset
        request = entry.request
        if entry.kind == "accept":
            return cls.accept(str(request.get("orderId", "")), entry.client_order_id, sent_at)
        try:
            size = Decimal(str(request.get("size", "0")))
        except InvalidOperation:
            size = Decimal(0)
        return cls(
            entry.kind,
            entry.client_order_id,
            sent_at,
            str(request.get("source", "")),
            str(request.get("destination", "")),
            size,
        )


@dataclass(frozen=True)
class Found:
    order: Order


@dataclass(frozen=True)
class Absent:
    """The server's list (or the quote's order) does not show it."""


@dataclass(frozen=True)
class Unreadable:
    error: ServiceError


LookUp = Found | Absent | Unreadable


@dataclass(frozen=True)
class Verdict:
    """What to call the outcome: ``status`` in the journal's words; not ``final`` means keep
    looking (the outcome stays unknown)."""

    status: str
    detail: str
    final: bool
    order: Order | None = None


def verdict(look: LookUp) -> Verdict:
    """The one place that turns what the server shows into what the trader is told: only the
    order itself settles it."""
    if isinstance(look, Found):
        order = look.order
        return Verdict(order.result.status or "unknown", order.result.error, True, order)
    if isinstance(look, Unreadable):
        return Verdict("unknown", f"could not check with the server: {look.error}", False)
    return Verdict("unknown", NOT_LISTED, False)


def match(orders: Sequence[Order], sought: Sought, since: datetime) -> Order | None:
    """The order with our clientOrderId; else, when the server does not echo clientOrderIds,
    the only one with the same source, destination and size submitted since ``since``."""
    for order in orders:
        if order.client_order_id == sought.client_order_id:
            return order
    if any(order.client_order_id for order in orders):
        return None  # the server echoes ids and none is ours
    candidates = [
        o
        for o in orders
        if o.source == sought.source
        and o.destination == sought.destination
        and o.size.value == sought.size
        and o.submitted_at is not None
        and o.submitted_at >= since
    ]
    return candidates[0] if len(candidates) == 1 else None


#: Seconds the command line looks for a lost answer (not a timeout) before it reports the
#: outcome unknown (exit 3): an order committed as the connection broke may take a moment to be
#: listed.
LIST_DELAY_SECONDS = 2.0


def patience_for(lost: OutcomeUnknown, client: ServiceClient) -> float:
    """How long to keep looking before saying "unknown" to a script: a timed-out request may
    still be executing on a slow server, so as long as the client waits for an answer; else
    ``LIST_DELAY_SECONDS``."""
    if isinstance(lost.__cause__, RequestTimeout):
        return max(client.settings.read_timeout, LIST_DELAY_SECONDS)
    return LIST_DELAY_SECONDS


class OrderSettler:
    """Finds out on the server what became of an order or accept whose answer was lost."""

    def __init__(self, client: ServiceClient, *, delays: Sequence[float] = SETTLE_DELAYS) -> None:
        self.client = client
        self.delays = tuple(delays)

    async def look_up(self, sought: Sought) -> LookUp:
        """Ask the server once: the order (by the quote's id for an accept, else by
        clientOrderId in the order list, read from ``LOOKUP_WINDOW`` before it was sent)."""
        try:
            if sought.kind == "accept":
                try:
                    return Found(await self.client.order(sought.quote_id))
                except NotFound:
                    return Absent()
            since = sought.sent_at - LOOKUP_WINDOW
            orders = await self.client.orders(
                max_orders=LOOKUP_MAX,
                submitted_start=since,
                client_order_id=sought.client_order_id,
            )
        except ServiceError as exc:
            return Unreadable(exc)
        found = match(orders, sought, since)
        return Absent() if found is None else Found(found)

    async def now(self, sought: Sought) -> Verdict:
        """The look-up made the instant the answer was lost."""
        return verdict(await self.look_up(sought))

    async def follow(
        self,
        sought: Sought,
        *,
        delays: Iterable[float] | None = None,
        still_open: Callable[[], bool] = lambda: True,
    ) -> Verdict | None:
        """Look again after each of ``delays`` (default: the settler's; may be endless) until
        the order is found; the last verdict when the delays run out. None when ``still_open``
        says it was settled meanwhile (e.g. sent again and answered)."""
        last: Verdict | None = None
        for delay in self.delays if delays is None else delays:
            await asyncio.sleep(delay)
            if not still_open():
                return None
            last = verdict(await self.look_up(sought))
            if last.final:
                return last
            log.info("%s still unknown: %s", sought.client_order_id, last.detail)
        return last

    async def reconcile(self, journal: OrderJournal, account: str) -> list[JournalEntry]:
        """Settle this account's ``sending``/``unknown`` entries: each found is settled; one not
        found stays ``unknown`` (open for the next start). Returns every entry looked at."""
        changed = []
        # Re-measured first when due (a wall-clock jump, say): the window is in server time.
        await self.client.refresh_clock()
        offset = self.client.clock.offset
        for entry in journal.unsettled(account):
            look = await self.look_up(Sought.from_entry(entry, offset))
            outcome = verdict(look)
            if outcome.order is not None:
                journal.record_order(entry.client_order_id, outcome.order)
            else:
                journal.record_outcome(entry.client_order_id, outcome.status, detail=outcome.detail)
            updated = journal.entry(entry.client_order_id)
            if updated is not None:
                changed.append(updated)
        return changed


async def reconcile_on_start(
    client: ServiceClient,
    account: str,
    journal: OrderJournal,
    say: Callable[[LogLevel, str], None],
) -> list[JournalEntry]:
    """At start: settle what a crash or a lost answer left open of ``account``'s orders, and
    tell the trader (``say``: the session's log)."""
    open_entries = journal.unsettled(account)
    if not open_entries:
        return []
    say(LogLevel.INFO, f"checking {len(open_entries)} order(s) whose outcome was not known")
    changed = await OrderSettler(client).reconcile(journal, account)
    for entry in changed:
        level = LogLevel.WARNING if entry.status in ("unknown", "failed") else LogLevel.INFO
        what = entry.order_id or entry.client_order_id
        say(
            level,
            f"order {what} ({entry.kind}, sent {format_timestamp(entry.created_at)}"
            f"): {entry.status}{' — ' + entry.detail if entry.detail else ''}",
        )
    return changed
