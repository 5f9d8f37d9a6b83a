"""Readable renderings of each record, for a trader at a terminal (``--json`` is for scripts).

Tables for lists, key/value blocks for single records; every number comes out exact.
"""

from __future__ import annotations

import re
from datetime import datetime

from app.cli.output import TextColumn, blocks, fields, table
from app.domain.records import (
    Account,
    BlockchainInstruction,
    DepositRecord,
    Estimate,
    FiatInstruction,
    Instruction,
    LedgerEntry,
    Order,
    OrderBook,
    PairInfo,
    Portfolio,
    Quote,
    ServiceInfo,
    TopOfBook,
)

N = True  # numeric column marker, for short column lists


def _cols(*spec: tuple[str, bool]) -> list[TextColumn]:
    return [TextColumn(header, numeric) for header, numeric in spec]


def _head(account_id: str, kind: str, name: str) -> str:
    return fields([("Account", account_id), ("Type", kind or None), ("Name", name or None)])


def account(value: Account) -> str:
    columns = _cols(
        ("ASSET", False),
        ("FREE", N),
        ("LOCKED", N),
        ("LIMIT", N),
        ("PENDING DEPOSIT", N),
        ("AVAILABLE", N),
    )
    rows = [
        [asset, b.free, b.locked, b.limit, b.pending_deposit, b.available]
        for asset, b in sorted(value.balances.items())
    ]
    return blocks(_head(value.account_id, value.type, value.name), table(columns, rows))


def portfolio(value: Portfolio) -> str:
    columns = _cols(
        ("ASSET", False),
        ("AVAILABLE TO TRADE", N),
        ("TOTAL FUNDS", N),
        ("AVAILABLE FUNDS", N),
        ("LOCKED FUNDS", N),
        ("TOTAL CREDIT", N),
        ("AVAILABLE CREDIT", N),
        ("USED CREDIT", N),
    )
    rows = [
        [
            asset,
            b.available_to_trade,
            b.total_funds,
            b.available_funds,
            b.locked_funds,
            b.total_credit,
            b.available_credit,
            b.used_credit,
        ]
        for asset, b in sorted(value.balances.items())
    ]
    return blocks(_head(value.account_id, value.type, value.name), table(columns, rows))


def ledger(entries: list[LedgerEntry]) -> str:
    columns = _cols(
        ("ORDERING", N),
        ("TIME", False),
        ("TYPE", False),
        ("ASSET", False),
        ("AMOUNT", N),
        ("TRANSACTION", False),
    )
    rows = [
        [
            e.ordering,
            e.event_time,
            f"{e.event_type}/{e.sub_event_type}" if e.sub_event_type else e.event_type,
            e.asset,
            e.amount,
            e.transaction_id,
        ]
        for e in entries
    ]
    return table(columns, rows)


def deposits(records: list[DepositRecord]) -> str:
    columns = _cols(
        ("ORDERING", N),
        ("CREATED", False),
        ("ASSET", False),
        ("AMOUNT", N),
        ("STATUS", False),
        ("NETWORK", False),
        ("HASH", False),
    )
    rows = [
        [
            r.ordering,
            r.created.at if r.created else None,
            r.asset,
            r.amount,
            r.status,
            r.network or r.method,
            r.hash,
        ]
        for r in records
    ]
    return table(columns, rows)


def instructions(values: list[Instruction]) -> str:
    chains = [v for v in values if isinstance(v, BlockchainInstruction)]
    columns = _cols(("ASSET", False), ("NETWORK", False), ("ADDRESS", False))
    parts = [table(columns, [[v.asset, v.network_type, v.address] for v in chains])]
    for value in values:
        if isinstance(value, FiatInstruction):
            labelled = [(_label(name), text) for name, text in value.fields]
            parts.append(fields([("Asset", f"{value.asset} (fiat)"), *labelled]))
        elif not isinstance(value, BlockchainInstruction):
            shown = [(str(k), v) for k, v in value.raw.items()]
            parts.append(fields(shown))
    return blocks(*parts)


