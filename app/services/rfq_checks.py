"""The RFQ desk's pre-trade checks: the order ticket's checks (``app.services.pretrade``:
funds plus credit, the fat-finger size limit in the valuation currency) on each side's
equivalent order — the buy side sells QUOTE for BASE, the sell side sells BASE for QUOTE — said
in the trader's words for the side of the quote they stand for.

They read an ``RfqMarket``: one market snapshot of the session's (``app.services.market``), the
connection's health and the limits; a view, never a copy of the market.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, localcontext

from app.domain import Amount, AssetPair
from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT, divide
from app.domain.pair_terms import PairSide
from app.domain.records import Balances, TopOfBook
from app.domain.valuation import value_in
from app.services.health import Health, HealthState
from app.services.market import MarketSnapshot
from app.services.pretrade import Check, CheckLimits, Severity, checks
from app.services.rfq_quote import SIDES, LiveQuote, Side, side_name, size_text
from app.services.ticket import TicketInput


@dataclass(frozen=True)
class RfqMarket:
    """What the checks read: one market snapshot (balances, tops of book), the connection's
    health and the limits. A view over the session's snapshot, never a copy of its own."""

    snapshot: MarketSnapshot = field(default_factory=MarketSnapshot)
    health: HealthState | None = None
    limits: CheckLimits = field(default_factory=CheckLimits)

    @property
    def balances(self) -> Balances | None:
        return self.snapshot.balances

    @property
    def top_of_book(self) -> Mapping[str, TopOfBook]:
        return self.snapshot.tops

    @property
    def offline(self) -> bool:
        return self.health is not None and self.health.health == Health.OFFLINE

    def offline_reason(self) -> str | None:
        """Why nothing may be sent now (None: the connection is not known to be down)."""
        if not self.offline or self.health is None:
            return None
        return f"the connection is offline ({self.health.reason})"


@dataclass(frozen=True)
class SideCheck:
    """One check on one side, in the trader's words."""

    side: Side
    code: str  # pretrade's: "funds", "fat_finger", "unvalued"; or "no_price"
    severity: Severity
    text: str
    notional: Decimal | None = None  # valued size (fat_finger), in the valuation currency


@dataclass(frozen=True)
class RfqChecks:
    """The checks of both sides of a request or a quote."""

    found: tuple[SideCheck, ...] = ()

    def of(self, side: Side) -> list[SideCheck]:
        return [check for check in self.found if check.side == side]

    def blocks(self, side: Side | None = None) -> list[SideCheck]:
        return [c for c in self.found if c.severity == "block" and side in (None, c.side)]

    def warnings(self, side: Side | None = None) -> list[SideCheck]:
        return [c for c in self.found if c.severity == "warn" and side in (None, c.side)]

    @property
    def size_limited(self) -> bool:
        """A size-limit finding (blocked, or overridden): the override control applies."""
        return any(check.code == "fat_finger" for check in self.found)

    def reason(self, side: Side) -> str | None:
        """Why ``side`` may not be accepted (None: no check blocks it)."""
        blocks = self.blocks(side)
        return "; ".join(check.text for check in blocks) if blocks else None


def request_ticket(
    pair: AssetPair, side: Side, size: Amount, tops: Mapping[str, TopOfBook]
) -> tuple[TicketInput, bool] | None:
    """The order-ticket equivalent of one side of a request, and whether its size is an
    estimate (converted through the top of book: the buy side spends QUOTE, the sell side
    BASE). None when the size is in the other asset and there is no book to convert it."""
    pair_side = PairSide(pair, side)
    spend = pair_side.source
    if size.asset == spend:
        return TicketInput(spend, pair_side.destination, size.value), False
    top = tops.get(str(pair))
    with localcontext(MONEY_CONTEXT):
        if top is None:
            return None
        if side == "buy" and top.ask > 0:  # size in BASE: pay about size x ask
            return TicketInput(spend, pair_side.destination, size.value * top.ask), True
        if side == "sell" and top.bid > 0:  # size in QUOTE: give about size / bid
            return TicketInput(spend, pair_side.destination, divide(size.value, top.bid)), True
    return None


def quote_ticket(live: LiveQuote, side: Side) -> TicketInput:
    """The order-ticket equivalent of accepting ``side``: sell exactly what the side pays."""
    quoted = live.quote.side(side)
    return TicketInput(quoted.source.asset, quoted.destination.asset, quoted.source.value)


