"""What the order ticket says about a ticket, as text: the wire limit beside the trader's,
the live estimate, the what-if balances and the pre-trade checks. No widgets here, so each
line can be read (and tested) on its own."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from app.services.estimates import EstimateResult
from app.services.limit_prices import describe_limit, display_number, pair_base
from app.services.pretrade import AssetAfter, Check, WhatIf
from app.services.ticket import TicketInput
from app.ui.formatting import DASH, Precision


def limit_unit(source: str, destination: str, known_pairs: Iterable[str]) -> str:
    """The units a bare limit number is read in: the pair's QUOTE per BASE."""
    base = pair_base(source, destination, known_pairs)
    quote = destination if base == source else source
    return f"{quote} per {base}"


def wire_text(ticket: TicketInput, known_pairs: Iterable[str]) -> str:
    """``wire 0.0000111… USD/BTC · buy BTC paying at most 90,000 USD per BTC``."""
    wire = ticket.wire_limit()
    if wire is None:
        return ""
    base = pair_base(ticket.source, ticket.destination, known_pairs)
    words = describe_limit(ticket.source, ticket.destination, wire, base)
    return f"wire {wire} · {words}"


def estimate_text(result: EstimateResult, precision: Precision) -> str:
    """``≈ receive 0.00109906 BTC · 90,986.4 USD per BTC · 0.0000109906 BTC per USD``."""
    if not result.ok or result.received is None or result.price is None:
        return result.error or "no indicative price"
    ticket = result.ticket
    received = precision.amount(result.received.value, result.received.asset)
    parts = [f"≈ receive {received} {result.received.asset}"]
    parts.append(f"{display_number(result.price.value)} {ticket.destination} per {ticket.source}")
    if result.inverted is not None:
        parts.append(
            f"{display_number(result.inverted.value)} {ticket.source} per {ticket.destination}"
        )
    return " · ".join(parts)


def _after(value: Decimal | None, asset: str, precision: Precision) -> str:
    return DASH if value is None else precision.amount(value, asset)


def what_if_rows(what: WhatIf, precision: Precision) -> list[tuple[str, str, str]]:
    """(asset, free now → after, credit now → after) for source and destination."""

    def row(side: AssetAfter) -> tuple[str, str, str]:
        asset = side.asset
        funds = (
            f"{precision.amount(side.funds, asset)} → {_after(side.funds_after, asset, precision)}"
        )
        credit = (
            f"{precision.amount(side.credit, asset)} → "
            f"{_after(side.credit_after, asset, precision)}"
        )
        return asset, funds, credit

    return [row(what.source), row(what.destination)]


def what_if_verdict(what: WhatIf) -> tuple[str, str]:
    """(level, text): what the server is expected to say about the funds, in words."""
    if what.refusal is not None:
        return "error", f"expected refusal — {what.refusal}"
    if what.needs_credit:
        borrowed = what.source.credit - (what.source.credit_after or Decimal(0))
        return "warning", (
            f"uses {display_number(borrowed)} {what.source.asset} of credit; "
            "credit is available now"
        )
    return "info", "within free funds"


def checks_text(found: list[Check]) -> list[tuple[str, str]]:
    """(level, message) per check; blocks first."""
    ordered = sorted(found, key=lambda check: check.severity != "block")
    return [("error" if c.severity == "block" else "warning", c.message) for c in ordered]
