"""The one place that speaks HTTP: an httpx.AsyncClient with explicit timeouts, JSON decoding
with Decimal numbers, and httpx's exceptions turned into our typed errors.

Keep-alive cannot race: idle connections are dropped after ``keepalive_expiry`` (2 s), well
below any server's own idle limit (uvicorn: 5 s), so the server never closes a connection just
as we reuse it. Should one still die under a request, a GET that failed on a *reused*
connection before any byte of the answer came back is sent once more (httpcore discards the
dead connection, so the retry goes out on another one, in practice a fresh one); any other
method is not (the caller reports the honest unknown).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx

import app
from app.api.errors import ConnectTimeout, NetworkError, NotSent, RequestTimeout

log = logging.getLogger("tradeterm.api")


@dataclass(frozen=True)
class ClientSettings:
    base_url: str
    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    user_agent: str = ""
    #: Seconds an idle connection is kept: below any server's keep-alive (uvicorn's is 5 s).
    keepalive_expiry: float = 2.0

    def timeout(self, deadline: float | None = None) -> httpx.Timeout:
        """The default timeouts, or every phase capped at ``deadline`` seconds (a poll)."""
        if deadline is None:
            return httpx.Timeout(
                self.read_timeout, connect=self.connect_timeout, pool=self.connect_timeout
            )
        connect = min(self.connect_timeout, deadline)
        return httpx.Timeout(deadline, connect=connect, pool=connect)


@dataclass(frozen=True)
class Reply:
    status: int
    text: str
    headers: httpx.Headers
    elapsed: float  # seconds, request sent to answer read

    def json(self) -> Any:
        """The body decoded with Decimal numbers; ValueError when it is not JSON — whatever
        went wrong: nesting too deep for the decoder (RecursionError), an integer too long to
        convert, or ``NaN``/``Infinity``, which JSON does not have."""
        try:
            return json.loads(self.text, parse_float=Decimal, parse_constant=_not_json)
        except (ValueError, RecursionError, MemoryError) as exc:
            raise ValueError(f"not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


@dataclass(frozen=True)
class SentRequest:
    """A request as it leaves (diagnostics and tests): no headers, so never a token."""

    method: str
    path: str
    params: dict[str, str]


class HttpLayer:
    """Keep-alive HTTP to one base URL. TLS verification stays on (httpx's default)."""

    def __init__(
        self,
        settings: ClientSettings,
        transport: httpx.AsyncBaseTransport | None = None,
        on_reply: Callable[[Reply], None] | None = None,
    ) -> None:
        self.settings = settings
        self._transport = transport
        self._on_reply = on_reply
        self.watchers: list[Callable[[SentRequest], None]] = []
        self._client = self._build()

    def _build(self) -> httpx.AsyncClient:
        agent = self.settings.user_agent or f"tradeterm/{app.version()}"
        try:
            url = httpx.URL(self.settings.base_url.rstrip("/"))
        except (httpx.InvalidURL, ValueError) as exc:
            raise NotSent(f"not a usable service URL: {self.settings.base_url!r} ({exc})") from exc
        if url.scheme not in ("http", "https") or not url.host:
            raise NotSent(
                f"not a usable service URL: {self.settings.base_url!r} "
                "(expected http://host:port or https://host)"
            )
        return httpx.AsyncClient(
            base_url=url,
            timeout=self.settings.timeout(),
            headers={"User-Agent": agent, "Accept": "application/json"},
            transport=self._transport,
            limits=httpx.Limits(keepalive_expiry=self.settings.keepalive_expiry),
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        deadline: float | None = None,
    ) -> Reply:
        """One request; ``deadline`` caps every timeout phase (market-data polls); ``headers``
        go with it (under the Authorization header). A GET that dies on a reused connection
        before any answer byte is sent once more."""
        try:
            return await self._send(method, path, params, body, token, deadline, headers)
        except _StaleConnection as stale:
            if method != "GET":
                raise stale.error from stale.error.__cause__
            log.info("%s %s: reused connection closed under it; sending once more", method, path)
            try:
                return await self._send(method, path, params, body, token, deadline, headers)
            except _StaleConnection as again:
                raise again.error from again.error.__cause__

    async def _send(
        self,
        method: str,
        path: str,
        params: dict[str, str] | None,
        body: Any,
        token: str | None,
        deadline: float | None,
        extra: Mapping[str, str] | None,
    ) -> Reply:
        headers = {**(extra or {}), **({"Authorization": f"Bearer {token}"} if token else {})}
        content = None
        if body is not None:
            content = json.dumps(body, default=_encode_default).encode()
            headers["Content-Type"] = "application/json"
        for watch in self.watchers:
            watch(SentRequest(method, path, dict(params or {})))
        started = time.perf_counter()
        trace = _Trace()
        try:
            response = await self._client.request(
                method,
                path,
                params=params,
                content=content,
                headers=headers,
                timeout=self.settings.timeout(deadline),
                extensions={"trace": trace},
            )
        except httpx.PoolTimeout as exc:
            # Cancelled requests can leak pool slots in httpx 0.28: start over with a new pool.
            old, self._client = self._client, self._build()
            await old.aclose()
            raise ConnectTimeout(f"no free connection to {self._where(path)} in time") from exc
        except httpx.ConnectTimeout as exc:
            raise ConnectTimeout(f"cannot connect to {self._where(path)} in time") from exc
        except httpx.TimeoutException as exc:
            raise RequestTimeout(
                f"no answer from {self._where(path)} in time ({_phase(exc)})"
            ) from exc
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise NotSent(f"cannot reach {self._where(path)}: {_describe(exc)}") from exc
        except httpx.HTTPError as exc:
            error = NetworkError(f"connection to {self._where(path)} failed: {_describe(exc)}")
            error.__cause__ = exc
            if trace.reused and not trace.answered and isinstance(exc, _CLOSED_UNDER_US):
                raise _StaleConnection(error) from exc
            raise error from exc
        except (OSError, ValueError, OverflowError, ExceptionGroup) as exc:
            # Below httpx: e.g. a port out of range surfaces as OverflowError in a group.
            raise NotSent(f"cannot reach {self._where(path)}: {exc}") from exc
        reply = Reply(
            response.status_code, response.text, response.headers, time.perf_counter() - started
        )
        log.debug("%s %s -> %s in %.1f ms", method, path, reply.status, reply.elapsed * 1000)
        if self._on_reply is not None:
            self._on_reply(reply)
        return reply

    def _where(self, path: str) -> str:
        return f"{self.settings.base_url.rstrip('/')}{path.split('?')[0]}"


_CLOSED_UNDER_US = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class _StaleConnection(Exception):
    """A request died on a reused connection before any answer byte (``error`` says how)."""

    def __init__(self, error: NetworkError) -> None:
        super().__init__(str(error))
        self.error = error


class _Trace:
    """httpcore's trace events for one request: was a connection opened for it, and did any
    part of the answer arrive? (A request that opened no connection reused an idle one.)"""

    def __init__(self) -> None:
        self.reused = True
        self.answered = False

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event.startswith("connection.connect_tcp") or event.startswith(
            "connection.connect_unix"
        ):
            self.reused = False
        elif event.endswith("receive_response_headers.complete"):
            self.answered = True


def _encode_default(value: object) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    raise TypeError(f"cannot send {type(value).__name__} as JSON")


def _phase(exc: httpx.TimeoutException) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timeout"
    if isinstance(exc, httpx.ReadTimeout):
        return "read timeout"
    if isinstance(exc, httpx.WriteTimeout):
        return "write timeout"
    return "timeout"


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return "the server's TLS certificate is not trusted (" + text + ")"
    if "SSL" in text or "TLS" in text:
        return "the TLS handshake failed: is it an https server? (" + text + ")"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the connection closed before a complete answer (" + text + ")"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or host unreachable (" + text + ")"
    return text
