"""What the order ticket says about a ticket, as text, in the trader's terms (Buy/Sell of a
pair's base, prices QUOTE per BASE): the live estimate with its age, whether a limit fills now
or rests (what it locks, until when), the what-if balances or the refusal they predict, the
pre-trade checks, and the wire limit for the details line. No widgets here, so each
line can be read (and tested) on its own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal, localcontext

from app.domain.display import DASH, Precision
from app.domain.money import MONEY_CONTEXT
from app.domain.pair_terms import PairSide, pair_base
from app.domain.records import TopOfBook
from app.services.estimates import EstimateResult
from app.services.limit_prices import describe_limit, display_number
from app.services.order_intent import Conversion, Preview
from app.services.order_words import (
    action,
    at_least,
    limit_phrase,
    limit_price,
    side_of,
    until_text,
)
from app.services.pretrade import AssetAfter, Check, WhatIf
from app.services.ticket import TicketInput

#: An estimate older than this is not presented as the current price (seconds).
STALE_AFTER = 5.0


def amount_words(pair_side: PairSide, asset: str) -> str:
    """What the amount does: ``to spend`` / ``to buy`` for a buy, ``to sell`` / ``to receive``
    for a sell."""
    if pair_side.side == "buy":
        return "to spend" if asset == pair_side.source else "to buy"
    return "to sell" if asset == pair_side.source else "to receive"


def conversion_text(conversion: Conversion, pair_side: PairSide, precision: Precision) -> str:
    """How an amount in the asset bought becomes the size sent: ``1 BTC at the limit
    90,000.00 → sends 90,000.00 USD`` (exact), or ``≈ 1 BTC at the ask 90,001.00 → sends
    exactly 90,001.00 USD`` (a market order: the fill price decides what it buys)."""
    typed, sent = conversion.typed, conversion.sent
    pair = str(pair_side.pair)
    price = f"{precision.price_text(conversion.price, pair)} {pair_side.pair.quote}"
    typed_text = f"{precision.exact(typed.value, typed.asset)} {typed.asset}"
    sent_text = f"{precision.exact(sent.value, sent.asset)} {sent.asset}"
    if conversion.approximate:
        touch = "ask" if pair_side.side == "buy" else "bid"
        return f"≈ {typed_text} at the {touch} {price} → sends exactly {sent_text}"
    return f"{typed_text} at the limit {price} → sends {sent_text}"


def marketable_text(preview: Preview, precision: Precision) -> str:
    """Hit bid / lift offer in words: ``Buy 0.01 BTC at market, at most 91,169.38 USD`` or
    ``Buy BTC for 1,000.00 USD at market, at most 91,169.38 USD`` (the limit is the worst
    price the order accepts; it fills now or expires)."""
    ticket, pair_side = preview.ticket, preview.fields.pair_side
    if ticket is None or ticket.limit is None or pair_side is None:
        return ""
    pair = pair_side.pair
    limit = pair_side.price(ticket.limit).value
    worst = "at most" if pair_side.side == "buy" else "at least"
    price = f"{precision.price_text(limit, str(pair))} {pair.quote}"
    sold = f"{display_number(ticket.size)} {ticket.source}"  # as the Send button says it
    if pair_side.side == "buy":
        conversion = preview.conversion
        if conversion is not None:
            typed = f"{display_number(conversion.typed.value)} {pair.base}"
            return f"Buy {typed} at market, {worst} {price} (sends {sold})"
        return f"Buy {pair.base} for {sold} at market, {worst} {price}"
    return f"Sell {sold} at market, {worst} {price}"


def wire_text(ticket: TicketInput, known_pairs: Iterable[str]) -> str:
    """``wire 0.0000111… USD/BTC · buy BTC paying at most 90,000 USD per BTC``."""
    wire = ticket.wire_limit()
    if wire is None:
        return ""
    base = pair_base(ticket.source, ticket.destination, known_pairs)
    words = describe_limit(ticket.source, ticket.destination, wire, base)
    return f"wire {wire} · {words}"


def age_text(seconds: float) -> str:
    """``just now``, ``1 s ago``, ``12 s ago``, ``3 min ago``."""
    whole = int(seconds)
    if whole < 1:
        return "just now"
    if whole < 120:
        return f"{whole} s ago"
    return f"{whole // 60} min ago"


def estimate_text(
    result: EstimateResult,
    known_pairs: Iterable[str],
    precision: Precision,
    age: float | None = None,
) -> str:
    """``Buy BTC · spend 10,000.00 USD → ≈ 0.1100 BTC at ≈ 90,900.00 USD · 3 s ago`` or
    ``Sell 0.25 BTC → ≈ 22,700.00 USD at ≈ 90,800.00 USD · just now`` (prices QUOTE per BASE;
    the wire's view is in the details line)."""
    if not result.ok or result.received is None or result.price is None:
        return result.error or "no indicative price"
    ticket = result.ticket
    pair_side = side_of(ticket, known_pairs)
    pair = pair_side.pair
    received = precision.amount(result.received.value, result.received.asset)
    sold = f"{precision.exact(ticket.size, ticket.source)} {ticket.source}"
    try:
        price = pair_side.price(result.price).value
    except (ValueError, ArithmeticError):
        return "no indicative price"
    shown = f"{precision.price_text(price, str(pair))} {pair.quote}"
    head = f"Buy {pair.base} · spend {sold}" if pair_side.side == "buy" else f"Sell {sold}"
    text = f"{head} → ≈ {received} {result.received.asset} at ≈ {shown}"
    if age is not None:
        text += f" · {age_text(age)}"
    return text


def rest_text(
    ticket: TicketInput,
    fills: bool | None,
    known_pairs: Iterable[str],
    tops: Mapping[str, TopOfBook],
    precision: Precision,
    now: datetime | None = None,
) -> str:
    """For a limit order: whether it fills now or rests, what it locks and until when."""
    wire = ticket.wire_limit()
    if wire is None or fills is None:
        return ""
    pairs = list(known_pairs)
    pair_side = side_of(ticket, pairs)
    pair = pair_side.pair
    top = tops.get(str(pair))
    touch_name = "ask" if pair_side.side == "buy" else "bid"
    touch = None if top is None else (top.ask if pair_side.side == "buy" else top.bid)
    touch_text = "" if touch is None else f"{precision.price_text(touch, str(pair))} {pair.quote}"
    if fills:
        return f"Fills now: your limit reaches the {touch_name} ({touch_text})."
    natural = limit_price(ticket.source, ticket.destination, wire, pairs)
    locked = f"{precision.exact(ticket.size, ticket.source)} {ticket.source}"
    text = (
        f"Rests: the {touch_name} is {touch_text}, your limit "
        f"{limit_phrase(pair_side, natural, precision)[3:]}. Locks {locked}"
    )
    if ticket.end_at is None:
        return text + " until it fills — with no end time it cannot be cancelled, ever."
    return text + f" until {until_text(ticket.end_at, now)}; it cannot be cancelled before then."


def limit_fill_text(ticket: TicketInput, known_pairs: Iterable[str], precision: Precision) -> str:
    """A resting limit order at its limit: ``If filled at the limit: ≥ 0.2000 BTC for
    18,000.00 USD`` (at a better price it gets more)."""
    wire = ticket.wire_limit()
    if wire is None:
        return ""
    pairs = list(known_pairs)
    pair_side = side_of(ticket, pairs)
    natural = limit_price(ticket.source, ticket.destination, wire, pairs)
    if natural <= 0:
        return ""
    gets = receive_at_limit(ticket, pair_side, natural)
    received = f"{at_least(gets, ticket.destination, precision)} {ticket.destination}"
    paid = f"{precision.exact(ticket.size, ticket.source)} {ticket.source}"
    return f"If filled at the limit: ≥ {received} for {paid}"


def receive_at_limit(ticket: TicketInput, pair_side: PairSide, natural: Decimal) -> Decimal:
    """What a resting order receives if it fills at its limit (at least that much)."""
    with localcontext(MONEY_CONTEXT):
        return ticket.size / natural if pair_side.side == "buy" else ticket.size * natural


def _after(value: Decimal | None, asset: str, precision: Precision) -> str:
    return DASH if value is None else precision.amount(value, asset)


def what_if_rows(what: WhatIf, precision: Precision) -> list[tuple[str, str, str]]:
    """(asset, free now → after, credit now → after) for source and destination; a refused
    trade has no "after", a resting order receives "on fill"."""

    def row(side: AssetAfter) -> tuple[str, str, str]:
        asset = side.asset
        if what.shortfall is not None or what.refusal is not None:
            return (
                asset,
                f"{precision.amount(side.funds, asset)} (refused)",
                f"{precision.amount(side.credit, asset)} (refused)",
            )
        funds = (
            f"{precision.amount(side.funds, asset)} → {_after(side.funds_after, asset, precision)}"
        )
        credit = (
            f"{precision.amount(side.credit, asset)} → "
            f"{_after(side.credit_after, asset, precision)}"
        )
        if what.rests and side is what.destination:  # nothing received until it fills
            funds = f"{precision.amount(side.funds, asset)} → on fill"
            credit = f"{precision.amount(side.credit, asset)} → on fill"
        return asset, funds, credit

    return [row(what.source), row(what.destination)]


def what_if_verdict(what: WhatIf, precision: Precision) -> tuple[str, str]:
    """(level, text): what the server is expected to say about the funds, in words; a refusal
    is shown as the refusal it predicts, never as a negative balance."""
    short = what.shortfall
    if short is not None:
        asset = short.asset
        text = (
            f"refused: {short.reason} — needs {precision.exact(short.needed, asset)} {asset}, "
            f"{precision.exact(short.available, asset)} available"
        )
        if short.reason.startswith("Credit Not Available"):
            text += " (credit is closed now)"
        return "error", text
    if what.refusal is not None:
        return "error", f"refused: {what.refusal}"
    if what.needs_credit:
        borrowed = what.source.credit - (what.source.credit_after or Decimal(0))
        asset = what.source.asset
        return "warning", (
            f"uses {precision.exact(borrowed, asset)} {asset} of credit; credit is available now"
        )
    if what.rests:
        return "info", "within free funds; the amount is locked while the order rests"
    return "info", "within free funds"


def checks_text(found: list[Check]) -> list[tuple[str, str]]:
    """(level, message) per check; blocks first."""
    ordered = sorted(found, key=lambda check: check.severity != "block")
    return [("error" if c.severity == "block" else "warning", c.message) for c in ordered]


def confirmation_text(
    preview: Preview, precision: Precision, stale_after: float
) -> tuple[str, list[str], list[str], bool]:
    """What the confirmation of ``preview`` says: the action, the latest estimate (a stale one
    is not shown as current), whether a limit rests and until when, the predicted funds, the
    wire details, the client id; the warnings; and whether a fresh estimate is wanted."""
    ticket, request = preview.ticket, preview.request
    if ticket is None or request is None:
        return "", [], [], False
    pairs = list(preview.snapshot.pair_info)
    details: list[str] = []
    pair_side = preview.fields.pair_side
    if preview.conversion is not None and pair_side is not None:
        details.append(conversion_text(preview.conversion, pair_side, precision))
    if preview.fields.marketable and ticket.end_at is not None:
        details.append(
            f"Fills now or expires at {until_text(ticket.end_at)}: it never rests on the book."
        )
    estimate = preview.estimate
    wanted = False
    if not preview.rests:  # a resting order does not fill at the market's price
        if estimate is not None and estimate.ok and estimate.age() <= stale_after:
            details.append(estimate_text(estimate, pairs, precision, estimate.age()))
        elif estimate is not None and estimate.ok:
            details.append(
                f"The indicative price is {age_text(estimate.age())} — stale; "
                "asking for a fresh one…"
            )
            wanted = True
        else:
            details.append("No indicative price yet; asking for one…")
            wanted = True
    details.append(rest_text(ticket, preview.fills, pairs, preview.tops, precision))
    if preview.what_if is not None:
        level, verdict = what_if_verdict(preview.what_if, precision)
        if level != "info":
            details.append(verdict)
    wire = wire_text(ticket, pairs)
    if wire:
        details.append(f"details: {wire}")
    details.append(f"client id {request.client_order_id}")
    summary = action(ticket, pairs, precision)
    if preview.fields.marketable:
        summary = marketable_text(preview, precision) or summary
    return summary, details, [check.message for check in preview.checks], wanted
