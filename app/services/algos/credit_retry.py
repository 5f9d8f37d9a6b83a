"""An order the service refused for credit outside business hours, queued to be sent again when
the credit window opens: the parent a "Send when credit opens" offers, built from the order as
the trader entered it.

A limit order is retried at the trader's own limit (in the pair's terms, not the wire's
rounded inverse) and rests for its own end time; a market order is retried marketable — the
touch plus the collar, ending within seconds — since the engine sends limit orders only.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from decimal import Decimal

from app.domain.pair_terms import PairSide
from app.services.algos.credit_window import CreditWindow, is_credit_refusal
from app.services.algos.specs import AlgoSpec
from app.services.ticket import TicketInput

#: How long a queued retry waits for the window unless the trader says otherwise.
DEFAULT_DEADLINE = timedelta(hours=24)


def retry_spec(
    ticket: TicketInput,
    refusal: str,
    known_pairs: Iterable[str],
    now: datetime,
    *,
    deadline: timedelta = DEFAULT_DEADLINE,
    collar_bps: Decimal = Decimal(10),
) -> AlgoSpec:
    """The retry of ``ticket`` after ``refusal`` (ValueError when it was not refused for
    credit: only a credit refusal has a window to wait for). ``now`` is the server's time."""
    if not is_credit_refusal(refusal):
        raise ValueError("only an order refused for credit can wait for the credit window")
    pair_side = PairSide.of(ticket.source, ticket.destination, known_pairs)
    window = CreditWindow.find(refusal)
    limit = None if ticket.limit is None else pair_side.price(ticket.limit).value
    rest = DEFAULT_DEADLINE
    if ticket.end_at is not None and ticket.end_at > now:
        rest = ticket.end_at - now
    return AlgoSpec(
        "credit_retry",
        str(pair_side.pair),
        pair_side.side,
        ticket.size,
        collar_bps=collar_bps,
        limit_price=limit,
        rest_seconds=max(1, int(rest.total_seconds())),
        deadline=now + deadline,
        window="" if window is None else window.text,
    )
