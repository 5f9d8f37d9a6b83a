"""The order desk: the ticket, its live indicative price, what-if balances, pre-trade checks and
safe submission of limit and market orders. asyncio only, no Qt (design.md §1).

Prices on the ticket are in the trader's terms (the pair's natural QUOTE per BASE, or already in
the wire's SOURCE/DESTINATION); ``app.services.pricing.wire_limit`` converts them (§2).

Predictions here (what-if refusals, checks) are computed from the last balances and top of book
the terminal saw; they help the trader but **the server's answer still rules**: a refusal it
sends is shown verbatim, whatever was predicted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any, Literal

from app.api import (
    CreditNotAvailable,
    InsufficientFunds,
    InvalidRequest,
    NotSent,
    OutcomeUnknown,
    Refused,
    ServiceClient,
    ServiceError,
    new_client_order_id,
)
from app.domain import Amount, Price, format_decimal, format_timestamp, utc_now
from app.domain.money import MONEY_CONTEXT, format_trimmed
from app.domain.records import Estimate, Order, PortfolioBalance, TopOfBook
from app.domain.valuation import value_in
from app.services.events import Topic
from app.services.journal import OrderJournal
from app.services.pricing import (
    describe_limit,
    display_number,
    pair_base,
    wire_limit,
)
from app.services.session import Balances, TerminalSession

log = logging.getLogger("tradeterm.services")

OrderType = Literal["limit", "market"]
Severity = Literal["warn", "block"]
SubmitStatus = Literal["filled", "submitted", "rejected", "failed", "unknown"]

# -- the ticket ---------------------------------------------------------------------------------


class TicketError(ValueError):
    """A ticket that cannot be sent as it is; ``field`` names the input to fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class AlreadySending(RuntimeError):
    """A submission is still in flight: a second Enter sends nothing."""


@dataclass(frozen=True)
class TicketInput:
    """Sell ``size`` of ``source`` for ``destination``; ``limit`` in the trader's units."""

    source: str
    destination: str
    size: Decimal
    order_type: OrderType = "market"
    limit: Price | None = None
    end_at: datetime | None = None

    def validate(self, now: datetime | None = None) -> None:
        """Raise TicketError for the first problem found (field and message)."""
        if not self.size.is_finite() or self.size <= 0:
            raise TicketError("size", f"size must be greater than zero, not {self.size}")
        if self.source == self.destination:
            raise TicketError("destination", f"{self.source} is on both sides of the order")
        if self.order_type not in ("limit", "market"):
            raise TicketError("order_type", f"order type is limit or market, not {self.order_type}")
        if self.order_type == "market" and self.limit is not None:
            raise TicketError("limit", "a market order takes no limit price")
        if self.order_type == "market" and self.end_at is not None:
            raise TicketError("end_at", "an end time applies to limit orders only")
        if self.end_at is not None and self.end_at <= (now or utc_now()):
            raise TicketError("end_at", f"end time {format_timestamp(self.end_at)} is in the past")
        if self.limit is not None:
            try:
                wire_limit(self.source, self.destination, self.limit)
            except (ValueError, ArithmeticError) as exc:
                raise TicketError("limit", str(exc)) from None

    def wire_limit(self) -> Price | None:
        """The limit as sent: SOURCE/DESTINATION (design.md §2)."""
        return None if self.limit is None else wire_limit(self.source, self.destination, self.limit)


# -- live indicative price -----------------------------------------------------------------------


@dataclass(frozen=True)
class EstimateResult:
    """The server's indicative answer for ``ticket``: ``received`` in destination, ``price`` in
    SOURCE/DESTINATION and ``inverted`` in DESTINATION/SOURCE; or ``error`` in words."""

    ticket: TicketInput
    received: Amount | None = None
    price: Price | None = None
    inverted: Price | None = None
    error: str = ""
    estimate: Estimate | None = None

    @property
    def ok(self) -> bool:
        return not self.error


