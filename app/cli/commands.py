"""One coroutine per command: call the client, then shape the answer twice, as wire JSON for
scripts and as text for people. Values were checked when the arguments were parsed."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.api import (
    OutcomeUnknown,
    ServiceClient,
    ServiceError,
    new_client_order_id,
)
from app.cli import views, wire
from app.cli.errors import UsageError
from app.cli.output import fields
from app.domain import AssetPair, Price
from app.domain.order_request import OrderRequest, OrderType
from app.domain.pair_terms import PairSide
from app.domain.records import Order
from app.services.ledger_pages import LedgerOrder, in_order
from app.services.limit_prices import wire_limit
from app.services.settling import OrderSettler, Sought, Verdict, patience_for

log = logging.getLogger("tradeterm.cli")


@dataclass(frozen=True)
class Output:
    data: Any  # the wire shape, JSON-ready
    text: str  # the readable rendering
    #: A line for people about the answer (on stderr: the table and the JSON stay as they are).
    note: str = ""


Handler = Callable[[ServiceClient, argparse.Namespace], Awaitable[Output]]


def handler(name: str) -> Handler:
    """The coroutine of a command name from the parser (``deposit-instructions`` ->
    ``deposit_instructions``)."""
    found: Handler = globals()[name.replace("-", "_")]
    return found


async def pair_terms(client: ServiceClient) -> views.PairTerms:
    """The service's pairs, read once per command that shows orders, trades or prices: they
    decide each order's base and the decimals shown. Unreadable, every amount shows its own
    digits (a note on stderr with -v)."""
    try:
        infos = await client.pairs()
    except ServiceError as exc:
        log.info("cannot read the pairs (%s): amounts shown with their own digits", exc)
        infos = []
    return views.PairTerms.learned(infos)


async def info(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.info(args.service)
    return Output(wire.service_info(value), views.service_info(value))


async def time(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.service_time()
    offset = client.clock.offset.total_seconds()
    round_trip = client.clock.round_trip
    text = fields(
        [
            ("Server time", value),
            ("Offset", f"{offset:+.3f} s (server minus this machine)"),
            ("Round trip", None if round_trip is None else f"{round_trip * 1000:.1f} ms"),
        ]
    )
    return Output(wire.service_time(value), text)


async def account(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.account()
    terms = await pair_terms(client)
    return Output(wire.account(value), views.account(value, terms))


async def portfolio(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.portfolio()
    terms = await pair_terms(client)
    return Output(wire.portfolio(value), views.portfolio(value, terms))


async def ledger(client: ServiceClient, args: argparse.Namespace) -> Output:
    """The entries in the order the command says (newest first, or oldest first with
    ``--asc``): a service may answer either way, most of all with ``--start-at-ordering``."""
    answered = await client.ledger(
        args.max,
        asset=args.asset,
        event_type=args.type,
        transaction_id=args.transaction_id,
        start_at_ordering=args.start_at_ordering,
        start=args.start,
        end=args.end,
    )
    order = LedgerOrder.OLDEST_FIRST if args.asc else LedgerOrder.NEWEST_FIRST
    entries = in_order(answered, order)
    terms = await pair_terms(client)
    text = views.ledger(entries, terms)
    return Output([wire.ledger_entry(e) for e in entries], text, views.ledger_note(entries, order))


async def deposits(client: ServiceClient, args: argparse.Namespace) -> Output:
    records = await client.deposits(args.max, ascending=True if args.asc else None)
    return Output([wire.deposit(r) for r in records], views.deposits(records))


async def deposit_instructions(client: ServiceClient, args: argparse.Namespace) -> Output:
    values = await client.deposit_instructions()
    return Output(wire.instructions(client.account_id, values), views.instructions(values))


async def withdraw_instructions(client: ServiceClient, args: argparse.Namespace) -> Output:
    values = await client.withdraw_instructions()
    return Output(wire.instructions(client.account_id, values), views.instructions(values))


async def tob(client: ServiceClient, args: argparse.Namespace) -> Output:
    books = await client.top_of_book(args.pairs or None)
    terms = await pair_terms(client)
    return Output(wire.top_of_books(books), views.top_of_books(books, terms))


async def book(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.order_book(args.pair, args.levels)
    terms = await pair_terms(client)
    return Output(wire.order_book(value), views.order_book(value, terms))


async def pairs(client: ServiceClient, args: argparse.Namespace) -> Output:
    values = await client.pairs()
    return Output(wire.pairs(values), views.pairs(values))


async def estimate(client: ServiceClient, args: argparse.Namespace) -> Output:
    """Without ``--quote`` the service is asked in the pair's quote asset, so even the JSON's
    price reads QUOTE per BASE (the pairs are read first for that)."""
    terms = await pair_terms(client)
    quote = args.quote or PairSide.of(args.source, args.destination, terms.pairs).pair.quote
    value = await client.estimate(args.source, args.destination, args.size, quote)
    return Output(wire.estimate(value), views.estimate(value, terms))


async def limit(client: ServiceClient, args: argparse.Namespace) -> Output:
    """``--price`` is in the pair's terms (QUOTE per BASE, as the ticket takes it) and becomes
    the wire's SOURCE/DESTINATION limit here (rounded so it never loosens: app.services.
    limit_prices); ``--limit`` is the wire's own. Only ``--price`` reads the pairs first."""
    limit_price = None if args.limit is None else Price(args.limit, args.source, args.destination)
    if args.price is not None:
        terms = await pair_terms(client)
        pair = PairSide.of(args.source, args.destination, terms.pairs).pair
        limit_price = wire_limit(
            args.source, args.destination, Price(args.price, pair.base, pair.quote)
        )
    return await _send(client, args, "limit", limit_price, args.end_at)


