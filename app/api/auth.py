"""Credentials and the token's lifetime.

The plain password is hashed to lowercase SHA-256 hex at once and dropped; the hex and the token
live in memory only (never logged, never stored). The token is renewed before it expires.

Its lifetime is the server's, never this machine's wall clock's (which may be minutes off):
``exp − iat`` when the JWT carries both (both are the server's clock; a second less when they are
whole seconds, as ``iat`` is cut to the second), else ``exp`` less the
server's time as the client tracks it; then counted down on the monotonic clock from the login.
A token without a readable ``exp`` lives 24 h, as the seed says. One whose ``exp`` is already
past by the server's own clock is renewed after ``PAST_EXPIRY_RETRY`` seconds, with a warning —
never silently taken for a 24 h token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass, field


def password_digest(plain: str) -> str:
    """What the service expects as ``password``: lowercase SHA-256 hex of the plain password."""
    return hashlib.sha256(plain.encode()).hexdigest()


@dataclass(frozen=True)
class HashedPassword:
    """A password hashed where it came in (the environment, a file descriptor), so its plain
    text never became a Python string the process keeps or frees unwiped."""

    hex: str = field(repr=False)

    def __repr__(self) -> str:
        return "HashedPassword(***)"


#: What a login takes: the plain password (hashed at once) or one already hashed.
Password = str | HashedPassword


@dataclass(frozen=True)
class Credentials:
    user: str
    account: str
    digest: str = field(repr=False)

    @classmethod
    def from_plain(cls, user: str, plain_password: str, account: str) -> Credentials:
        return cls(user, account, password_digest(plain_password))

    @classmethod
    def of(cls, user: str, password: Password, account: str) -> Credentials:
        if isinstance(password, HashedPassword):
            return cls(user, account, password.hex)
        return cls.from_plain(user, password, account)

    def __repr__(self) -> str:
        return f"Credentials(user={self.user!r}, account={self.account!r}, digest=***)"


DEFAULT_LIFETIME = 24 * 3600.0
RENEW_MARGIN = 0.1  # renew when 10% of the lifetime (at most 5 min) is left
#: Seconds before renewing a token that reads as expired on arrival (no storm of logins).
PAST_EXPIRY_RETRY = 60.0

log = logging.getLogger("tradeterm.api")


@dataclass
class Token:
    value: str = field(repr=False)
    issued_monotonic: float
    lifetime: float  # seconds

    @classmethod
    def issued(
        cls, value: str, now_monotonic: float | None = None, server_now: float | None = None
    ) -> Token:
        """A token received at ``now_monotonic``; ``server_now``: the server's epoch seconds
        then, as tracked by the client (used only when the JWT has no ``iat``)."""
        issued = time.monotonic() if now_monotonic is None else now_monotonic
        return cls(value, issued, token_lifetime(value, server_now))

    def renew_at(self) -> float:
        margin = min(300.0, self.lifetime * RENEW_MARGIN)
        return self.issued_monotonic + self.lifetime - margin

    def seconds_left(self, now_monotonic: float | None = None) -> float:
        now = time.monotonic() if now_monotonic is None else now_monotonic
        return self.issued_monotonic + self.lifetime - now

    def __repr__(self) -> str:
        return f"Token(***, lifetime={self.lifetime:.0f}s)"


def token_lifetime(token: str, server_now: float | None) -> float:
    """Seconds the token lives from now, by the server's clock (module docstring)."""
    claims = jwt_claims(token)
    exp = _time_claim(claims, "exp")
    if exp is None:
        return DEFAULT_LIFETIME
    iat = _time_claim(claims, "iat")
    if iat is not None and exp > iat:
        # Whole seconds (as JWTs usually carry them): issued up to a second after ``iat``,
        # so up to a second less to live than ``exp - iat`` says.
        whole = iat == int(iat)
        return max((exp - iat) / 2, exp - iat - 1) if whole else exp - iat
    if server_now is not None and exp > server_now:
        return exp - server_now
    log.warning(
        "the service's token reads as expired on arrival (exp %s, server time %s): "
        "renewing it in %.0f s",
        exp,
        server_now,
        PAST_EXPIRY_RETRY,
    )
    return PAST_EXPIRY_RETRY


def jwt_lifetime(token: str, server_now: float) -> float | None:
    """Seconds from ``server_now`` until the JWT's ``exp`` (read without verifying: only to
    schedule renewal); None when it has no readable ``exp``."""
    exp = _time_claim(jwt_claims(token), "exp")
    return None if exp is None else max(0.0, exp - server_now)


def jwt_claims(token: str) -> dict[str, object]:
    """The JWT's claims, unverified; empty when unreadable."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError, RecursionError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _time_claim(claims: dict[str, object], name: str) -> float | None:
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None
