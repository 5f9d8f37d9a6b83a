"""Fault switches for tests of the client: latency, error statuses, HTML pages, 429 with
Retry-After, 401 for valid tokens, and connections dropped before or after the request ran.

Only reachable through the admin routes (with an admin token: env or ``--admin-token-file``).
Rules apply in order to requests outside ``/api/v1/sandbox/admin``; each may fire with a
probability (seeded, reproducible) and a limited number of times. Every request and every
injected fault is logged with its time, so a test can check, say, how long the client waited
after a Retry-After.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.domain import format_timestamp, utc_now
from app.sandbox.wire import encode, error, internal_error_body

KINDS = ("latency", "status", "html", "retry_after", "unauthorized", "drop", "drop_after_commit")
ADMIN_PREFIX = "/api/v1/sandbox/admin"
_HTML = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
    b"</h1></center><hr><center>proxy</center></body></html>"
)


class InjectedDrop(Exception):
    """Raised after a response has started, so the server closes the connection mid-answer."""


@dataclass
class FaultRule:
    kind: str
    path: re.Pattern[str]
    method: str = "*"
    rate: float = 1.0
    remaining: int | None = None
    status: int = 503
    seconds: float = 0.0
    retry_after: int = 1

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path.pattern,
            "method": self.method,
            "rate": Decimal(repr(self.rate)),
            "count": self.remaining,
            "status": self.status,
            "seconds": Decimal(repr(self.seconds)),
            "retryAfter": self.retry_after,
        }


@dataclass
class Faults:
    rules: list[FaultRule] = field(default_factory=list)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    requests: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=20_000))
    hits: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=20_000))
    active: bool = False

    def configure(self, raw: Any) -> None:
        """Replace the rules from ``{"faults": [...], "seed": n}``; ValueError says what is
        wrong."""
        if not isinstance(raw, dict) or not isinstance(raw.get("faults"), list):
            raise ValueError('body must be {"faults": [...], "seed": N}')
        rules = [_rule(item, index) for index, item in enumerate(raw["faults"])]
        seed = raw.get("seed", 0)
        if not isinstance(seed, int):
            raise ValueError("seed must be an integer")
        self.rules, self.rng = rules, random.Random(seed)
        self.active = True  # log requests from now on, even with no rules
        self.requests.clear()
        self.hits.clear()

    def clear(self) -> None:
        self.rules = []
        self.active = False
        self.requests.clear()
        self.hits.clear()

    def pick(self, method: str, path: str) -> FaultRule | None:
        self.requests.append({"time": format_timestamp(utc_now()), "method": method, "path": path})
        for rule in self.rules:
            if rule.method not in ("*", method) or not rule.path.search(path):
                continue
            if rule.remaining == 0 or self.rng.random() >= rule.rate:
                continue
            if rule.remaining is not None:
                rule.remaining -= 1
            self.hits.append(
                {
                    "time": format_timestamp(utc_now()),
                    "method": method,
                    "path": path,
                    "kind": rule.kind,
                }
            )
            return rule
        return None

    def report(self) -> dict[str, Any]:
        return {
            "faults": [rule.describe() for rule in self.rules],
            "hits": list(self.hits),
            "requests": list(self.requests),
        }


def _rule(item: Any, index: int) -> FaultRule:
    where = f"faults[{index}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")
    kind = item.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}.kind must be one of {', '.join(KINDS)}")
    try:
        pattern = re.compile(str(item.get("path", ".*")))
    except re.error as exc:
        raise ValueError(f"{where}.path is not a regular expression: {exc}") from None
    rate, count = item.get("rate", 1), item.get("count")
    # A Retry-After comes with 429 unless the rule says 503 (a service in maintenance).
    status = item.get("status", 429 if kind == "retry_after" else 503)
    seconds = item.get("seconds", 0)
    retry_after = item.get("retryAfter", 1)
    if not (_number(rate) and 0 <= rate <= 1):
        raise ValueError(f"{where}.rate must be between 0 and 1")
    if count is not None and not (isinstance(count, int) and count >= 0):
        raise ValueError(f"{where}.count must be a non-negative integer")
    if not (isinstance(status, int) and 400 <= status <= 599):
        raise ValueError(f"{where}.status must be an HTTP error status")
    if not (_number(seconds) and 0 <= seconds <= 120):
        raise ValueError(f"{where}.seconds must be between 0 and 120")
    if not (isinstance(retry_after, int) and 0 <= retry_after <= 3600):
        raise ValueError(f"{where}.retryAfter must be whole seconds")
    method = str(item.get("method", "*")).upper()
    return FaultRule(kind, pattern, method, float(rate), count, status, float(seconds), retry_after)


def _number(value: Any) -> bool:
    return isinstance(value, int | Decimal) and not isinstance(value, bool)


class FaultMiddleware:
    """ASGI middleware applying the first matching rule to each request."""

    def __init__(self, app: ASGIApp, faults: Faults) -> None:
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(ADMIN_PREFIX) or not self.faults.active:
            await self.app(scope, receive, send)
            return
        rule = self.faults.pick(scope["method"], path)
        if rule is None:
            await self.app(scope, receive, send)
        elif rule.kind == "latency":
            # A slow link in front of the server: the request arrives late but whole, and runs
            # even if the client has given up waiting (as behind a proxy that holds it).
            held = await _read_body(receive)
            await asyncio.sleep(rule.seconds)
            await self.app(scope, _replay(held), send)
        elif rule.kind == "drop":
            await _cut(send)
        elif rule.kind == "drop_after_commit":

            async def swallow(message: Message) -> None:
                return None

            await self.app(scope, receive, swallow)
            await _cut(send)
        elif rule.kind == "html":
            await _respond(send, rule.status, _HTML, "text/html", {})
        elif rule.kind == "retry_after":
            words = "Too many requests; slow down" if rule.status == 429 else "Down for maintenance"
            body = error(rule.status, words).body
            await _respond(
                send,
                rule.status,
                encode(body).encode(),
                "application/json",
                {"retry-after": str(rule.retry_after)},
            )
        elif rule.kind == "unauthorized":
            body = error(401, "Token expired; log in again").body
            await _respond(send, 401, encode(body).encode(), "application/json", {})
        else:
            payload = (
                internal_error_body()
                if rule.status == 500
                else error(rule.status, "Service temporarily unavailable").body
            )
            await _respond(send, rule.status, encode(payload).encode(), "application/json", {})


async def _respond(
    send: Send, status: int, body: bytes, media: str, headers: dict[str, str]
) -> None:
    raw = [(b"content-type", media.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    """The body once, then nothing more: the app never hears that the client left."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # as a connection that stays open
        return {"type": "http.disconnect"}

    return receive


async def _cut(send: Send) -> None:
    """Start an answer that promises a body, then fail: the server closes the connection."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"64")],
        }
    )
    raise InjectedDrop("connection dropped on purpose (fault switch)")


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, InjectedDrop)


def silence_injected_drops() -> None:
    """Keep uvicorn from printing a traceback for each drop we cause on purpose."""
    logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
