"""Credentials and the token's lifetime.

The plain password is hashed to lowercase SHA-256 hex at once and dropped; the hex and the token
live in memory only (never logged, never stored). The token is renewed before it expires: at
the JWT's ``exp`` when readable, else 24 h after issue as the seed says.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass, field


def password_digest(plain: str) -> str:
    """What the service expects as ``password``: lowercase SHA-256 hex of the plain password."""
    return hashlib.sha256(plain.encode()).hexdigest()


@dataclass(frozen=True)
class Credentials:
    user: str
    account: str
    digest: str = field(repr=False)

    @classmethod
    def from_plain(cls, user: str, plain_password: str, account: str) -> Credentials:
        return cls(user, account, password_digest(plain_password))

    def __repr__(self) -> str:
        return f"Credentials(user={self.user!r}, account={self.account!r}, digest=***)"


DEFAULT_LIFETIME = 24 * 3600.0
RENEW_MARGIN = 0.1  # renew when 10% of the lifetime (at most 5 min) is left


@dataclass
class Token:
    value: str = field(repr=False)
    issued_monotonic: float
    lifetime: float  # seconds

    @classmethod
    def issued(
        cls, value: str, now_monotonic: float | None = None, wall_now: float | None = None
    ) -> Token:
        issued = time.monotonic() if now_monotonic is None else now_monotonic
        return cls(value, issued, jwt_lifetime(value, wall_now) or DEFAULT_LIFETIME)

    def renew_at(self) -> float:
        margin = min(300.0, self.lifetime * RENEW_MARGIN)
        return self.issued_monotonic + self.lifetime - margin

    def seconds_left(self, now_monotonic: float | None = None) -> float:
        now = time.monotonic() if now_monotonic is None else now_monotonic
        return self.issued_monotonic + self.lifetime - now

    def __repr__(self) -> str:
        return f"Token(***, lifetime={self.lifetime:.0f}s)"


def jwt_lifetime(token: str, wall_now: float | None = None) -> float | None:
    """Seconds until the JWT's ``exp`` (read without verifying: only to schedule renewal)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
        exp = claims["exp"]
        if isinstance(exp, bool) or not isinstance(exp, int | float):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    now = time.time() if wall_now is None else wall_now
    return max(0.0, exp - now)
