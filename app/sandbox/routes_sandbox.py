"""Sandbox-only routes: paper-trading top-ups for a client, and admin routes for tests.

``POST /api/v1/sandbox/admin/price`` pins a pair's mid (or lets it walk again): tests drive a
price across a level with it (the price alerts' tests).

Admin routes exist only when the sandbox is started with ``--admin-token-file`` (or env
``TRADETERM_SANDBOX_ADMIN_TOKEN``) and need header ``X-Sandbox-Admin`` with that token.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from app.domain import Amount
from app.sandbox.api import Call, Handler, endpoint
from app.sandbox.auth import is_password_digest
from app.sandbox.catalogue import ASSETS, PAIRS
from app.sandbox.config import CreditHours
from app.sandbox.demo_data import create_client
from app.sandbox.schemas import (
    AMOUNT,
    BOOLEAN,
    NUMBER,
    PAIR,
    PASSWORD_DIGEST,
    STRING,
    TEXT,
    map_of,
    obj,
    record,
    ref,
    success,
)
from app.sandbox.transfers import user_object
from app.sandbox.validation import decimal_value, positive_quantity, require_object
from app.sandbox.wire import bad_request, error, ok


def admin_endpoint(method: str, path: str, summary: str, **kw: Any) -> Callable[[Handler], Handler]:
    """Admin routes: test-only, no client token, only with an admin token (file or env)."""
    return endpoint(
        method, path, summary, tag="sandbox-admin", auth=False, admin=True, extension=True, **kw
    )


_INT = {"type": "integer"}
_FAULTS = success(
    ("faults", "hits", "requests"),
    faults={"type": "array", "items": {"type": "object"}},
    hits={"type": "array"},
    requests={"type": "array"},
)
_NETWORKS = {
    "BTC": ("bitcoin",),
    "ETH": ("ethereum",),
    "USDT": ("ethereum", "tron"),
    "SOL": ("solana",),
    "USD": ("wire",),
}


@endpoint(
    "POST",
    "/api/v1/sandbox/account/{accountId}/deposit",
    "Paper-trading top-up: simulate an incoming deposit (completed now or after pendingSeconds)",
    tag="sandbox",
    extension=True,
    errors=(400, 401, 403),
    body=obj(
        ("amount",),
        amount=AMOUNT,
        network={"type": "string", "enum": sorted({n for ns in _NETWORKS.values() for n in ns})},
        pendingSeconds={"type": "number", "minimum": 0, "maximum": 3600},
    ),
    response=success(("deposit",), deposit=ref("Transfer")),
)
async def deposit(call: Call) -> dict[str, Any]:
    body = require_object(await call.json())
    raw = body.get("amount")
    if not isinstance(raw, str) or len(raw.split()) != 2:
        raise bad_request("amount must look like '1.5 BTC'")
    code = raw.split()[1]
    if code not in ASSETS:
        raise bad_request(f"Unknown asset {code!r}; known assets: {', '.join(sorted(ASSETS))}")
    value = positive_quantity(raw, "amount", ASSETS[code])
    networks = _NETWORKS[code]
    network = body.get("network", networks[0])
    if network not in networks:
        raise bad_request(f"{code} deposits arrive on {', '.join(networks)}, not {network!r}")
    pending = decimal_value(body.get("pendingSeconds", 0), "pendingSeconds")
    if not 0 <= pending <= 3600:
        raise bad_request("pendingSeconds must be between 0 and 3600")
    record = call.sandbox.transfers.deposit(
        call.account_id,
        Amount(value, code),
        network=str(network),
        by=user_object(call.user),
        now=call.now,
        pending_seconds=float(pending),
    )
    return ok({"deposit": record})


@admin_endpoint(
    "POST",
    "/api/v1/sandbox/admin/clients",
    "Admin: create a user owning one funded account",
    errors=(400, 404, 409),
    body=obj(
        ("user", "password", "accountId"),
        user=TEXT,
        password=PASSWORD_DIGEST,
        accountId=TEXT,
        name=STRING,
        balances=map_of({"type": ["string", "number"]}),
        credit=map_of({"type": ["string", "number"]}),
    ),
    response=success(("user", "accountId"), user=TEXT, accountId=TEXT),
)
async def create_client_route(call: Call) -> dict[str, Any]:
    body = require_object(await call.json())
    user, account, password = body.get("user"), body.get("accountId"), body.get("password")
    if not isinstance(user, str) or not user or not isinstance(account, str) or not account:
        raise bad_request("user and accountId are required strings")
    if not is_password_digest(password):
        raise bad_request("password must be 64 lowercase hex characters (SHA-256)")
    store = call.sandbox.store
    if store.query_one("SELECT 1 FROM users WHERE user_id = ?", (user,)) or store.query_one(
        "SELECT 1 FROM accounts WHERE account_id = ?", (account,)
    ):
        raise error(409, "user or account already exists")
    balances = _asset_map(body.get("balances", {}), "balances", positive=True)
    credit = _asset_map(body.get("credit", {}), "credit", positive=False)
    create_client(
        store,
        user=user,
        password_hex=str(password),
        account=account,
        name=str(body.get("name") or user),
        account_name=f"{account} account",
        balances=balances,
        credit=credit,
        now=call.now,
    )
    return ok({"user": user, "accountId": account})


@admin_endpoint(
    "GET",
    "/api/v1/sandbox/admin/account/{accountId}/invariant",
    "Admin: balances (free + locked) next to the ledger sums, and locked next to the resting "
    "orders' locked amounts, per asset",
    errors=(404,),
    response=success(
        ("accountId", "assets", "holds"),
        accountId=TEXT,
        assets=map_of(
            record({"free": NUMBER, "locked": NUMBER, "ledgerSum": NUMBER, "holds": BOOLEAN})
        ),
        holds=BOOLEAN,
    ),
)
async def invariant(call: Call) -> dict[str, Any]:
    """Two books must agree: ``free + locked`` with the ledger, and ``locked`` with the sizes
    of the account's resting orders (a fill booked twice, or a lock never released, shows)."""
    store = call.sandbox.store
    sums = store.ledger_sums(call.account_id)
    resting: dict[str, Decimal] = {}
    for order in store.query(
        "SELECT source, size FROM orders WHERE account_id = ? AND status = 'submitted'",
        (call.account_id,),
    ):
        resting[order["source"]] = resting.get(order["source"], Decimal(0)) + Decimal(order["size"])
    rows = {
        b.asset: {
            "free": b.free,
            "locked": b.locked,
            "ledgerSum": sums.get(b.asset, Decimal(0)),
            "restingLocked": resting.get(b.asset, Decimal(0)),
            "ledgerHolds": b.free + b.locked == sums.get(b.asset, Decimal(0)),
            "lockedHolds": b.locked == resting.get(b.asset, Decimal(0)),
            "holds": b.free + b.locked == sums.get(b.asset, Decimal(0))
            and b.locked == resting.get(b.asset, Decimal(0)),
        }
        for b in store.balances(call.account_id)
    }
    return ok(
        {
            "accountId": call.account_id,
            "assets": rows,
            "holds": all(row["holds"] for row in rows.values()),
        }
    )