def _can_spend(balances: Balances | None, asset: str) -> Decimal:
    found = balances.portfolio.balances.get(asset) if balances is not None else None
    return Decimal(0) if found is None else found.available_funds + found.available_credit


def _in_trader_terms(
    check: Check,
    side: Side,
    ticket: TicketInput,
    estimated: bool,
    pair: str,
    market: RfqMarket,
    precision: Precision,
) -> SideCheck:
    """Pretrade's finding for ``ticket`` said for the side of the quote it stands for."""
    name = side_name(pair, side)
    asset, valuation = ticket.source, market.limits.valuation
    about = "about " if estimated else ""
    if check.code == "funds":
        spend = (
            precision.amount(ticket.size, asset)
            if estimated
            else precision.exact(ticket.size, asset)
        )
        can = precision.exact(_can_spend(market.balances, asset), asset)
        text = (
            f"{name} spends {about}{spend} {asset}, more than the {can} {asset} "
            "available with credit"
        )
        return SideCheck(side, check.code, check.severity, text)
    if check.code == "fat_finger":
        notional = value_in(ticket.size, asset, valuation, market.top_of_book)
        worth = precision.amount(notional, valuation)
        cap = precision.exact(market.limits.max_notional, valuation)
        text = f"{name} is worth about {worth} {valuation}, above the {cap} {valuation} size limit"
        if check.severity == "warn":
            text += " (overridden)"
        return SideCheck(side, check.code, check.severity, text, notional)
    if check.code == "unvalued":
        text = f"{name}: no price values {asset} in {valuation}, so the size limit is not checked"
        return SideCheck(side, check.code, check.severity, text)
    return SideCheck(side, check.code, check.severity, check.message)


def _side_checks(
    side: Side,
    ticket: TicketInput,
    estimated: bool,
    pair: str,
    market: RfqMarket,
    override: bool,
    precision: Precision,
) -> list[SideCheck]:
    found = checks(
        ticket, market.balances, dict(market.top_of_book), market.limits, override=override
    )
    return [
        _in_trader_terms(check, side, ticket, estimated, pair, market, precision) for check in found
    ]


def request_checks(
    pair: str, size: Amount, market: RfqMarket, *, override: bool = False, precision: Precision
) -> RfqChecks:
    """The order ticket's checks on both sides of a request for ``size`` on ``pair``."""
    parsed = AssetPair.parse(pair, "pair")
    found: list[SideCheck] = []
    for side in SIDES:
        made = request_ticket(parsed, side, size, market.top_of_book)
        if made is None:
            text = (
                f"{side_name(parsed, side)}: no top of book for {pair} yet, so funds and the "
                "size limit are not checked"
            )
            found.append(SideCheck(side, "no_price", "warn", text))
            continue
        ticket, estimated = made
        found.extend(_side_checks(side, ticket, estimated, pair, market, override, precision))
    return RfqChecks(tuple(found))


def quote_checks(
    live: LiveQuote, market: RfqMarket, *, override: bool = False, precision: Precision
) -> RfqChecks:
    """The order ticket's checks on each side of ``live`` as quoted (again before accept)."""
    found: list[SideCheck] = []
    for side in SIDES:
        ticket = quote_ticket(live, side)
        found.extend(_side_checks(side, ticket, False, live.pair, market, override, precision))
    return RfqChecks(tuple(found))


def request_block_text(
    size: Amount, found: RfqChecks, market: RfqMarket, precision: Precision
) -> str:
    """Why a request was stopped, said once for the request (not once per side): what the
    size is worth (the size itself when it is in the valuation currency)."""
    limited = [check.notional for check in found.blocks() if check.notional is not None]
    if not limited:
        return "; ".join(check.text for check in found.blocks())
    valuation = market.limits.valuation
    cap = f"{precision.exact(market.limits.max_notional, valuation)} {valuation}"
    if size.asset == valuation:
        return f"{size_text(size)} is above the {cap} size limit"
    worth = value_in(size.value, size.asset, valuation, market.top_of_book) or max(limited)
    return (
        f"{size_text(size)} is worth about {precision.amount(worth, valuation)} {valuation}, "
        f"above the {cap} size limit"
    )
