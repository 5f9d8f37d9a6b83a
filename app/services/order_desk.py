"""The order desk: safe submission of limit and market orders, one at a time, each journaled
(the exact body sent) before it leaves; answers that were lost are settled by
``app.services.settling``. asyncio only, no Qt (design.md §1).

The desk keeps no copy of the market: it reads the one ``Market`` snapshot of its session. The
order ticket (``order_ticket``) previews an order on a snapshot and hands the desk exactly the
request it previewed, with the checks it ran (``send``); ``submit`` is the same for callers with
no ticket on screen (it checks on the current snapshot). The ticket's fields (``ticket``), its
live price (``estimates``) and the predictions (``pretrade``) live in their own modules.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

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
from app.domain.display import Precision
from app.domain.order_request import OrderRequest
from app.domain.records import Balances, Order, TopOfBook
from app.services.events import Topic
from app.services.journal import OrderJournal
from app.services.log_events import EventKind, LogLevel
from app.services.market import MarketSnapshot
from app.services.order_words import action, fill_sentence, resting_sentence
from app.services.pretrade import Check, CheckLimits, checks
from app.services.risk import RiskGate
from app.services.session import TerminalSession
from app.services.settling import (
    SESSION_DELAY_SECONDS,
    SETTLE_DELAYS,
    OrderSettler,
    Sought,
    Verdict,
)
from app.services.tasks import Tasks, may_start, spawn
from app.services.ticket import TicketError, TicketInput

SubmitStatus = Literal["filled", "submitted", "rejected", "failed", "unknown"]

log = logging.getLogger("tradeterm.services")


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
    a change to the ticket, gives the next send a new id. A lost answer is looked up at once
    (``OrderSettler``); still unknown, it settles itself in the background, looking again
    after each of ``settle_delays`` and then every ``session_delay`` seconds for the whole
    session (absence from the list is never proof it was not placed), and the settled result
    is published on ``results`` like any other.
    """

    def __init__(
        self,
        session: TerminalSession,
        journal: OrderJournal,
        limits: CheckLimits | None = None,
        *,
        settle_delays: Sequence[float] = SETTLE_DELAYS,
        session_delay: float = SESSION_DELAY_SECONDS,
        tasks: Tasks | None = None,
        risk: RiskGate | None = None,
    ) -> None:
        self.session = session
        self._tasks = tasks  # the terminal's task owner: settlers end with the terminal
        #: The risk limits and kill switch every send passes (None: none, e.g. a script).
        self.risk = risk
        self.settle_delays = tuple(settle_delays)
        self.session_delay = session_delay
        self._proposed: tuple[TicketInput, str] | None = None
        self._settlers: set[asyncio.Task[None]] = set()
        self.journal = journal
        self.limits = limits or CheckLimits()
        self._sending = False
        # Orders a program sent (``place``): logged as plain lines, not notified one by one
        # (a TWAP's fifty fills would be fifty alerts); the program announces its own end.
        self._quiet: set[str] = set()
        self.sending_changed: Topic[bool] = Topic("order desk sending")
        self.results: Topic[SubmitResult] = Topic("order desk results")
        if risk is not None:  # a refused or failed order no longer counts against the day
            self.results.subscribe(lambda done: risk.settled(done.client_order_id, done.status))

    def close(self) -> None:
        for task in list(self._settlers):
            task.cancel()

    @property
    def settler(self) -> OrderSettler:
        """The settling service over the session's current client."""
        return OrderSettler(self.session.client, delays=self.settle_delays)

    def request_for(self, ticket: TicketInput) -> OrderRequest:
        """What sending ``ticket`` asks of the service: its wire limit and its clientOrderId."""
        return ticket.request(self.client_order_id_for(ticket))

    def client_order_id_for(self, ticket: TicketInput) -> str:
        """The clientOrderId the next send of ``ticket`` will carry (stable per ticket)."""
        if self._proposed is None or self._proposed[0] != ticket:
            self._proposed = (ticket, new_client_order_id())
        return self._proposed[1]

    @property
    def sending(self) -> bool:
        """True while a submission is in flight (the UI disables Send)."""
        return self._sending

    @property
    def market(self) -> MarketSnapshot:
        """The one copy of the market (``app.services.market``): the desk keeps none."""
        return self.session.market.snapshot

    @property
    def balances(self) -> Balances | None:
        return self.market.balances

    @property
    def top_of_book(self) -> Mapping[str, TopOfBook]:
        return self.market.tops

    def checks(self, ticket: TicketInput, *, override: bool = False) -> list[Check]:
        return checks(ticket, self.balances, self.top_of_book, self.limits, override=override)

    @property
    def precision(self) -> Precision:
        """Display precision as the service lists its pairs."""
        precision = Precision()
        precision.learn(self.session.pair_info)
        return precision

    def describe(self, ticket: TicketInput) -> str:
        """The ticket in the trader's words (``Buy BTC for 10,000 USD at ≤ 90,000.00 USD``),
        for the confirmation line and the log."""
        return action(ticket, self.session.pair_info, self.precision)

    async def submit(self, ticket: TicketInput, *, override: bool = False) -> SubmitResult:
        """Validate, check on the current market, journal, send; the outcome as the server (or
        the lookup) says. For callers without a ticket on screen (scripts, tests); the order
        ticket sends its ``Preview`` with ``send``.

        Raises AlreadySending while another submission runs, TicketError for an invalid ticket
        or a blocking check not overridden. Service refusals are results, not exceptions.
        """
        found = self.checks(ticket, override=override)
        return await self.send(ticket, self.request_for(ticket), found)

    async def send(
        self, ticket: TicketInput, request: OrderRequest, found: Sequence[Check]
    ) -> SubmitResult:
        """Send exactly ``request`` (the one a preview showed, ``ticket`` in the wire's terms),
        with the checks that preview ran on its market: they are not run again on another
        copy. The result is published on ``results`` and returned.

        Raises AlreadySending while another submission runs, TicketError for an invalid ticket
        or a blocking check among ``found``, ValueError when ``request`` is not ``ticket``'s
        (the journal would hold one order and the log describe another).
        """
        if request != ticket.request(request.client_order_id):
            raise ValueError("the request is not the ticket's: nothing sent")
        if self._sending:
            raise AlreadySending("an order is being sent; wait for its answer")
        self._set_sending(True)
        try:
            return await self._submit(ticket, request, list(found))
        finally:
            self._set_sending(False)

    async def place(
        self, ticket: TicketInput, request: OrderRequest, found: Sequence[Check] = ()
    ) -> SubmitResult:
        """``send`` for a program that sends many orders of its own (the execution engine's
        children): the same journal, checks, refusals, settling and ``results``, without the
        one-ticket-at-a-time guard, which is there for a trader's second Enter. Each caller
        gives each request its own clientOrderId; sending one again is the caller's choice
        (the service replays it, never doubles it)."""
        if request != ticket.request(request.client_order_id):
            raise ValueError("the request is not the ticket's: nothing sent")
        self._quiet.add(request.client_order_id)
        try:
            return await self._submit(ticket, request, list(found))
        except TicketError:
            self._quiet.discard(request.client_order_id)
            raise

    def _set_sending(self, value: bool) -> None:
        self._sending = value
        self.sending_changed.publish(value)

    async def _submit(
        self, ticket: TicketInput, request: OrderRequest, found: list[Check]
    ) -> SubmitResult:
        client = self.session.client
        ticket.validate(client.clock.server_now())  # an end time is the server's time
        blocks = [check for check in found if check.severity == "block"]
        if blocks:
            raise TicketError("size", "; ".join(check.message for check in blocks))
        if self.risk is not None:  # refused: nothing journaled, nothing sent
            self.risk.admit(ticket, request, self.market)
        client_order_id = request.client_order_id
        what = self.describe(ticket)
        self.journal.record_intent(
            client_order_id,
            ticket.order_type,
            client.account_id,
            request.body_text(client.account_id),
        )
        sent_at = client.clock.server_now()
        self.journal.record_sent(client_order_id, sent_at)
        try:
            order = await client.place_order(request)
        except (InsufficientFunds, CreditNotAvailable, InvalidRequest, Refused) as exc:
            return self._finish(client_order_id, "rejected", exc.message, found, what)
        except NotSent as exc:
            return self._finish(client_order_id, "failed", f"not sent: {exc}", found, what)
        except OutcomeUnknown as exc:
            return await self._lost(Sought.order(request, sent_at), exc, found, what)
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
            self.session.after_fill(order)  # balances changed (filled) or funds locked (resting)
        message = _order_message(order, self.session.pair_info, self.precision)
        return SubmitResult(status, client_order_id, message, order, tuple(found))

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
        level = LogLevel.SUCCESS if result.status in ("filled", "submitted") else LogLevel.WARNING
        if result.status == "unknown":
            level = LogLevel.ERROR
        kind = {"filled": EventKind.FILL, "rejected": EventKind.REFUSAL}.get(
            result.status, EventKind.NONE
        )
        if result.client_order_id in self._quiet:
            kind = EventKind.NONE
            if result.status != "unknown":
                self._quiet.discard(result.client_order_id)
            if level is LogLevel.SUCCESS:
                level = LogLevel.INFO
        self.session.log(level, _log_line(result, what), kind)
        self.results.publish(result)
        return result

    def _forget(self, client_order_id: str) -> None:
        if self._proposed is not None and self._proposed[1] == client_order_id:
            self._proposed = None

    # -- settling lost answers ------------------------------------------------------------------

    async def _lost(
        self, sought: Sought, lost: OutcomeUnknown, found: list[Check], what: str
    ) -> SubmitResult:
        """Look the order up at once; still unknown, say so and keep looking in the background."""
        verdict = await self.settler.now(sought)
        if verdict.final:
            return self._settled(sought.client_order_id, verdict, what, found)
        message = f"{lost.message} ({verdict.detail})"
        result = self._finish(sought.client_order_id, "unknown", message, found, what)
        if not may_start(self._tasks):
            return result
        task = spawn(self._tasks, self._settle(sought, what), f"settle {sought.client_order_id}")
        self._settlers.add(task)
        task.add_done_callback(self._settled_task_done)
        return result

    def _settled_task_done(self, task: asyncio.Task[None]) -> None:
        """A settler that failed is reported at once, not when the task is collected."""
        self._settlers.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("settling %s failed", task.get_name(), exc_info=task.exception())

    async def _settle(self, sought: Sought, what: str) -> None:
        """Look again after each of ``settle_delays``, then every ``SESSION_DELAY_SECONDS`` for
        the whole session, until the server shows the order (absence is never proof)."""

        def still_unknown() -> bool:  # not settled meanwhile (sent again and answered)
            entry = self.journal.entry(sought.client_order_id)
            return entry is not None and entry.status == "unknown"

        verdict = await self.settler.follow(
            sought, delays=self.settle_delays, still_open=still_unknown
        )
        if verdict is None:
            return
        if not verdict.final:
            self.session.log(
                LogLevel.WARNING,
                f"order {sought.client_order_id} ({what}) is still unknown after "
                f"{_count(len(self.settle_delays), 'lookup')}: it may yet appear, so it is not "
                "called failed; still looking every minute (the order list shows it if it "
                "executed)",
            )
            verdict = await self.settler.follow(
                sought,
                delays=itertools.repeat(self.session_delay),
                still_open=still_unknown,
            )
        if verdict is not None and verdict.final:
            self._settled(sought.client_order_id, verdict, f"{what} (settled by looking it up)")

    def _settled(
        self, client_order_id: str, verdict: Verdict, what: str, found: Sequence[Check] = ()
    ) -> SubmitResult:
        if verdict.order is not None:
            return self._done(self._answered(client_order_id, verdict.order, found), what)
        self.journal.record_outcome(client_order_id, verdict.status, detail=verdict.detail)
        return self._done(
            SubmitResult("unknown", client_order_id, verdict.detail, None, tuple(found)), what
        )


def _order_status(order: Order) -> SubmitStatus:
    status = order.result.status
    if status in ("filled", "submitted", "rejected"):
        return status  # type: ignore[return-value]
    if status == "canceled":
        return "failed"
    return "unknown"


def _order_message(order: Order, pairs: Iterable[str], precision: Precision) -> str:
    """A fill as ``Trade.sentence``, a resting order with its limit and end; else the
    service's words."""
    result = order.result
    if result.status == "filled":
        sentence = fill_sentence(order, pairs, precision)
        if sentence is not None:
            return sentence
        return f"Filled · order {order.order_id}"
    if result.status == "submitted":
        return resting_sentence(order, pairs, precision)
    return result.error or f"order {result.status}"


def _count(number: int, noun: str) -> str:
    """``1 lookup``, ``4 lookups``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _log_line(result: SubmitResult, what: str) -> str:
    """One line per outcome, each word once: a fill or a resting order says it all itself;
    the others say what was asked and what came back."""
    if result.status in ("filled", "submitted"):
        return result.message
    heading = {"rejected": "refused", "failed": "failed", "unknown": "outcome unknown"}
    return f"{what}: {heading.get(result.status, result.status)} — {result.message}"