def _asset_map(raw: Any, field: str, *, positive: bool) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise bad_request(f"{field} must be an object of asset to amount")
    result = {}
    for code, value in raw.items():
        if code not in ASSETS:
            raise bad_request(f"Unknown asset {code!r} in {field}")
        number = decimal_value(value, f"{field}.{code}")
        if (positive and number < 0) or (not positive and number > 0):
            raise bad_request(f"{field}.{code} has the wrong sign")
        result[code] = str(number)
    return result


@admin_endpoint(
    "POST",
    "/api/v1/sandbox/admin/faults",
    "Admin: replace the fault rules (latency, status, html, retry_after, unauthorized, drop, "
    "drop_after_commit)",
    errors=(400, 404),
    body=obj(("faults",), faults={"type": "array", "items": {"type": "object"}}, seed=_INT),
    response=_FAULTS,
)
async def set_faults(call: Call) -> dict[str, Any]:
    try:
        call.sandbox.faults.configure(await call.json())
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return ok(call.sandbox.faults.report())


@admin_endpoint(
    "GET",
    "/api/v1/sandbox/admin/faults",
    "Admin: fault rules, hits and request log",
    errors=(404,),
    response=_FAULTS,
)
async def get_faults(call: Call) -> dict[str, Any]:
    return ok(call.sandbox.faults.report())


