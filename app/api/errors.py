"""Typed failures of the service client: every way a call can go wrong, in words a trader reads.

The caller never sees a KeyError, a JSONDecodeError or an httpx exception: each is mapped to one
of these. ``str(error)`` is a one-line message fit for the log or ``error:`` on stderr; it may
name the full URL of the request. On screen a trader is shown it through
``app.domain.words.in_words``: no URL (the log keeps it), "the service at <host>" instead, and
no word said twice in a row.
"""

from __future__ import annotations

import re
from typing import Any


class ServiceError(Exception):
    """Base of every client failure. ``status`` is the HTTP status when there was one."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        messages: list[str] | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.messages = messages or [message]
        self.body = body

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}" if self.status else self.message


class InvalidRequest(ServiceError):
    """400: the service refused the values sent (the message says which)."""


class Unauthorized(ServiceError):
    """401: not logged in, wrong password, or the token is no longer accepted."""


class NotFound(ServiceError):
    """403 or 404: no such thing, or not visible to this account."""


class Forbidden(NotFound):
    """403: the token may not see or trade this account."""


class Refused(ServiceError):
    """424, 409, 410 and other refusals of an otherwise valid request."""


class InsufficientFunds(Refused):
    """424 whose message begins ``Insufficient Funds`` (message kept verbatim)."""


class CreditNotAvailable(Refused):
    """424 whose message begins ``Credit Not Available`` (message kept verbatim)."""


class RateLimited(ServiceError):
    """429: too many requests; ``retry_after`` seconds when the server said."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class LoginExpired(Unauthorized):
    """The login is no longer accepted and the client will not try again by itself: a 401 that
    survived a re-login, a re-login refused, or a re-login tried less than a minute after the
    last one. The trader must log in again."""


class LoginThrottled(RateLimited):
    """429 on the login itself: too many logins. ``retry_after`` seconds when the server said."""

    def __str__(self) -> str:
        if self.retry_after is None:
            return "too many logins: try again later"
        return f"too many logins: try again in {self.retry_after:.0f} s"


class ServerError(ServiceError):
    """5xx: the service failed (either documented body shape, or none). ``retry_after``
    seconds when it said when to come back (a 503 in maintenance, say): honoured as on 429."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class NetworkError(ServiceError):
    """The service could not be reached or the connection broke."""


class NotSent(NetworkError):
    """The request never left: no connection could be made (refused, DNS, connect timeout, bad
    URL). Safe to say an order was not placed."""


class TooLate(NotSent):
    """Refused locally right before sending: its deadline (a quote's, less the safety margin)
    had passed. Nothing was sent; the message says how much time was left."""


class RequestTimeout(NetworkError):
    """No answer in time after the request was sent (read or write timeout)."""


class ConnectTimeout(NotSent, RequestTimeout):
    """No connection in time: nothing was sent."""


class BadResponse(ServiceError):
    """The answer was not the JSON expected (e.g. an HTML page from a proxy, a missing field)."""


class OutcomeUnknown(ServiceError):
    """An order or accept was sent but its answer was lost: it may or may not have executed.
    The client does not look it up; ``app.services.settling`` does. Never resend blindly."""

    def __init__(self, message: str, *, client_order_id: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.client_order_id = client_order_id


def error_messages(body: Any) -> list[str]:
    """The message strings of an error body in either documented shape."""
    if isinstance(body, dict):
        errors = body.get("errors")
        if isinstance(errors, list) and errors:
            return [str(item) for item in errors]
        if isinstance(body.get("error"), str) and body["error"]:
            return [body["error"]]
        if isinstance(body.get("message"), str):
            return [body["message"]]
    return []


def describe_unexpected(text: str) -> str:
    """A short description of a body that is not the service's JSON (e.g. a proxy's page)."""
    snippet = " ".join(text.split())
    if not snippet:
        return "no details given"
    if snippet.startswith("<"):
        title = re.search(r"<title>(.*?)</title>", snippet, re.IGNORECASE | re.DOTALL)
        what = f" ({title.group(1).strip()[:80]})" if title else ""
        return f"an HTML page instead of the service's answer{what}; a proxy or gateway error?"
    return f"unexpected answer: {snippet[:160]}"


def from_response(status: int, body: Any, text: str, retry_after: float | None) -> ServiceError:
    """The typed error for an HTTP failure; ``body`` is the decoded JSON or None."""
    messages = error_messages(body) or [describe_unexpected(text)]
    message = "; ".join(messages)
    kw: dict[str, Any] = {"status": status, "messages": messages, "body": body}
    if status == 400:
        return InvalidRequest(message, **kw)
    if status == 401:
        return Unauthorized(message, **kw)
    if status == 403:
        return Forbidden(message, **kw)
    if status == 404:
        return NotFound(message, **kw)
    if status == 424:
        first = messages[0]
        if first.startswith("Insufficient Funds"):
            return InsufficientFunds(message, **kw)
        if first.startswith("Credit Not Available"):
            return CreditNotAvailable(message, **kw)
        return Refused(message, **kw)
    if status == 429:
        return RateLimited(message, retry_after=retry_after, **kw)
    if status >= 500:
        return ServerError(message, retry_after=retry_after, **kw)
    return Refused(message, **kw)
