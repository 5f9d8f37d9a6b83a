"""Opening a terminal: log in and build the ``Terminal``, with failures in plain words.

The UI calls this instead of touching the client: it gets a ready terminal (the composition
root, ``app.services.terminal``), or a ``LoginFailed`` whose message a trader can act on
(wrong password, unreachable server, TLS).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.api import (
    ClientSettings,
    HashedPassword,
    LoginThrottled,
    NetworkError,
    NotSent,
    Password,
    RequestTimeout,
    ServiceClient,
    ServiceError,
    Unauthorized,
)
from app.services.log_events import LogLevel
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.services.terminal import Terminal

#: The UI names a hashed password without importing the client.
__all__ = [
    "HashedPassword",
    "LoginFailed",
    "Password",
    "connect",
    "log_in_again",
    "throttle_words",
]


class LoginFailed(Exception):
    """Why the login did not work, in words for the login dialog; ``field`` names the input
    to correct ("url", "user", "password", "account") when one is at fault."""

    def __init__(self, message: str, field: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.field = field
        #: Seconds the service asked to wait before the next login (a throttle), if it said.
        self.retry_after = retry_after


def throttle_words(seconds_left: float) -> str:
    """A login throttle in words, as it counts down to the moment a login may be tried."""
    if seconds_left <= 0:
        return "You can log in again now."
    return f"Too many logins: try again in {math.ceil(seconds_left)} s."


async def connect(
    base_url: str,
    user: str,
    password: Password,
    account: str,
    *,
    sandbox: bool = False,
    intervals: FeedIntervals | None = None,
    watchlist: Sequence[str] | None = None,
) -> Terminal:
    """Log in (a plain password is hashed by the client and not kept) and return the
    terminal of that login, not started yet."""
    plain = password.hex if isinstance(password, HashedPassword) else password
    for name, value in (
        ("service URL", base_url),
        ("user", user),
        ("password", plain),
        ("account", account),
    ):
        if not value.strip():
            raise LoginFailed(f"Enter the {name}.")
    try:
        client = ServiceClient(ClientSettings(base_url.strip()))
    except ServiceError as exc:
        raise LoginFailed(f"That service URL cannot be used: {exc.message}", field="url") from None
    try:
        await client.login(user.strip(), password, account.strip())
        await client.account()  # proves the account exists and this user may see it
    except Unauthorized:
        await client.aclose()
        raise LoginFailed("Wrong user or password.", field="password") from None
    except ServiceError as exc:
        await client.aclose()
        raise LoginFailed(*_explain(exc, base_url, account), retry_after=_wait(exc)) from None
    except BaseException:  # cancelled (the dialog closed): do not leak the connection pool
        await client.aclose()
        raise
    environment = Environment(base_url.strip(), user.strip(), account.strip(), sandbox=sandbox)
    return Terminal.build(client, environment, intervals, watchlist)


async def log_in_again(session: TerminalSession, password: str) -> None:
    """After "login expired": the same user and account, the password asked again (hashed by
    the client, not kept); the feeds resume. ``LoginFailed`` in the dialog's words."""
    if not password:
        raise LoginFailed("Enter the password.", field="password")
    environment = session.environment
    try:
        await session.log_in_again(password)
    except Unauthorized:
        raise LoginFailed("Wrong password.", field="password") from None
    except ServiceError as exc:
        explained = _explain(exc, environment.base_url, environment.account)
        raise LoginFailed(*explained, retry_after=_wait(exc)) from None
    session.log(LogLevel.INFO, f"logged in again as {environment.user}; the feeds resume")


def _wait(exc: ServiceError) -> float | None:
    return exc.retry_after if isinstance(exc, LoginThrottled) else None


def _explain(exc: ServiceError, base_url: str, account: str) -> tuple[str, str]:
    """The message for the dialog and the field to correct."""
    text = str(exc).lower()
    if "certificate" in text or "ssl" in text or "tls" in text:
        return (
            f"Secure connection to {base_url} failed: the server's TLS certificate is not "
            "trusted, or the server does not speak TLS at that address (try http:// for a "
            "local sandbox).",
            "url",
        )
    if isinstance(exc, NotSent):
        return f"Cannot reach {base_url}: is the address right and the service running?", "url"
    if isinstance(exc, RequestTimeout):
        return f"{base_url} did not answer in time. Try again, or check the network.", "url"
    if isinstance(exc, NetworkError):
        return f"The connection to {base_url} failed: {exc.message}", "url"
    if exc.status in (403, 404):
        return f"Account {account} does not exist or this user may not use it.", "account"
    if isinstance(exc, LoginThrottled):
        if exc.retry_after is None:
            return "Too many logins: wait a minute and try again.", ""
        return throttle_words(exc.retry_after), ""
    if exc.status == 429:
        return "Too many requests; wait a minute and try again.", ""
    return f"The service refused the login: {exc}", ""