@admin_endpoint(
    "DELETE",
    "/api/v1/sandbox/admin/faults",
    "Admin: remove every fault rule",
    errors=(404,),
    response=success(),
)
async def clear_faults(call: Call) -> dict[str, Any]:
    call.sandbox.faults.clear()
    return ok({})


@admin_endpoint(
    "POST",
    "/api/v1/sandbox/admin/users/{user}/revoke",
    "Admin: void every token issued so far to this user",
    errors=(404,),
    response=success(("user",), user=TEXT),
)
async def revoke_tokens(call: Call) -> dict[str, Any]:
    user = call.path("user")
    if call.sandbox.auth.principal(user) is None:
        raise error(404, f"User {user} not found")
    call.sandbox.auth.revoke(user)
    return ok({"user": user})


@admin_endpoint(
    "GET",
    "/api/v1/sandbox/admin/stats",
    "Admin: successful logins per user, and password hashes evaluated",
    errors=(404,),
    response=success(
        ("logins", "passwordChecks"),
        logins=map_of({"type": "integer", "minimum": 1}),
        passwordChecks={"type": "integer", "minimum": 0},
    ),
)
async def stats(call: Call) -> dict[str, Any]:
    auth = call.sandbox.auth
    return ok({"logins": dict(auth.logins), "passwordChecks": auth.password_checks})


@admin_endpoint(
    "POST",
    "/api/v1/sandbox/admin/price",
    "Admin: hold a pair's mid at a price (QUOTE per BASE, a multiple of the pair's tick), or "
    "with mid null let it follow the simulated market again",
    errors=(400, 404),
    body=obj(
        ("assetPair", "mid"),
        assetPair=PAIR,
        mid={"type": ["string", "null"], "pattern": r"^[0-9]+(\.[0-9]+)?$"},
    ),
    response=success(
        ("assetPair", "bid", "ask", "pinned"),
        assetPair=PAIR,
        bid=NUMBER,
        ask=NUMBER,
        pinned=BOOLEAN,
    ),
)
async def pin_price(call: Call) -> dict[str, Any]:
    """The pair is quoted around the pinned mid (usual spread and sizes) by every route, top of
    book, order book, orders and quotes alike, until unpinned."""
    body = require_object(await call.json())
    pair, raw = body.get("assetPair"), body.get("mid")
    if not isinstance(pair, str) or pair not in PAIRS:
        raise bad_request(f"Unknown assetPair {pair!r}; known pairs: {', '.join(sorted(PAIRS))}")
    if raw is not None and not isinstance(raw, str):
        raise bad_request("mid must be a decimal string such as '90000.5', or null")
    mid = None if raw is None else decimal_value(raw, "mid")
    try:
        quote = call.sandbox.market.pin(pair, mid)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return ok({"assetPair": pair, "bid": quote.bid, "ask": quote.ask, "pinned": mid is not None})


@admin_endpoint(
    "POST",
    "/api/v1/sandbox/admin/credit-hours",
    "Admin: change when credit is granted ('always', 'never' or like 'Mon-Fri 09:00-17:00 "
    "America/New_York'), as --credit-hours does at start",
    errors=(400, 404),
    body=obj(("hours",), hours={"type": "string", "minLength": 1}),
    response=success(("hours", "open"), hours={"type": "string"}, open=BOOLEAN),
)
async def set_credit_hours(call: Call) -> dict[str, Any]:
    """Orders, quotes and the portfolio read the new hours from the next request on: a test
    opens the credit window on cue instead of waiting for business hours."""
    body = require_object(await call.json())
    raw = body.get("hours")
    if not isinstance(raw, str):
        raise bad_request("hours must be a string such as 'always'")
    try:
        hours = CreditHours.parse(raw)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    call.sandbox.orders.credit_hours = hours
    call.sandbox.quotes.credit_hours = hours
    return ok({"hours": hours.text, "open": hours.is_open(call.now)})