async def market(client: ServiceClient, args: argparse.Namespace) -> Output:
    return await _send(client, args, "market")


async def _send(
    client: ServiceClient,
    args: argparse.Namespace,
    order_type: OrderType,
    limit: Price | None = None,
    end_at: datetime | None = None,
) -> Output:
    """The order the command's arguments describe (a new clientOrderId unless one was given),
    placed, and shown as it stands once placed."""
    request = OrderRequest(
        order_type,
        args.source,
        args.destination,
        args.size,
        args.client_order_id or new_client_order_id(),
        limit,
        end_at,
    )
    order = await _place(client, request)
    return await _order_output(client, order)


async def rfq(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.request_quote(args.pair, args.size)
    terms = await pair_terms(client)
    return Output(wire.quote(value), views.quote(value, args.pair, terms))


async def accept(client: ServiceClient, args: argparse.Namespace) -> Output:
    sent_at = client.clock.server_now()
    try:
        order = await client.accept_quote(args.order_id, args.side)
    except OutcomeUnknown as lost:
        sought = Sought.accept(args.order_id, args.order_id, sent_at)
        order = await _settle(client, sought, lost)
    return await _order_output(client, order)


async def _order_output(client: ServiceClient, order: Order) -> Output:
    """An order as the wire has it (``--json``) and in pair terms (text). The pairs are read
    after the order went: reading them first would delay the order."""
    terms = await pair_terms(client)
    return Output({"order": wire.order(order)}, views.order(order, terms))


async def _place(client: ServiceClient, request: OrderRequest) -> Order:
    sent_at = client.clock.server_now()
    try:
        return await client.place_order(request)
    except OutcomeUnknown as lost:
        return await _settle(client, Sought.order(request, sent_at), lost)


async def _settle(client: ServiceClient, sought: Sought, lost: OutcomeUnknown) -> Order:
    """A lost answer: look the order up at once, then for ``patience_for`` seconds (the read
    timeout after a timeout: a slow server may still be executing it); not found, the outcome
    is unknown (exit 3) — a script is never told an order was not placed."""
    settler = OrderSettler(client)
    verdict: Verdict | None = await settler.now(sought)
    if verdict is not None and not verdict.final:
        look_for = patience_for(lost, client)  # the desk's own margin: one rule for both
        verdict = await settler.follow(sought, delays=_delays(look_for))
    if verdict is None or verdict.order is None:
        detail = "" if verdict is None else f" ({verdict.detail})"
        raise OutcomeUnknown(
            f"{lost.message}{detail}", client_order_id=lost.client_order_id, status=lost.status
        ) from lost
    return verdict.order


def _delays(total: float) -> tuple[float, ...]:
    """0.2, 0.4, 0.8, 1, 1, ... seconds until they add up to ``total``."""
    delays: list[float] = []
    step = 0.2
    while sum(delays) < total:
        delays.append(step)
        step = min(step * 2, 1.0)
    return tuple(delays)


async def orders(client: ServiceClient, args: argparse.Namespace) -> Output:
    values = await client.orders(
        args.max,
        submitted_start=args.start,
        submitted_end=args.end,
        source=args.source,
        destination=args.destination,
        order_type=args.type,
        status=args.status,
        start_at_ordering=args.start_at_ordering,
        ascending=True if args.asc else None,
        client_order_id=args.client_order_id,
    )
    terms = await pair_terms(client)
    return Output({"orders": [wire.order(o) for o in values]}, views.orders(values, terms))


async def order(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.order(args.order_id)
    return await _order_output(client, value)


# -- checks across arguments, run before connecting ------------------------------------------


def check(args: argparse.Namespace) -> None:
    """Refuse combinations no request could satisfy (UsageError, exit 2)."""
    name = args.api_command
    if name in ("estimate", "limit", "market") and args.source == args.destination:
        raise UsageError(f"the source and the destination are the same asset ({args.source})")
    if name == "estimate" and args.quote not in (None, args.source, args.destination):
        raise UsageError(
            f"--quote must be the source or the destination asset "
            f"({args.source} or {args.destination}), got {args.quote}"
        )
    if name == "rfq":
        pair = AssetPair.parse(args.pair)
        if args.size.asset not in (pair.base, pair.quote):
            raise UsageError(
                f"the size must be in {pair.base} or {pair.quote} for {pair}, got {args.size}"
            )
