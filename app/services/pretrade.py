"""Before an order leaves: the balances and credit of both assets after the trade (what-if),
the refusal the server would likely send, and the precautionary checks (funds, fat finger,
limit far from the book).

These are predictions from the last balances and top of book the terminal saw; they help the
trader but **the server's answer still rules**: a refusal it sends is shown verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Literal

from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT, format_trimmed
from app.domain.records import Balances, Estimate, PortfolioBalance, TopOfBook
from app.domain.valuation import value_in
from app.services.limit_prices import display_number, wire_limit
from app.services.ticket import TicketInput

Severity = Literal["warn", "block"]


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
class Shortfall:
    """Why the service would refuse, as numbers: ``needed`` of ``asset`` where only
    ``available`` can be spent now (``reason`` is the refusal's first words)."""

    reason: str
    asset: str
    needed: Decimal
    available: Decimal


@dataclass(frozen=True)
class WhatIf:
    """Both assets after the trade. When a refusal is predicted the after-values are None:
    the trade would not happen, so there is no "after" to show (never a negative credit)."""

    source: AssetAfter
    destination: AssetAfter
    needs_credit: bool
    #: The refusal the server is expected to send (its first words: ``Insufficient Funds`` or
    #: ``Credit Not Available``), or None. A prediction: the server's answer rules.
    refusal: str | None
    shortfall: Shortfall | None = None
    #: A limit order that does not fill now: its size is locked, nothing is received yet.
    rests: bool = False


def _portfolio_balance(balances: Balances, asset: str) -> PortfolioBalance:
    found = balances.portfolio.balances.get(asset)
    zero = Decimal(0)
    return found or PortfolioBalance(asset, zero, zero, zero, zero, zero, zero, zero)


def what_if(
    ticket: TicketInput,
    balances: Balances,
    estimate: Estimate | None,
    *,
    rests: bool = False,
) -> WhatIf:
    """Balances of both assets after the trade and the refusal the server would likely send.

    Spending uses free funds first, then credit; a receipt repays used credit first. The
    received amount comes from ``estimate`` (indicative); without one the destination's
    after-values are None. A limit order that rests (``rests``) locks its source at once and
    receives nothing until it fills: the destination's after-values are then None. The refusal
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
        if received is None or rests:
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
    refusal = predict_refusal(size, src)
    if refusal is not None:  # refused: nothing changes, and no impossible "after" is shown
        source = AssetAfter(source.asset, source.funds, source.credit, None, None)
        destination = AssetAfter(
            destination.asset, destination.funds, destination.credit, None, None
        )
    return WhatIf(
        source, destination, borrowed > 0, refusal, shortfall(size, src) if refusal else None, rests
    )


def shortfall(size: Decimal, balance: PortfolioBalance) -> Shortfall | None:
    """The refusal expected for spending ``size`` as numbers (None: it fits)."""
    words = predict_refusal(size, balance)
    if words is None:
        return None
    reason = words.split(":", 1)[0]
    available = balance.available_funds
    if reason == "Insufficient Funds" and balance.total_credit > 0:
        available = balance.available_to_trade
    return Shortfall(reason, balance.asset, size, available)


def fills_now(ticket: TicketInput, top_of_book: Mapping[str, TopOfBook]) -> bool | None:
    """Whether a limit order would fill at once against the touch (the bid when selling the
    pair's base, the ask when buying it), compared in wire terms as the service compares.
    None for a market order or without a book for the pair."""
    if ticket.limit is None:
        return None
    try:
        wire = wire_limit(ticket.source, ticket.destination, ticket.limit).value
    except (ValueError, ArithmeticError):
        return None
    with localcontext(MONEY_CONTEXT):
        selling = top_of_book.get(f"{ticket.source}/{ticket.destination}")
        if selling is not None and selling.bid > 0:
            return selling.bid >= wire  # destination per source the book pays now
        buying = top_of_book.get(f"{ticket.destination}/{ticket.source}")
        if buying is not None and buying.ask > 0:
            return 1 / buying.ask >= wire
    return None


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
    top_of_book: Mapping[str, TopOfBook],
    limits: CheckLimits | None = None,
    *,
    override: bool = False,
    precision: Precision | None = None,
    limit_switched: bool = False,
) -> list[Check]:
    """Warnings and blocks for ``ticket``. A fat-finger notional blocks unless ``override``
    (then it is reported as a warning). A limit far from the book is a warning, or a block
    when ``limit_switched`` (it was typed for the other side: the trader must look at it
    again). Missing data skips the check it needs. Amounts are written with ``precision``
    (grouped, the asset's decimals)."""
    limits = limits or CheckLimits()
    shown_as = precision or Precision()
    found: list[Check] = []
    if balances is not None:
        src = _portfolio_balance(balances, ticket.source)
        can_spend = src.available_funds + src.available_credit
        if ticket.size > can_spend:
            found.append(
                Check(
                    "funds",
                    "warn",
                    f"size {shown_as.exact(ticket.size, ticket.source)} {ticket.source} is above "
                    f"the available funds plus credit "
                    f"({shown_as.exact(can_spend, ticket.source)} {ticket.source})",
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
        text = f"limit is {percent} % away from the {side} ({display_number(reference)})"
        if limit_switched:
            text += "; it was typed before the side changed: edit the limit to send"
        found.append(Check("limit_distance", "block" if limit_switched else "warn", text))
    return found


def _limit_distance(
    ticket: TicketInput, tops: Mapping[str, TopOfBook]
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
