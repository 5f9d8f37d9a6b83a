"""One asset's balance as the trader reads it, from both account views (one rule, so the
terminal's balances table and ``tradeterm api account`` show credit alike).

Get Account gives ``free``, ``locked``, ``limit`` (zero or negative: minus the credit granted)
and ``available``; Get Account Credit (the portfolio) gives the credit itself. Shown: the credit
limit as a positive amount (``limit`` -250000 reads "Credit limit 250,000.00"), the credit used
(free below zero) and the credit still available — from the portfolio when there is one, else
derived from the account (app/sandbox/README.md, "Behaviour the seed leaves open").
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from app.domain.records import Balance, PortfolioBalance

ZERO = Decimal(0)


@dataclass(frozen=True)
class AssetRow:
    """One asset as the table shows it; Decimal throughout."""

    asset: str
    free: Decimal
    locked: Decimal
    available: Decimal
    credit_limit: Decimal
    used_credit: Decimal
    available_credit: Decimal
    pending_deposit: Decimal
    value: Decimal | None = None
    #: The valuation currency and the rate the value was computed with.
    currency: str = ""
    rate: Decimal | None = None

    @property
    def holding(self) -> Decimal:
        return self.free + self.locked

    @property
    def utilisation(self) -> tuple[Decimal, Decimal] | None:
        """``(used, total)`` credit, or None when the asset has no credit line."""
        if self.credit_limit <= 0:
            return None
        return (self.used_credit, self.credit_limit)


def merge_row(asset: str, account: Balance | None, portfolio: PortfolioBalance | None) -> AssetRow:
    """One asset from Get Account and Get Account Credit; either may lack the asset."""
    if account is not None:
        free, locked = account.free, account.locked
        pending = account.pending_deposit
    else:
        assert portfolio is not None
        free = portfolio.available_funds - portfolio.used_credit
        locked, pending = portfolio.locked_funds, ZERO
    if portfolio is not None:
        credit_limit = portfolio.total_credit
        used, available_credit = portfolio.used_credit, portfolio.available_credit
    else:
        assert account is not None
        credit_limit = max(ZERO, -account.limit)
        used = max(ZERO, -account.free)
        available_credit = max(ZERO, credit_limit - used)
    available = account.available if account is not None else free + credit_limit
    return AssetRow(asset, free, locked, available, credit_limit, used, available_credit, pending)