class EstimateFeed:
    """Indicative prices for the ticket as the trader types: each ``request`` waits ``debounce``
    seconds and is superseded (cancelled, even in flight) by a newer one. Results are published
    on ``results``; ``request`` itself never blocks."""

    def __init__(self, client: ServiceClient, debounce: float = 0.3) -> None:
        self._client = client
        self.debounce = debounce
        self._task: asyncio.Task[None] | None = None
        self.results: Topic[EstimateResult] = Topic("estimate")
        self.latest: EstimateResult | None = None

    def request(self, ticket: TicketInput) -> None:
        """Ask for an estimate of ``ticket``; supersedes any earlier request."""
        self._cancel()
        self._task = asyncio.get_running_loop().create_task(self._run(ticket), name="estimate")

    @property
    def pending(self) -> bool:
        return self._task is not None and not self._task.done()

    async def close(self) -> None:
        task = self._task
        self._cancel()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _cancel(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()

    async def _run(self, ticket: TicketInput) -> None:
        await asyncio.sleep(self.debounce)
        self._publish(await fetch_estimate(self._client, ticket))

    def _publish(self, result: EstimateResult) -> None:
        self.latest = result
        self.results.publish(result)


async def fetch_estimate(client: ServiceClient, ticket: TicketInput) -> EstimateResult:
    """One estimate for ``ticket`` (quote = destination), as an EstimateResult."""
    if ticket.size <= 0 or ticket.source == ticket.destination:
        return EstimateResult(ticket, error="enter a size and two different assets")
    try:
        estimate = await client.estimate(
            ticket.source, ticket.destination, ticket.size, ticket.destination
        )
    except ServiceError as exc:
        return EstimateResult(ticket, error=f"no indicative price: {exc}")
    price = estimate.price
    try:
        if price.base == ticket.destination and price.quote == ticket.source:
            price = price.invert()
        inverted = price.invert()
    except ZeroDivisionError:
        return EstimateResult(ticket, error="no indicative price: the service quoted zero")
    return EstimateResult(ticket, estimate.destination, price, inverted, estimate=estimate)


# -- what-if -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssetAfter:
    """Free funds and available credit of one asset, now and after the trade (None when the
    amount received is not known yet)."""

    asset: str
    funds: Decimal
    credit: Decimal
    funds_after: Decimal | None
    credit_after: Decimal | None


@dataclass(frozen=True)
class WhatIf:
    source: AssetAfter
    destination: AssetAfter
    needs_credit: bool
    #: The refusal the server is expected to send (its first words: ``Insufficient Funds`` or
    #: ``Credit Not Available``), or None. A prediction: the server's answer rules.
    refusal: str | None


def _portfolio_balance(balances: Balances, asset: str) -> PortfolioBalance:
    found = balances.portfolio.balances.get(asset)
    zero = Decimal(0)
    return found or PortfolioBalance(asset, zero, zero, zero, zero, zero, zero, zero)


def what_if(ticket: TicketInput, balances: Balances, estimate: Estimate | None) -> WhatIf:
    """Balances of both assets after the trade and the refusal the server would likely send.

    Spending uses free funds first, then credit; a receipt repays used credit first. The
    received amount comes from ``estimate`` (indicative); without one the destination's
    after-values are None. A limit order that rests locks its source at once but receives
    nothing until it fills: the destination values then describe the fill. The refusal
    follows the service's rules as the portfolio shows them:
    within free funds, fine; no credit line, Insufficient Funds; beyond what can be traded now,
    Credit Not Available when credit exists but is not counted (outside credit hours), else
    Insufficient Funds naming the amount available.
    """
    size = ticket.size
    src = _portfolio_balance(balances, ticket.source)
    dst = _portfolio_balance(balances, ticket.destination)
    with localcontext(MONEY_CONTEXT):
        borrowed = max(size - src.available_funds, Decimal(0))
        source = AssetAfter(
            ticket.source,
            src.available_funds,
            src.available_credit,
            max(src.available_funds - size, Decimal(0)),
            src.available_credit - borrowed,
        )
        received = None
        if estimate is not None and estimate.destination.asset == ticket.destination:
            received = estimate.destination.value
        if received is None:
            destination = AssetAfter(
                ticket.destination, dst.available_funds, dst.available_credit, None, None
            )
        else:
            repaid = min(received, dst.used_credit)
            destination = AssetAfter(
                ticket.destination,
                dst.available_funds,
                dst.available_credit,
                dst.available_funds + received - repaid,
                dst.available_credit + repaid,
            )
    return WhatIf(source, destination, borrowed > 0, predict_refusal(size, src))


def predict_refusal(size: Decimal, balance: PortfolioBalance) -> str | None:
    """The refusal expected for spending ``size`` of ``balance.asset`` (None: it fits)."""
    asset, funds = balance.asset, balance.available_funds
    if size <= funds:
        return None
    if balance.total_credit <= 0:
        return _insufficient(size, funds, asset)
    if balance.available_to_trade < size:
        if balance.available_credit > 0 and balance.available_to_trade == funds:
            return (
                "Credit Not Available: credit is not granted now (outside credit hours); "
                "please contact your account executive"
            )
        return _insufficient(size, balance.available_to_trade, asset)
    return None


def _insufficient(size: Decimal, available: Decimal, asset: str) -> str:
    return (
        f"Insufficient Funds: Requested {format_trimmed(size)} {asset} "
        f"but only {format_trimmed(available)} {asset} is available"
    )


# -- pre-trade checks -------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckLimits:
    """Precautionary settings: the fat-finger notional (in ``valuation``) and how far a limit
    may sit from the top of book before a warning (0.05 = 5 %)."""

    max_notional: Decimal = Decimal(1_000_000)
    max_distance: Decimal = Decimal("0.05")
    valuation: str = "USD"


@dataclass(frozen=True)
class Check:
    code: str  # "funds", "fat_finger", "limit_distance", "unvalued"
    severity: Severity
    message: str


def checks(
    ticket: TicketInput,
    balances: Balances | None,
    top_of_book: dict[str, TopOfBook],
    limits: CheckLimits | None = None,
    *,
    override: bool = False,
) -> list[Check]:
    """Warnings and blocks for ``ticket``. A fat-finger notional blocks unless ``override``
    (then it is reported as a warning). Missing data skips the check it needs."""
    limits = limits or CheckLimits()
    found: list[Check] = []
    if balances is not None:
        src = _portfolio_balance(balances, ticket.source)
        can_spend = src.available_funds + src.available_credit
        if ticket.size > can_spend:
            found.append(
                Check(
                    "funds",
                    "warn",
                    f"size {format_trimmed(ticket.size)} {ticket.source} is above the available "
                    f"funds plus credit ({format_trimmed(can_spend)} {ticket.source})",
                )
            )
    notional = value_in(ticket.size, ticket.source, limits.valuation, top_of_book)
    if notional is None:
        found.append(
            Check(
                "unvalued",
                "warn",
                f"cannot value {ticket.source} in {limits.valuation}: size check skipped",
            )
        )
    elif notional > limits.max_notional:
        shown = f"{display_number(notional, 8)} {limits.valuation}"
        cap = f"{display_number(limits.max_notional)} {limits.valuation}"
        if override:
            found.append(
                Check(
                    "fat_finger", "warn", f"order worth about {shown} is above {cap} (overridden)"
                )
            )
        else:
            found.append(
                Check(
                    "fat_finger",
                    "block",
                    f"order worth about {shown} is above the {cap} limit; confirm to override",
                )
            )
    distance = _limit_distance(ticket, top_of_book)
    if distance is not None and distance[0] > limits.max_distance:
        away, side, reference = distance
        percent = display_number(away * 100, 3)
        found.append(
            Check(
                "limit_distance",
                "warn",
                f"limit is {percent} % away from the {side} ({display_number(reference)})",
            )
        )
    return found


def _limit_distance(
    ticket: TicketInput, tops: dict[str, TopOfBook]
) -> tuple[Decimal, str, Decimal] | None:
    """How far (fraction) the limit is from the side the order trades at: the bid when selling
    the pair's base, the ask when buying it. None without a limit or a book."""
    if ticket.limit is None:
        return None
    try:
        wire = wire_limit(ticket.source, ticket.destination, ticket.limit)
    except (ValueError, ArithmeticError):
        return None
    with localcontext(MONEY_CONTEXT):
        selling = tops.get(f"{ticket.source}/{ticket.destination}")
        if selling is not None and selling.bid > 0:
            return abs(wire.value - selling.bid) / selling.bid, "bid", selling.bid
        buying = tops.get(f"{ticket.destination}/{ticket.source}")
        if buying is not None and buying.ask > 0:
            natural = wire.invert().value  # SOURCE per DESTINATION = QUOTE per BASE
            return abs(natural - buying.ask) / buying.ask, "ask", buying.ask
    return None


# -- submission ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubmitResult:
    status: SubmitStatus
    client_order_id: str
    message: str
    order: Order | None = None
    checks: tuple[Check, ...] = ()


class OrderDesk:
    """Sends the tickets of one session, one at a time, journaling each before it leaves."""

    def __init__(
        self,
        session: TerminalSession,
        journal: OrderJournal,
        limits: CheckLimits | None = None,
    ) -> None:
        self.session = session
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
        client_order_id = new_client_order_id()
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
        self.journal.record_order(client_order_id, order)
        status = _order_status(order)
        if status in ("filled", "submitted"):
            self.session.after_fill()  # balances changed (filled) or funds got locked (resting)
        message = _order_message(order)
        return self._done(SubmitResult(status, client_order_id, message, order, tuple(found)), what)

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
        level = "info" if result.status in ("filled", "submitted") else "warning"
        if result.status == "unknown":
            level = "error"
        self.session.log(level, f"order {result.status}: {what} — {result.message}")
        self.results.publish(result)
        return result


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
