"""The ticket's live indicative price: an order estimate as the trader types, debounced, each
request superseding the one before (even in flight); refreshed as the market moves
(``refresh``: one request at a time, never starved by ticks faster than the round trip), each
answer stamped with when it arrived so its age can be shown and a stale one refused."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, replace

from app.api import ServiceClient, ServiceError
from app.domain import Amount, Price
from app.domain.records import Estimate
from app.services.events import Topic
from app.services.ticket import TicketInput


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
    #: ``time.monotonic()`` when the answer arrived (0: not stamped).
    at: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error

    def age(self, now: float | None = None) -> float:
        """Seconds since the answer arrived."""
        return max(0.0, (time.monotonic() if now is None else now) - self.at)


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
        self._asking: TicketInput | None = None
        self._again = False

    def request(self, ticket: TicketInput) -> None:
        """Ask for an estimate of ``ticket``; supersedes any earlier request."""
        self.cancel()
        self._start(ticket, self.debounce)

    def refresh(self, ticket: TicketInput) -> None:
        """The market moved: a new estimate of ``ticket`` now. A request for the same ticket
        already under way is not cancelled (ticks faster than the round trip would starve it):
        one more follows as soon as it is answered."""
        if self.pending and self._asking == ticket:
            self._again = True
            return
        self.cancel()
        self._start(ticket, 0.0)

    def _start(self, ticket: TicketInput, delay: float) -> None:
        self._asking, self._again = ticket, False
        self._task = asyncio.get_running_loop().create_task(
            self._run(ticket, delay), name="estimate"
        )

    @property
    def pending(self) -> bool:
        return self._task is not None and not self._task.done()

    async def close(self) -> None:
        task = self._task
        self.cancel()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def cancel(self) -> None:
        """Drop the request waiting or in flight (its answer is never published)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()

    async def _run(self, ticket: TicketInput, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        while True:
            self._again = False
            result = await fetch_estimate(self._client, ticket)
            self._publish(replace(result, at=time.monotonic()))
            if not self._again:
                return

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