def _label(name: str) -> str:
    """``bankSwiftNumber`` -> ``Bank swift number``."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    return words[:1].upper() + words[1:]


def top_of_books(books: dict[str, TopOfBook]) -> str:
    columns = _cols(
        ("PAIR", False),
        ("BID SIZE", N),
        ("BID", N),
        ("ASK", N),
        ("ASK SIZE", N),
        ("SPREAD", N),
    )
    rows = [[pair, b.bid_size, b.bid, b.ask, b.ask_size, b.spread] for pair, b in books.items()]
    return table(columns, rows)


def order_book(book: OrderBook) -> str:
    columns = _cols(("LEVEL", N), ("BID SIZE", N), ("BID", N), ("ASK", N), ("ASK SIZE", N))
    depth = max(len(book.bids), len(book.asks))
    rows: list[list[object]] = []
    for index in range(depth):
        bid = book.bids[index] if index < len(book.bids) else (None, None)
        ask = book.asks[index] if index < len(book.asks) else (None, None)
        rows.append([index + 1, bid[1], bid[0], ask[0], ask[1]])
    return blocks(f"Order book {book.pair} (prices in {book.pair.quote})", table(columns, rows))


def pairs(values: list[PairInfo]) -> str:
    columns = _cols(
        ("PAIR", False), ("PRICE INCREMENT", N), ("BASE DECIMALS", N), ("QUOTE DECIMALS", N)
    )
    rows = [[p.pair, p.price_increment, p.base_decimals, p.quote_decimals] for p in values]
    return table(columns, rows)


def estimate(value: Estimate) -> str:
    return fields([("Sell", value.source), ("Receive", value.destination), ("Price", value.price)])


def order(value: Order) -> str:
    result = value.result
    price = result.price
    if price is not None and result.inverted_price is not None:
        price_text: object = f"{price}  ({result.inverted_price})"
    else:
        price_text = price
    return fields(
        [
            ("Order", value.order_id),
            ("Status", result.status),
            ("Type", value.type or None),
            ("Sell", value.size),
            ("For", value.destination),
            ("Price", price_text),
            ("Total", result.total),
            ("Limit", value.limit),
            ("End at", value.end_at),
            ("Submitted at", value.submitted_at),
            ("Executed at", result.executed_at),
            ("Updated at", result.updated_at),
            ("Client order id", value.client_order_id or None),
            ("Error", result.error or None),
        ]
    )


def orders(values: list[Order]) -> str:
    columns = _cols(
        ("SUBMITTED", False),
        ("ORDER", False),
        ("TYPE", False),
        ("STATUS", False),
        ("SIZE", N),
        ("FOR", False),
        ("PRICE", N),
        ("TOTAL", N),
    )
    rows = [
        [
            o.submitted_at,
            o.order_id,
            o.type,
            o.result.status,
            o.size,
            o.destination,
            o.result.price,
            o.result.total,
        ]
        for o in values
    ]
    return table(columns, rows)


def quote(value: Quote) -> str:
    columns = _cols(
        ("SIDE", False), ("PRICE", N), ("PAY", N), ("RECEIVE", N), ("EXPIRES AT", False)
    )
    rows = [
        [name, side.price, side.source, side.destination, side.expires_at]
        for name, side in (("buy", value.buy), ("sell", value.sell))
    ]
    head = fields([("Quote", value.order_id), ("Client order id", value.client_order_id or None)])
    hint = f"Accept with: tradeterm api accept {value.order_id} --side buy|sell"
    return blocks(head, table(columns, rows), hint)


def service_info(value: ServiceInfo) -> str:
    return fields(
        [
            ("Service", value.service),
            ("Application", value.application),
            ("Instance", value.instance),
            ("Launched at", value.launched_at),
            ("Version", value.version),
            ("Commit", value.commit),
            ("Branch", value.branch),
            ("Built at", value.built_at),
        ]
    )


def service_time(value: datetime) -> str:
    return fields([("Server time", value)])
