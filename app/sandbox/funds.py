"""Funds and credit checks, and trade booking, shared by orders, RFQ accepts and the matcher.

Credit rules (app/sandbox/README.md): an order may spend more than the free balance of its
source asset only against a credit line on that asset (``limit`` < 0). Without a credit line the
refusal is 424 ``Insufficient Funds`` with the ``tradesSubmitted`` body; with one, credit is granted
only while credit hours are open (else 424 ``Credit Not Available``) and up to the available
credit (else 424 ``Insufficient Funds`` naming what is available including credit).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from app.domain.money import format_trimmed
from app.sandbox.config import CreditHours
from app.sandbox.store import Store
from app.sandbox.wire import ApiError, order_refusal


@dataclass(frozen=True)
class Refusal:
    """Why an order cannot be funded; ``trades_shape`` picks the seed's body variant."""

    message: str
    trades_shape: bool

    def error(self, order_id: str) -> ApiError:
        return order_refusal(424, order_id, self.message, trades=self.trades_shape)


def check_funds(
    store: Store,
    credit_hours: CreditHours,
    account_id: str,
    asset: str,
    size: Decimal,
    now: datetime,
) -> Refusal | None:
    """None when ``size`` of ``asset`` can be spent now; otherwise the refusal to send."""
    balance = store.balance(account_id, asset)
    funds = balance.available_funds
    if size <= funds:
        return None
    if balance.total_credit <= 0:
        return Refusal(_insufficient(size, funds, asset), trades_shape=True)
    if credit_hours.never:
        return Refusal(
            "Credit Not Available: credit is currently unavailable for this account; "
            "please contact your account executive",
            trades_shape=False,
        )
    if not credit_hours.is_open(now):
        return Refusal(
            f"Credit Not Available: credit is granted only during business hours "
            f"({credit_hours.text}); please contact your account executive",
            trades_shape=False,
        )
    available = funds + balance.available_credit
    if size > available:
        return Refusal(_insufficient(size, available, asset), trades_shape=False)
    return None


def _insufficient(size: Decimal, available: Decimal, asset: str) -> str:
    return (
        f"Insufficient Funds: Requested {format_trimmed(size)} {asset} "
        f"but only {format_trimmed(available)} {asset} is available"
    )


def book_trade(
    store: Store,
    *,
    account_id: str,
    transaction_id: str,
    source: str,
    size: Decimal,
    destination: str,
    total: Decimal,
    event_time: str,
    from_locked: bool = False,
) -> int:
    """Both legs of one trade under one ordering; returns that ordering."""
    with store.transaction():
        ordering = store.next_ordering()
        for leg, asset, amount, side in (
            (0, source, -size, "source"),
            (1, destination, total, "destination"),
        ):
            store.book(
                ordering=ordering,
                leg=leg,
                account_id=account_id,
                transaction_id=transaction_id,
                asset=asset,
                amount=amount,
                event_type="trade",
                sub_event_type=side,
                event_time=event_time,
                from_locked=from_locked and side == "source",
            )
    return ordering
