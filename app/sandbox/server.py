"""The sandbox as an ASGI application: routes from the table, JSON errors, a background tick."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.sandbox import routes_accounting, routes_identity, routes_routing, routes_sandbox
from app.sandbox.api import ENDPOINTS, MAX_BODY_BYTES, Call, Endpoint
from app.sandbox.config import SandboxConfig
from app.sandbox.context import Sandbox
from app.sandbox.faults import FaultMiddleware, silence_injected_drops
from app.sandbox.limits import BodyLimit
from app.sandbox.openapi import document
from app.sandbox.wire import ApiError, error, internal_error_body, json_response

log = logging.getLogger("tradeterm.sandbox")

_ROUTE_MODULES = (routes_identity, routes_accounting, routes_routing, routes_sandbox)

#: What a terminal polls several times a second, tried first: Starlette matches a request
#: against the routes in order, and top of book came twelfth: every poll failed eleven matches
#: first. No two routes' paths overlap, so the order changes nothing but the time it takes.
POLLED = (
    "/api/v1/routing/account/{accountId}/topofbook",
    "/api/v1/accounting/account/{accountId}",
    "/api/v1/routing/account/{accountId}/book",
    "/api/v1/routing/order/account/{accountId}",
    "/api/v1/routing/time",
)


def endpoints() -> list[Endpoint]:
    """Every declared route (importing this module registers them all)."""
    return list(ENDPOINTS)


def create_app(config: SandboxConfig) -> Starlette:
    sandbox = Sandbox.create(config)
    endpoints = [ep for ep in ENDPOINTS if not ep.admin or config.admin_token]
    endpoints.sort(key=_polled_first)
    routes = [Route(ep.path, _handler(ep, sandbox), methods=[ep.method]) for ep in endpoints]
    spec = document(endpoints)

    async def openapi(_: Request) -> Response:
        return json_response(spec)

    routes.append(Route("/openapi.json", openapi, methods=["GET"]))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        ticker = asyncio.create_task(_tick(sandbox))
        try:
            yield
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            sandbox.store.close()

    silence_injected_drops()
    application = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(BodyLimit, limit=MAX_BODY_BYTES),
            Middleware(FaultMiddleware, faults=sandbox.faults),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
    )
    application.state.sandbox = sandbox
    return application


def _polled_first(ep: Endpoint) -> int:
    return POLLED.index(ep.path) if ep.path in POLLED else len(POLLED)


def _handler(ep: Endpoint, sandbox: Sandbox) -> Any:
    async def handle(request: Request) -> Response:
        try:
            if _declares_body(request):
                await _read_body(request, sandbox.config.body_timeout)
            principal = None
            if ep.admin:
                given = request.headers.get("x-sandbox-admin", "")
                token = sandbox.config.admin_token or ""
                if not token or not hmac.compare_digest(given.encode(), token.encode()):
                    raise error(404, "Not found")
            if ep.auth:
                principal = sandbox.auth.verify(request.headers.get("authorization"))
                account = request.path_params.get("accountId")
                if account is not None and account not in principal.accounts:
                    raise error(403, f"Forbidden: this token has no access to account {account}")
            # The clock is read once the whole body is in: a request is judged (quote expiry,
            # endAt, token expiry) at the moment it is complete, never when its headers came.
            result = await ep.handler(Call(request, sandbox, principal, sandbox.now()))
        except ApiError as exc:
            return json_response(exc.body, exc.status_code, exc.headers)
        except Exception:
            # Answer here rather than let it propagate: uvicorn would close the keep-alive
            # connection under the client's feet.
            log.exception("internal error in %s %s", ep.method, ep.path)
            return json_response(internal_error_body(), 500)
        if isinstance(result, Response):
            return result
        return json_response(result)

    handle.__name__ = ep.handler.__name__
    return handle


def _declares_body(request: Request) -> bool:
    """Whether a body may follow the headers. Without Content-Length or Transfer-Encoding an
    HTTP/1.1 request has none and is complete already: the timed read (a task of its own per
    request, a tenth of what top of book cost) is skipped."""
    headers = request.headers
    return "content-length" in headers or "transfer-encoding" in headers


async def _read_body(request: Request, limit: float) -> None:
    """Read the whole body (Starlette keeps it for the handler) within ``limit`` seconds, else
    408. A venue executes at the time a request is complete; a body trickling in cannot hold a
    price, and cannot hold a connection for ever either."""
    try:
        await asyncio.wait_for(request.body(), limit)
    except TimeoutError:
        raise error(
            408,
            f"Request body not received within {limit:g} s; send the whole request at once",
            headers={"Connection": "close"},
        ) from None


async def _http_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    # exc.headers carries Allow on a 405
    return json_response(
        error(exc.status_code, str(exc.detail)).body, exc.status_code, dict(exc.headers or {})
    )


async def _internal_error(_: Request, exc: Exception) -> Response:
    log.error("internal error", exc_info=exc)
    return json_response(internal_error_body(), 500)


async def _tick(sandbox: Sandbox) -> None:
    """Advance prices, match resting orders and complete pending deposits every tick. Matching
    runs in slices of a couple of milliseconds with a turn of the loop between them, so requests
    never wait behind a pass however many orders rest or cross at once."""
    while True:
        try:
            sandbox.market.advance()
            more = True
            while more:
                _, more = sandbox.orders.match_slice()
                await asyncio.sleep(0)  # a turn for the requests waiting
            sandbox.transfers.complete_due(sandbox.now())
        except Exception:
            log.exception("background tick failed")
        await asyncio.sleep(sandbox.config.tick_seconds)
