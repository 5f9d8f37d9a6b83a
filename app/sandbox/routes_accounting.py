"""Accounting: account, portfolio (credit), ledger, deposits, withdrawals, instructions."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from app.domain.records import EVENT_TYPES, PORTFOLIO_FIELDS
from app.sandbox import queries
from app.sandbox.api import Call, Handler, Param, endpoint
from app.sandbox.catalogue import ASSETS
from app.sandbox.queries import MAX_LEDGER
from app.sandbox.schemas import (
    AMOUNT,
    TEXT,
    TIMESTAMP_PATTERN,
    Schema,
    array,
    numbers,
    obj,
    ref,
    success,
)
from app.sandbox.schemas import account as account_schema
from app.sandbox.store import BalanceRow
from app.sandbox.validation import query_bool, query_int
from app.sandbox.wire import error, ok

ACCOUNT = "/api/v1/accounting/account/{accountId}"
_MAX = Param(
    "max", "Maximum number of records (1-1000, default 100)", "integer", minimum=1, maximum=1000
)
_INSTRUCTIONS = success(
    ("accountId", "instructions"),
    accountId=TEXT,
    instructions={"type": "array", "items": ref("Instruction")},
)
_WITHDRAWAL = success(("withdrawal",), withdrawal=ref("Transfer"))
_ASC = Param("asc", "true: oldest first; false (default): newest first by ordering", "boolean")


def _account_row(call: Call) -> Any:
    row = call.sandbox.store.query_one(
        "SELECT * FROM accounts WHERE account_id = ?", (call.account_id,)
    )
    if row is None:
        raise error(404, f"Account {call.account_id} not found")
    return row


def _account_body(row: Any, balances: dict[str, Any]) -> dict[str, Any]:
    """Get Account and Get Account Credit share this wrapper; only the balance fields differ."""
    account = {"accountId": row["account_id"], "type": row["type"], "name": row["name"]}
    return ok({"account": {**account, "balances": balances}})


def _balances(call: Call) -> list[BalanceRow]:
    rows = {row.asset: row for row in call.sandbox.store.balances(call.account_id)}
    for code in ASSETS:
        rows.setdefault(code, BalanceRow(code, Decimal(0), Decimal(0), Decimal(0)))
    return [rows[code] for code in sorted(rows)]


@endpoint(
    "GET",
    ACCOUNT,
    "Get account: balances with free, locked, credit limit",
    tag="accounting",
    errors=(401, 403, 404),
    response=account_schema(numbers("free", "locked", "limit", "pendingDeposit", "available")),
)
async def get_account(call: Call) -> dict[str, Any]:
    row = _account_row(call)
    pending = call.sandbox.transfers.pending_deposits(call.account_id)
    balances = {
        b.asset: {
            "free": b.free,
            "locked": b.locked,
            "limit": b.credit_limit,
            "pendingDeposit": pending.get(b.asset, Decimal(0)),
            "available": b.free - b.credit_limit,
        }
        for b in _balances(call)
    }
    return _account_body(row, balances)


@endpoint(
    "GET",
    ACCOUNT + "/portfolio",
    "Get account credit: funds and credit per asset",
    tag="accounting",
    errors=(401, 403, 404),
    response=account_schema(numbers(*PORTFOLIO_FIELDS)),
)
async def get_portfolio(call: Call) -> dict[str, Any]:
    row = _account_row(call)
    credit_open = call.sandbox.orders.credit_hours.is_open(call.now)
    balances = {
        b.asset: {
            "availableToTrade": b.available_funds + (b.available_credit if credit_open else 0),
            "totalFunds": b.available_funds + b.locked,
            "availableFunds": b.available_funds,
            "lockedFunds": b.locked,
            "totalCredit": b.total_credit,
            "availableCredit": b.available_credit,
            "usedCredit": b.used_credit,
        }
        for b in _balances(call)
    }
    return _account_body(row, balances)


@endpoint(
    "GET",
    "/api/v1/accounting/ledger/{accountId}",
    "Get transactions (ledger entries)",
    tag="accounting",
    errors=(400, 401, 403),
    query=(
        Param(
            "max",
            f"Maximum number of transactions (1-{MAX_LEDGER}); both legs of a trade count once",
            "integer",
            required=True,
            minimum=1,
            maximum=MAX_LEDGER,
        ),
        Param("transactionId", "Only entries of this transaction"),
        Param("asset", "Only entries in this asset", enum=tuple(sorted(ASSETS))),
        Param("type", "Only entries of this eventType", enum=EVENT_TYPES),
        Param(
            "startAtOrdering",
            "Begin at this ordering (inclusive, in the direction read)",
            "integer",
            minimum=0,
        ),
        Param("startTimeUtc", "Entries at or after this time", pattern=TIMESTAMP_PATTERN),
        Param("endTimeUtc", "Entries before this time", pattern=TIMESTAMP_PATTERN),
        Param("format", "Only json is supported", enum=("json",)),
        Param(
            "asc", "Sandbox extension: true reads oldest first (default newest first)", "boolean"
        ),
    ),
    response=array(ref("LedgerEntry")),
)
async def get_ledger(call: Call) -> list[dict[str, Any]]:
    return queries.ledger(call.sandbox.store, call.account_id, call.params)


def _transfer_query(call: Call, kind: str) -> list[dict[str, Any]]:
    limit = query_int(call.params, "max", default=100, minimum=1, maximum=1000)
    ascending = query_bool(call.params, "asc", False)
    assert limit is not None
    return call.sandbox.transfers.query(call.account_id, kind, limit, ascending)


def _transfers_route(path: str, summary: str, *, extension: bool) -> Callable[[Handler], Handler]:
    """Deposits and withdrawals are read alike: Transfer records, paged by max and asc."""
    return endpoint(
        "GET",
        ACCOUNT + path,
        summary,
        tag="accounting",
        query=(_MAX, _ASC),
        extension=extension,
        errors=(400, 401, 403),
        response=array(ref("Transfer")),
    )


@_transfers_route("/request/deposit", "Query deposits", extension=False)
async def get_deposits(call: Call) -> list[dict[str, Any]]:
    return _transfer_query(call, "deposit")


@_transfers_route("/request/withdraw", "Query withdraw requests", extension=True)
async def get_withdrawals(call: Call) -> list[dict[str, Any]]:
    return _transfer_query(call, "withdrawal")


def _instructions_route(path: str, summary: str) -> Callable[[Handler], Handler]:
    """Deposit and withdraw instructions are declared alike: a list of Instruction records."""
    return endpoint(
        "GET", ACCOUNT + path, summary, tag="accounting", errors=(401, 403), response=_INSTRUCTIONS
    )


def _instructions(call: Call, direction: str) -> dict[str, Any]:
    items = call.sandbox.transfers.instructions(call.account_id, direction)
    return ok({"accountId": call.account_id, "instructions": items})


@_instructions_route("/request/deposit-instructions", "Get deposit instructions")
async def get_deposit_instructions(call: Call) -> dict[str, Any]:
    return _instructions(call, "deposit")


@_instructions_route("/request/withdraw-instructions", "Get withdraw instructions")
async def get_withdraw_instructions(call: Call) -> dict[str, Any]:
    return _instructions(call, "withdraw")


def _withdraw_route(path: str, summary: str, body: Schema) -> Callable[[Handler], Handler]:
    """Both withdraw requests answer and refuse alike; only the body they take differs."""
    return endpoint(
        "POST",
        ACCOUNT + path,
        summary,
        tag="accounting",
        extension=True,
        body=body,
        errors=(400, 401, 403, 424),
        response=_WITHDRAWAL,
        error_bodies={424: "OrderRefusal"},
    )


async def _withdraw(call: Call, method: str) -> dict[str, Any]:
    record = call.sandbox.transfers.withdraw(
        call.user,
        call.account_id,
        await call.json(),
        call.now,
        method,
        idempotency_key=call.request.headers.get("idempotency-key"),
    )
    return ok({"withdrawal": record})


@_withdraw_route(
    "/request/withdraw/blockchain",
    "Request withdraw (blockchain) to a whitelisted address",
    obj(("amount", "networkType", "address"), amount=AMOUNT, networkType=TEXT, address=TEXT),
)
async def withdraw_blockchain(call: Call) -> dict[str, Any]:
    return await _withdraw(call, "blockchain")


@_withdraw_route(
    "/request/withdraw/fiat",
    "Request withdraw (fiat) by wire",
    obj(("amount",), amount=AMOUNT, method={"type": "string", "enum": ["wire"]}),
)
async def withdraw_fiat(call: Call) -> dict[str, Any]:
    return await _withdraw(call, "fiat")
