"""A stand-in for the service that reads the seed's open points the other fair way: a small
ASGI app (Starlette, as the sandbox) served in-process through ``httpx.ASGITransport``.

What it answers, in the seed's shapes with every number as a string: log in (any user; a JWT
with ``iat`` and ``exp`` on its own clock, which may run ahead of this machine's), service
information, Get Account, Get Account Credit, Get
Transactions, and the top of book at the usage example's ``/ops/`` path only (the documented
path is 404, so the client's fallback is exercised). It offers no order book, no service time
and no pairs list: operations the seed names without a path.

Get Transactions reads ``max`` and ``startAtOrdering`` as ``StandinConfig`` says:
``max_counts`` "entries" (a page of 100 entries may end between a trade's two legs) or
"transactions" (both legs count once, the sandbox's reading); ``order`` "ascending" (pages run
oldest first: ``startAtOrdering`` begins at that ordering going up, and a query without it
starts at the oldest entry) or "descending" (newest first: at or below it; without it, the
newest entries).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.standin.ledger_data import PAIRS, PRICES, Entry, build_ledger, holdings

URL = "http://standin.in-process"
SECRET = b"stand-in secret"
TOKEN_SECONDS = 24 * 3600


@dataclass
class StandinConfig:
    max_counts: Literal["entries", "transactions"] = "entries"
    order: Literal["ascending", "descending"] = "ascending"
    account: str = "acct-standin"
    entries: int = 300
    #: False: a broken server that answers every ledger query as if it had no startAtOrdering.
    honours_start: bool = True
    #: Seconds the server's clock runs ahead of this machine's (its tokens' iat and exp too).
    clock_ahead: float = 0.0
    #: A token's lifetime on the server's clock.
    token_seconds: int = TOKEN_SECONDS


@dataclass
class Standin:
    """The app, its ledger (oldest first) and every ledger query it answered."""

    config: StandinConfig = field(default_factory=StandinConfig)
    ledger: list[Entry] = field(init=False)
    ledger_queries: list[dict[str, str]] = field(default_factory=list)
    app: Starlette = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = build_ledger(self.config.account, self.config.entries)
        self.app = Starlette(
            routes=[
                Route("/api/v1/identity/jwt", self.login, methods=["POST"]),
                Route("/api/v1/{service}/info", self.info),
                Route("/api/v1/accounting/account/{account}", self.account),
                Route("/api/v1/accounting/account/{account}/portfolio", self.portfolio),
                Route("/api/v1/accounting/ledger/{account}", self.transactions),
                Route("/api/v1/routing/ops/account/{account}/topofbook", self.top_of_book),
            ]
        )

    def transport(self) -> httpx.ASGITransport:
        return httpx.ASGITransport(app=self.app)

    # -- answers ------------------------------------------------------------------------------

    async def login(self, request: Request) -> JSONResponse:
        body = await request.json()
        if (
            not isinstance(body, dict)
            or not body.get("user")
            or len(body.get("password", "")) != 64
        ):
            return _error(400, "user and password (SHA-256, hex) are required")
        now = int(time.time() + self.config.clock_ahead)
        token = _jwt({"sub": body["user"], "iat": now, "exp": now + self.config.token_seconds})
        return _ok({"token": token})

    async def info(self, request: Request) -> JSONResponse:
        service = request.path_params["service"]
        build: dict[str, Any] = {"version": "1.0.0", "commit": "standin", "branch": "main"}
        build |= {"iso8601": "2026-03-01T00:00:00.000000Z", "unixSeconds": 1772323200}
        info = {"service": service, "application": "standin", "instance": "standin-1"}
        info |= {"applicationLaunchTime": "2026-03-01T00:00:00.000000Z", "build": build}
        return _ok({"info": info})

    async def account(self, request: Request) -> JSONResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        balances = {
            asset: {
                "free": str(amount),
                "locked": "0",
                "limit": "0",
                "pendingDeposit": "0",
                "available": str(amount),
            }
            for asset, amount in holdings(self.ledger).items()
        }
        return _ok({"account": self._account(balances)})

    async def portfolio(self, request: Request) -> JSONResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        names = ("availableToTrade", "totalFunds", "availableFunds")
        balances = {
            asset: {name: str(amount) for name in names}
            | dict.fromkeys(("lockedFunds", "totalCredit", "availableCredit", "usedCredit"), "0")
            for asset, amount in holdings(self.ledger).items()
        }
        return _ok({"account": self._account(balances)})

    async def top_of_book(self, request: Request) -> JSONResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        wanted = request.query_params.get("assetPairs", "")
        pairs = [p for p in wanted.split(",") if p in PAIRS] if wanted else list(PAIRS)
        books = {}
        for pair in pairs:
            mid = PRICES[pair.split("/")[0]]
            bid, ask = mid - 5, mid + 5
            books[pair] = {"spread": "10", "bid": [str(bid), "1.5"], "ask": [str(ask), "2"]}
        return _ok({"topOfBooks": books})

    async def transactions(self, request: Request) -> Any:
        if (refused := self._refused(request)) is not None:
            return refused
        params = dict(request.query_params)
        self.ledger_queries.append(params)
        try:
            limit = int(params["max"])
            start = int(params["startAtOrdering"]) if "startAtOrdering" in params else None
            start = start if self.config.honours_start else None
        except (KeyError, ValueError):
            return _error(400, "max (a whole number) is required; startAtOrdering is a number")
        if limit < 1:
            return _error(400, "max must be at least 1")
        found = [e for e in self.ledger if _matches(e, params)]
        if self.config.order == "ascending":
            found = [e for e in found if start is None or e.ordering >= start]
        else:
            found = [e for e in reversed(found) if start is None or e.ordering <= start]
        return JSONResponse([_wire(e, self.config.account) for e in self._first(found, limit)])

    # -- helpers ------------------------------------------------------------------------------

    def _first(self, found: list[Entry], limit: int) -> list[Entry]:
        if self.config.max_counts == "entries":
            return found[:limit]
        taken: list[Entry] = []
        seen: set[tuple[int, str]] = set()
        for entry in found:
            seen.add((entry.ordering, entry.transaction_id))
            if len(seen) > limit:
                break
            taken.append(entry)
        return taken

    def _account(self, balances: dict[str, Any]) -> dict[str, Any]:
        account = self.config.account
        return {"accountId": account, "type": "client", "name": "Stand-in", "balances": balances}

    def _refused(self, request: Request) -> JSONResponse | None:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer ") or not _valid(header.removeprefix("Bearer ")):
            return _error(401, "a valid token is required")
        if request.path_params.get("account") != self.config.account:
            return _error(404, "no such account")
        return None


def _matches(entry: Entry, params: dict[str, str]) -> bool:
    if (asset := params.get("asset")) and entry.asset != asset:
        return False
    if (kind := params.get("type")) and entry.event_type != kind:
        return False
    if (transaction := params.get("transactionId")) and entry.transaction_id != transaction:
        return False
    if (begin := params.get("startTimeUtc")) and entry.event_time < _time(begin):
        return False
    return not ((end := params.get("endTimeUtc")) and entry.event_time >= _time(end))


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _wire(entry: Entry, account: str) -> dict[str, Any]:
    wire = {
        "ordering": str(entry.ordering),
        "accountId": account,
        "transactionId": entry.transaction_id,
        "asset": entry.asset,
        "amount": str(entry.amount),
        "eventType": entry.event_type,
        "eventTime": entry.event_time.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    if entry.sub_event_type:
        wire["subEventType"] = entry.sub_event_type
    return wire


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(claims: dict[str, Any]) -> str:
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64(json.dumps(claims).encode())
    signature = hmac.new(SECRET, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(signature)}"


def _valid(token: str) -> bool:
    parts = token.split(".")
    if len(parts) != 3:
        return False
    expected = hmac.new(SECRET, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(_b64(expected), parts[2]):
        return False
    claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    return bool(claims.get("exp", 0) > time.time())


def _ok(body: dict[str, Any]) -> JSONResponse:
    return JSONResponse({**body, "status": "ok", "httpStatusCode": 200})


def _error(status: int, message: str) -> JSONResponse:
    body = {"status": "error", "httpStatusCode": status, "errors": [message]}
    return JSONResponse(body, status_code=status)
