"""Opening a session: log in and build the TerminalSession, with failures in plain words.

The UI calls this instead of touching the client: it gets a ready session, or a
``LoginFailed`` whose message a trader can act on (wrong password, unreachable server, TLS).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.api import (
    ClientSettings,
    NetworkError,
    NotSent,
    RequestTimeout,
    ServiceClient,
    ServiceError,
    Unauthorized,
)
from app.services.session import Environment, FeedIntervals, TerminalSession


class LoginFailed(Exception):
    """Why the login did not work, in words for the login dialog."""


async def connect(
    base_url: str,
    user: str,
    password: str,
    account: str,
    *,
    sandbox: bool = False,
    intervals: FeedIntervals | None = None,
    watchlist: Sequence[str] | None = None,
) -> TerminalSession:
    """Log in (the plain password is hashed by the client and not kept) and return a session
    that is not started yet."""
    for name, value in (
        ("service URL", base_url),
        ("user", user),
        ("password", password),
        ("account", account),
    ):
        if not value.strip():
            raise LoginFailed(f"Enter the {name}.")
    try:
        client = ServiceClient(ClientSettings(base_url.strip()))
    except ServiceError as exc:
        raise LoginFailed(f"That service URL cannot be used: {exc.message}") from None
    try:
        await client.login(user.strip(), password, account.strip())
        await client.account()  # proves the account exists and this user may see it
    except Unauthorized:
        await client.aclose()
        raise LoginFailed("Wrong user or password.") from None
    except ServiceError as exc:
        await client.aclose()
        raise LoginFailed(_explain(exc, base_url, account)) from None
    environment = Environment(base_url.strip(), user.strip(), account.strip(), sandbox=sandbox)
    return TerminalSession(client, environment, intervals, watchlist)


def _explain(exc: ServiceError, base_url: str, account: str) -> str:
    text = str(exc)
    if "certificate" in text.lower() or "ssl" in text.lower() or "tls" in text.lower():
        return (
            f"Secure connection to {base_url} failed: the server's TLS certificate is not "
            f"trusted or TLS is not spoken there. ({exc.message})"
        )
    if isinstance(exc, NotSent):
        return f"Cannot reach {base_url}: is the address right and the service running?"
    if isinstance(exc, RequestTimeout):
        return f"{base_url} did not answer in time. Try again, or check the network."
    if isinstance(exc, NetworkError):
        return f"The connection to {base_url} failed: {exc.message}"
    if exc.status in (403, 404):
        return f"Account {account} does not exist or this user may not use it."
    if exc.status == 429:
        return "Too many login attempts; wait a minute and try again."
    return f"The service refused the login: {exc}"
