"""The order desk: safe submission of the ticket's limit and market orders, one at a time,
each journaled before it leaves, and settling of answers that were lost. asyncio only, no Qt
(design.md §1). The ticket (``ticket``), its live price (``estimates``) and the pre-trade
predictions (``pretrade``) live in their own modules.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.api import (
    CreditNotAvailable,
    InsufficientFunds,
    InvalidRequest,
    NotSent,
    OutcomeUnknown,
    Refused,
    ServiceError,
    new_client_order_id,
)
from app.domain import format_decimal, format_timestamp
from app.domain.money import format_trimmed
from app.domain.records import Estimate, Order, TopOfBook
from app.services.events import Topic
from app.services.journal import OrderJournal, server_lookup
from app.services.log_events import EventKind, LogLevel
from app.services.pretrade import Check, CheckLimits, WhatIf, checks, what_if
from app.services.pricing import describe_limit, pair_base
from app.services.session import Balances, TerminalSession
from app.services.ticket import TicketError, TicketInput

log = logging.getLogger("tradeterm.services")

SubmitStatus = Literal["filled", "submitted", "rejected", "failed", "unknown"]
#: Seconds between the lookups that settle an order whose answer was lost.
SETTLE_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)


class AlreadySending(RuntimeError):
    """A submission is still in flight: a second Enter sends nothing."""


@dataclass(frozen=True)
class SubmitResult:
    status: SubmitStatus
    client_order_id: str
    message: str
    order: Order | None = None
    checks: tuple[Check, ...] = ()


class OrderDesk:
    """Sends the tickets of one session, one at a time, journaling each before it leaves.

    Each ticket gets a clientOrderId before it is sent (the ticket shows it). The id is kept
    while the same ticket's outcome is unsettled (not sent, failed, unknown), so sending it
    again cannot place a second order: the service replays the first. Any settled answer, or
    a change to the ticket, gives the next send a new id. An unknown outcome settles itself in
    the background by looking the order up (``SETTLE_DELAYS``); the settled result is
    published on ``results`` like any other.
    """

    def __init__(
        self,
        session: TerminalSession,
        journal: OrderJournal,
        limits: CheckLimits | None = None,
        *,
        settle_delays: Sequence[float] = SETTLE_DELAYS,
    ) -> None:
        self.session = session
        self.settle_delays = tuple(settle_delays)
        self._proposed: tuple[TicketInput, str] | None = None
        self._settlers: set[asyncio.Task[None]] = set()
        self.journal = journal
        self.limits = limits or CheckLimits()
        self.balances: Balances | None = None
        self.top_of_book: dict[str, TopOfBook] = {}
        self._sending = False
        self.sending_changed: Topic[bool] = Topic("order desk sending")
        self.results: Topic[SubmitResult] = Topic("order desk results")
        self._unsubscribe = [
            session.balances.data.subscribe(self._on_balances),
            session.top_of_book.data.subscribe(self._on_top),
        ]

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        for task in list(self._settlers):
            task.cancel()

    def client_order_id_for(self, ticket: TicketInput) -> str:
        """The clientOrderId the next send of ``ticket`` will carry (stable per ticket)."""
        if self._proposed is None or self._proposed[0] != ticket:
            self._proposed = (ticket, new_client_order_id())
        return self._proposed[1]

    @property
    def sending(self) -> bool:
        """True while a submission is in flight (the UI disables Send)."""
        return self._sending

    def _on_balances(self, balances: Balances) -> None:
        self.balances = balances

    def _on_top(self, tops: dict[str, TopOfBook]) -> None:
        self.top_of_book = tops

    def checks(self, ticket: TicketInput, *, override: bool = False) -> list[Check]:
        return checks(ticket, self.balances, self.top_of_book, self.limits, override=override)

    def what_if(self, ticket: TicketInput, estimate: Estimate | None = None) -> WhatIf | None:
        return None if self.balances is None else what_if(ticket, self.balances, estimate)

    def describe(self, ticket: TicketInput) -> str:
        """The ticket in words, for the confirmation line and the log."""
        base = pair_base(ticket.source, ticket.destination, self.session.pair_info)
        size = f"{format_trimmed(ticket.size)} {ticket.source}"
        wire = ticket.wire_limit()
        if wire is None:
            return f"market: sell {size} for {ticket.destination}"
        return f"limit: sell {size} for {ticket.destination}; " + describe_limit(
            ticket.source, ticket.destination, wire, base
        )

    async def submit(self, ticket: TicketInput, *, override: bool = False) -> SubmitResult:
        """Validate, check, journal, send; the outcome as the server (or the lookup) says.

        Raises AlreadySending while another submission runs, TicketError for an invalid ticket
        or a blocking check not overridden. Service refusals are results, not exceptions.
        """
        if self._sending:
            raise AlreadySending("an order is being sent; wait for its answer")
        self._set_sending(True)
        try:
            return await self._submit(ticket, override)
        finally:
            self._set_sending(False)

    def _set_sending(self, value: bool) -> None:
        self._sending = value
        self.sending_changed.publish(value)

    async def _submit(self, ticket: TicketInput, override: bool) -> SubmitResult:
        ticket.validate()
        found = self.checks(ticket, override=override)
        blocks = [check for check in found if check.severity == "block"]
        if blocks:
            raise TicketError("size", "; ".join(check.message for check in blocks))
        wire = ticket.wire_limit()
        client = self.session.client
        client_order_id = self.client_order_id_for(ticket)
        request: dict[str, Any] = {
            "type": ticket.order_type,
            "source": ticket.source,
            "destination": ticket.destination,
            "size": format_decimal(ticket.size),
        }
        if wire is not None:
            request["limit"] = str(wire)
        if ticket.end_at is not None:
            request["endAt"] = format_timestamp(ticket.end_at)
        what = self.describe(ticket)
        self.journal.record_intent(client_order_id, ticket.order_type, client.account_id, request)
        try:
            if ticket.order_type == "limit":
                order = await client.limit_order(
                    ticket.source,
                    ticket.destination,
                    ticket.size,
                    limit=None if wire is None else wire.value,
                    end_at=ticket.end_at,
                    client_order_id=client_order_id,
                )
            else:
                order = await client.market_order(
                    ticket.source, ticket.destination, ticket.size, client_order_id=client_order_id
                )
        except (InsufficientFunds, CreditNotAvailable, InvalidRequest, Refused) as exc:
            return self._finish(client_order_id, "rejected", exc.message, found, what)
        except NotSent as exc:
            return self._finish(client_order_id, "failed", f"not sent: {exc}", found, what)
        except OutcomeUnknown as exc:
            return self._finish(client_order_id, "unknown", exc.message, found, what)
        except ServiceError as exc:
            return self._finish(client_order_id, "failed", str(exc), found, what)
        except BaseException:
            # Cancelled or a bug: the answer is not known; reconciliation settles it later.
            self.journal.record_outcome(
                client_order_id, "unknown", detail="submission interrupted before its answer"
            )
            raise
        return self._done(self._answered(client_order_id, order, found), what)

    def _answered(self, client_order_id: str, order: Order, found: Sequence[Check]) -> SubmitResult:
        self.journal.record_order(client_order_id, order)
        status = _order_status(order)
        if status in ("filled", "submitted"):
            self.session.after_fill()  # balances changed (filled) or funds got locked (resting)
        return SubmitResult(status, client_order_id, _order_message(order), order, tuple(found))

    def _finish(
        self,
        client_order_id: str,
        status: SubmitStatus,
        detail: str,
        found: list[Check],
        what: str,
    ) -> SubmitResult:
        self.journal.record_outcome(client_order_id, status, detail=detail)
        return self._done(SubmitResult(status, client_order_id, detail, None, tuple(found)), what)

    def _done(self, result: SubmitResult, what: str) -> SubmitResult:
        if result.status in ("filled", "submitted", "rejected"):
            self._forget(result.client_order_id)
        elif result.status == "unknown":
            self._settle_later(result.client_order_id, what)
        level = LogLevel.SUCCESS if result.status in ("filled", "submitted") else LogLevel.WARNING
        if result.status == "unknown":
            level = LogLevel.ERROR
        kind = {"filled": EventKind.FILL, "rejected": EventKind.REFUSAL}.get(
            result.status, EventKind.NONE
        )
        self.session.log(level, f"order {result.status}: {what} — {result.message}", kind)
        self.results.publish(result)
        return result

    def _forget(self, client_order_id: str) -> None:
        if self._proposed is not None and self._proposed[1] == client_order_id:
            self._proposed = None

    # -- settling lost answers ------------------------------------------------------------------

    def _settle_later(self, client_order_id: str, what: str) -> None:
        task = asyncio.get_running_loop().create_task(
            self._settle(client_order_id, what), name=f"settle {client_order_id}"
        )
        self._settlers.add(task)
        task.add_done_callback(self._settlers.discard)

    async def _settle(self, client_order_id: str, what: str) -> None:
        """Look the order up until the server says what happened; then publish the outcome."""
        lookup = server_lookup(self.session.client)
        for delay in self.settle_delays:
            await asyncio.sleep(delay)
            entry = self.journal.entry(client_order_id)
            if entry is None or entry.status != "unknown":
                return  # settled meanwhile (sent again and answered)
            try:
                order = await lookup(entry)
            except ServiceError as exc:
                log.info("order %s still unknown: %s", client_order_id, exc)
                continue
            if order is None:
                detail = "not on the server's order list: it was never placed"
                self.journal.record_outcome(client_order_id, "failed", detail=detail)
                result = SubmitResult("failed", client_order_id, detail)
            else:
                result = self._answered(client_order_id, order, ())
            self._done(result, f"{what} (settled by looking it up)")
            return
        self.session.log(
            LogLevel.ERROR,
            f"order {client_order_id} ({what}) is still unknown after "
            f"{len(self.settle_delays)} lookups; check the order list before sending again",
        )


def _order_status(order: Order) -> SubmitStatus:
    status = order.result.status
    if status in ("filled", "submitted", "rejected"):
        return status  # type: ignore[return-value]
    if status == "canceled":
        return "failed"
    return "unknown"


def _order_message(order: Order) -> str:
    result = order.result
    if result.status == "filled":
        total = f" for {result.total}" if result.total is not None else ""
        price = f" at {result.price}" if result.price is not None else ""
        return f"filled: sold {order.size}{total}{price}"
    if result.status == "submitted":
        limit = f" with limit {order.limit}" if order.limit is not None else ""
        return f"resting: {order.size}{limit}"
    return result.error or f"order {result.status}"
