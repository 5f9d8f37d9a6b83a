"""Domain values back to the service's wire shape, for ``--json``.

Field names are the service's own (camelCase); amounts and prices are their wire strings
(``"0.5 BTC"``, ``"91234.5 BTC/USD"``) and plain numbers are exact decimal strings (``"15.5"``),
so a script reading the output never meets a float. Optional fields the service left out stay
out. These helpers live here, not in app.domain, because only the command line needs them.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from app.domain import Amount, Price, format_decimal, format_timestamp
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
    OrderResult,
    PairInfo,
    Portfolio,
    Quote,
    QuoteSide,
    ServiceInfo,
    TopOfBook,
    TransferStep,
)

Wire = dict[str, Any]


def num(value: Decimal) -> str:
    return format_decimal(value)


def ts(value: datetime) -> str:
    return format_timestamp(value)


def _compact(obj: Wire) -> Wire:
    """Drop the fields that are None (the service did not send them)."""
    return {key: value for key, value in obj.items() if value is not None}


def _opt_amount(value: Amount | None) -> str | None:
    return None if value is None else str(value)


def _opt_price(value: Price | None) -> str | None:
    return None if value is None else str(value)


def _opt_time(value: datetime | None) -> str | None:
    return None if value is None else ts(value)


def _nonempty(value: str) -> str | None:
    return value or None


# -- accounts -------------------------------------------------------------------------------


def account(value: Account) -> Wire:
    balances = {
        asset: {
            "free": num(b.free),
            "locked": num(b.locked),
            "limit": num(b.limit),
            "pendingDeposit": num(b.pending_deposit),
            "available": num(b.available),
        }
        for asset, b in value.balances.items()
    }
    return {"account": _account_head(value.account_id, value.type, value.name, balances)}


def portfolio(value: Portfolio) -> Wire:
    balances = {
        asset: {
            "availableToTrade": num(b.available_to_trade),
            "totalFunds": num(b.total_funds),
            "availableFunds": num(b.available_funds),
            "lockedFunds": num(b.locked_funds),
            "totalCredit": num(b.total_credit),
            "availableCredit": num(b.available_credit),
            "usedCredit": num(b.used_credit),
        }
        for asset, b in value.balances.items()
    }
    return {"account": _account_head(value.account_id, value.type, value.name, balances)}


def _account_head(account_id: str, kind: str, name: str, balances: Wire) -> Wire:
    return {"accountId": account_id, "type": kind, "name": name, "balances": balances}


# -- ledger and transfers -------------------------------------------------------------------


def ledger_entry(value: LedgerEntry) -> Wire:
    return _compact(
        {
            "ordering": value.ordering,
            "accountId": value.account_id,
            "transactionId": value.transaction_id,
            "asset": value.asset,
            "amount": num(value.amount),
            "eventType": value.event_type,
            "subEventType": _nonempty(value.sub_event_type),
            "eventTime": ts(value.event_time),
        }
    )


def _step(value: TransferStep | None) -> Wire | None:
    if value is None:
        return None
    user = {"id": value.user.id, "email": value.user.email, "name": value.user.name}
    return {"at": ts(value.at), "user": user}


def deposit(value: DepositRecord) -> Wire:
    return _compact(
        {
            "ordering": value.ordering,
            "accountId": value.account_id,
            "transactionId": value.transaction_id,
            "asset": value.asset,
            "amount": num(value.amount),
            "status": value.status,
            "network": _nonempty(value.network),
            "hash": _nonempty(value.hash),
            "created": _step(value.created),
            "completed": _step(value.completed),
            "type": _nonempty(value.kind),
            "method": _nonempty(value.method),
            "address": _nonempty(value.address),
        }
    )


def instruction(value: Instruction) -> Wire:
    if isinstance(value, BlockchainInstruction):
        return {
            "asset": value.asset,
            "assetType": "blockchain",
            "networkType": value.network_type,
            "address": value.address,
        }
    if isinstance(value, FiatInstruction):
        return {"asset": value.asset, "assetType": "fiat", **dict(value.fields)}
    return dict(value.raw)  # an assetType this version does not know: as the service sent it


def instructions(account_id: str, values: list[Instruction]) -> Wire:
    return {"accountId": account_id, "instructions": [instruction(v) for v in values]}


# -- market data ----------------------------------------------------------------------------


def _level(level: tuple[Decimal, Decimal]) -> list[str]:
    return [num(level[0]), num(level[1])]


def top_of_books(books: dict[str, TopOfBook]) -> Wire:
    return {
        "topOfBooks": {
            pair: {
                "spread": num(book.spread),
                "ask": _level((book.ask, book.ask_size)),
                "bid": _level((book.bid, book.bid_size)),
            }
            for pair, book in books.items()
        }
    }


def order_book(value: OrderBook) -> Wire:
    return {
        "assetPair": str(value.pair),
        "bids": [_level(level) for level in value.bids],
        "asks": [_level(level) for level in value.asks],
    }


def pairs(values: list[PairInfo]) -> Wire:
    return {
        "assetPairs": [
            _compact(
                {
                    "assetPair": str(p.pair),
                    "base": p.pair.base,
                    "quote": p.pair.quote,
                    "priceIncrement": None if p.price_increment is None else num(p.price_increment),
                    "baseDecimals": p.base_decimals,
                    "quoteDecimals": p.quote_decimals,
                }
            )
            for p in values
        ]
    }


def estimate(value: Estimate) -> Wire:
    return {
        "source": str(value.source),
        "destination": str(value.destination),
        "price": str(value.price),
    }


# -- orders ---------------------------------------------------------------------------------


def order_result(value: OrderResult) -> Wire:
    return _compact(
        {
            "status": value.status,
            "price": _opt_price(value.price),
            "invertedPrice": _opt_price(value.inverted_price),
            "executedAt": _opt_time(value.executed_at),
            "updatedAt": _opt_time(value.updated_at),
            "total": _opt_amount(value.total),
            "error": value.error,
        }
    )


def order(value: Order) -> Wire:
    return _compact(
        {
            "orderId": value.order_id,
            "ordering": value.ordering,
            "accountId": value.account_id,
            "userId": value.user_id,
            "email": _nonempty(value.email),
            "size": str(value.size),
            "source": value.source,
            "destination": value.destination,
            "type": value.type,
            "submittedAt": _opt_time(value.submitted_at),
            "result": order_result(value.result),
            "clientOrderId": _nonempty(value.client_order_id),
            "limit": _opt_price(value.limit),
            "endAt": _opt_time(value.end_at),
        }
    )


def _quote_side(value: QuoteSide) -> Wire:
    return {
        "price": str(value.price),
        "source": str(value.source),
        "destination": str(value.destination),
        "expiresAt": ts(value.expires_at),
    }


def quote(value: Quote) -> Wire:
    return _compact(
        {
            "orderId": value.order_id,
            "buy": _quote_side(value.buy),
            "sell": _quote_side(value.sell),
            "clientOrderId": _nonempty(value.client_order_id),
        }
    )


# -- service --------------------------------------------------------------------------------


def service_info(value: ServiceInfo) -> Wire:
    build = _compact(
        {
            "version": value.version,
            "commit": value.commit,
            "branch": value.branch,
            "iso8601": _opt_time(value.built_at),
            "unixSeconds": None if value.built_at is None else int(value.built_at.timestamp()),
        }
    )
    info = _compact(
        {
            "service": value.service,
            "application": value.application,
            "instance": value.instance,
            "applicationLaunchTime": _opt_time(value.launched_at),
            "build": build,
        }
    )
    return {"info": info}


def service_time(value: datetime) -> Wire:
    return {"time": ts(value)}
