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
from collections.abc import Callable, Iterable, Iterator, Sequence
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
#: A server that does not filter its order list by clientOrderId is read from these long
#: before the request left (server time), widening: a send time a clock step moved is still
#: inside the widest.
LOOKUP_WINDOWS = (timedelta(minutes=2), timedelta(hours=1), timedelta(days=1))
LOOKUP_WINDOW = LOOKUP_WINDOWS[0]
LOOKUP_MAX = 200
#: After the scheduled look-ups, the desk keeps looking at this pace for the whole session.
SESSION_DELAY_SECONDS = 60.0


def backoff_delays(first: float = 1.0, ceiling: float = SESSION_DELAY_SECONDS) -> Iterator[float]:
    """1, 2, 4, 8 … seconds up to ``ceiling``, then every ``ceiling`` for ever: an order left
    unknown is looked for again within seconds, not first after a minute."""
    delay = first
    while True:
        yield delay
        delay = min(ceiling, delay * 2)


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
        """A journal entry, sent at its server-time stamp; an entry from before those were
        kept has its local stamp moved to server time by the client's measured ``offset``
        (server minus local) — only approximate if the clock was stepped since."""
        sent_at = entry.sent_server_at or entry.created_at + offset
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


def by_client_order_id(orders: Sequence[Order], client_order_id: str) -> Order | None:
    return next((order for order in orders if order.client_order_id == client_order_id), None)


def filtered_by_id(orders: Sequence[Order], client_order_id: str) -> bool:
    """Whether a list asked for by clientOrderId shows the server applied the filter: empty,
    or only that id. A list with other ids (or none echoed) was not filtered."""
    return all(order.client_order_id == client_order_id for order in orders)


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
        """Ask the server: the order (by the quote's id for an accept, else by clientOrderId
        in the order list, with no time floor — a send time is only as good as the clock that
        stamped it). Only when the server's answer shows it ignored the clientOrderId filter
        is the list read by time, from ``LOOKUP_WINDOWS`` before the send, widening."""
        try:
            if sought.kind == "accept":
                try:
                    return Found(await self.client.order(sought.quote_id))
                except NotFound:
                    return Absent()
            orders = await self.client.orders(
                max_orders=LOOKUP_MAX, client_order_id=sought.client_order_id
            )
            found = by_client_order_id(orders, sought.client_order_id)
            if found is not None:
                return Found(found)
            if filtered_by_id(orders, sought.client_order_id):
                return Absent()
            for window in LOOKUP_WINDOWS:
                since = sought.sent_at - window
                orders = await self.client.orders(
                    max_orders=LOOKUP_MAX,
                    submitted_start=since,
                    client_order_id=sought.client_order_id,
                )
                found = match(orders, sought, since)
                if found is not None:
                    return Found(found)
        except ServiceError as exc:
            return Unreadable(exc)
        return Absent()

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
