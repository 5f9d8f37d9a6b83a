"""One coroutine per command: call the client, then shape the answer twice, as wire JSON for
scripts and as text for people. Values were checked when the arguments were parsed."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.api import ServiceClient
from app.cli import views, wire
from app.cli.errors import UsageError
from app.cli.output import fields
from app.domain import AssetPair


@dataclass(frozen=True)
class Output:
    data: Any  # the wire shape, JSON-ready
    text: str  # the readable rendering


Handler = Callable[[ServiceClient, argparse.Namespace], Awaitable[Output]]


def handler(name: str) -> Handler:
    """The coroutine of a command name from the parser (``deposit-instructions`` ->
    ``deposit_instructions``)."""
    found: Handler = globals()[name.replace("-", "_")]
    return found


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
    return Output(wire.account(value), views.account(value))


async def portfolio(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.portfolio()
    return Output(wire.portfolio(value), views.portfolio(value))


async def ledger(client: ServiceClient, args: argparse.Namespace) -> Output:
    entries = await client.ledger(
        args.max,
        asset=args.asset,
        event_type=args.type,
        transaction_id=args.transaction_id,
        start_at_ordering=args.start_at_ordering,
        start=args.start,
        end=args.end,
    )
    return Output([wire.ledger_entry(e) for e in entries], views.ledger(entries))


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
    return Output(wire.top_of_books(books), views.top_of_books(books))


async def book(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.order_book(args.pair, args.levels)
    return Output(wire.order_book(value), views.order_book(value))


async def pairs(client: ServiceClient, args: argparse.Namespace) -> Output:
    values = await client.pairs()
    return Output(wire.pairs(values), views.pairs(values))


async def estimate(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.estimate(args.source, args.destination, args.size, args.quote)
    return Output(wire.estimate(value), views.estimate(value))


async def limit(client: ServiceClient, args: argparse.Namespace) -> Output:
    order = await client.limit_order(
        args.source,
        args.destination,
        args.size,
        limit=args.limit,
        end_at=args.end_at,
        client_order_id=args.client_order_id,
    )
    return Output({"order": wire.order(order)}, views.order(order))


async def market(client: ServiceClient, args: argparse.Namespace) -> Output:
    order = await client.market_order(
        args.source, args.destination, args.size, client_order_id=args.client_order_id
    )
    return Output({"order": wire.order(order)}, views.order(order))


async def rfq(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.request_quote(args.pair, args.size)
    return Output(wire.quote(value), views.quote(value))


async def accept(client: ServiceClient, args: argparse.Namespace) -> Output:
    order = await client.accept_quote(args.order_id, args.side)
    return Output({"order": wire.order(order)}, views.order(order))


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
    return Output({"orders": [wire.order(o) for o in values]}, views.orders(values))


async def order(client: ServiceClient, args: argparse.Namespace) -> Output:
    value = await client.order(args.order_id)
    return Output({"order": wire.order(value)}, views.order(value))


# -- checks across arguments, run before connecting ------------------------------------------


def check(args: argparse.Namespace) -> None:
    """Refuse combinations no request could satisfy (UsageError, exit 2)."""
    name = args.api_command
    if name in ("estimate", "limit", "market") and args.source == args.destination:
        raise UsageError(f"the source and the destination are the same asset ({args.source})")
    if name == "estimate" and args.quote not in (args.source, args.destination):
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
