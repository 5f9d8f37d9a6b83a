"""Sandbox authentication: scrypt-hashed credentials, HS256 JWTs, throttled failed logins.

The client sends the SHA-256 hex of the plain password; the store keeps only a salted scrypt of
that hex. Tokens are signed with a secret kept in the database, so they survive a restart of the
same database until they expire.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

import jwt

from app.sandbox.store import Store
from app.sandbox.wire import ApiError, error

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
_ALGORITHM = "HS256"


def password_digest(plain: str) -> str:
    """What a client sends as ``password``: lowercase SHA-256 hex of the plain password."""
    return hashlib.sha256(plain.encode()).hexdigest()


def is_password_digest(value: object) -> bool:
    return isinstance(value, str) and bool(_HEX64.match(value))


def hash_digest(digest: str, salt: bytes | None = None) -> tuple[bytes, bytes]:
    """Salted scrypt of the client's hex digest (slow on purpose: ~40 ms)."""
    salt = salt or secrets.token_bytes(16)
    return salt, hashlib.scrypt(digest.encode(), salt=salt, **_SCRYPT)


@dataclass(frozen=True)
class Principal:
    """Who a valid token speaks for."""

    user_id: str
    email: str
    name: str
    accounts: frozenset[str]


class Authenticator:
    def __init__(
        self,
        store: Store,
        token_ttl: float,
        failures_allowed: int,
        window: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._ttl = token_ttl
        self._allowed = failures_allowed
        self._window = window
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self.logins: Counter[str] = Counter()
        secret = store.get_meta("jwt_secret")
        if secret is None:
            secret = secrets.token_hex(32)
            with store.transaction():
                store.set_meta("jwt_secret", secret)
        self._secret = secret

    @property
    def token_ttl(self) -> float:
        return self._ttl

    def throttle(self, user: str) -> None:
        """429 with Retry-After while ``user`` has too many recent failed logins."""
        now = self._clock()
        failures = self._failures.get(user)
        if not failures:
            return
        while failures and failures[0] <= now - self._window:
            failures.popleft()
        if len(failures) >= self._allowed:
            retry_after = max(1, int(failures[0] + self._window - now) + 1)
            raise error(
                429,
                f"Too many failed logins for this user; try again in {retry_after} s",
                headers={"Retry-After": str(retry_after)},
            )

    def record_failure(self, user: str) -> None:
        self._failures.setdefault(user, deque()).append(self._clock())

    def record_success(self, user: str) -> None:
        self._failures.pop(user, None)
        self.logins[user] += 1

    def generation(self, user: str) -> int:
        """Tokens carry their user's generation; revoking bumps it and voids older tokens."""
        return int(self._store.get_meta(f"token_generation:{user}") or "0")

    def revoke(self, user: str) -> None:
        with self._store.transaction():
            self._store.set_meta(f"token_generation:{user}", str(self.generation(user) + 1))

    def credentials_match(self, user: str, digest: str) -> bool:
        """Compare with the stored scrypt; runs scrypt even for unknown users (no timing oracle)."""
        row = self._store.query_one("SELECT pw_salt, pw_hash FROM users WHERE user_id = ?", (user,))
        salt = bytes(row["pw_salt"]) if row else b"0" * 16
        _, candidate = hash_digest(digest, salt)
        return row is not None and hmac.compare_digest(candidate, bytes(row["pw_hash"]))

    def issue(self, user: str) -> tuple[str, float]:
        now = self._clock()
        expires = now + self._ttl
        claims = {
            "sub": user,
            "iat": int(now),
            "exp": int(expires),
            "jti": uuid.uuid4().hex,
            "gen": self.generation(user),
        }
        return jwt.encode(claims, self._secret, algorithm=_ALGORITHM), expires

    def verify(self, authorization: str | None) -> Principal:
        """The principal of a ``Bearer`` header, or a 401 for anything missing or invalid."""
        if not authorization:
            raise _unauthorized("Missing Authorization header; log in and send 'Bearer <token>'")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _unauthorized("Authorization header must be 'Bearer <token>'")
        try:
            claims = jwt.decode(
                token.strip(),
                self._secret,
                algorithms=[_ALGORITHM],
                options={"require": ["exp", "iat", "sub"]},
                leeway=0,
            )
        except jwt.ExpiredSignatureError:
            raise _unauthorized("Token expired; log in again") from None
        except jwt.InvalidTokenError:
            raise _unauthorized("Invalid token") from None
        principal = self.principal(str(claims["sub"]))
        if principal is None:
            raise _unauthorized("Invalid token: unknown user")
        if claims.get("gen", 0) != self.generation(principal.user_id):
            raise _unauthorized("Token revoked; log in again")
        return principal

    def principal(self, user_id: str) -> Principal | None:
        row = self._store.query_one("SELECT * FROM users WHERE user_id = ?", (user_id,))
        if row is None:
            return None
        accounts = self._store.query("SELECT account_id FROM accounts WHERE owner = ?", (user_id,))
        return Principal(
            row["user_id"], row["email"], row["name"], frozenset(a["account_id"] for a in accounts)
        )


def _unauthorized(message: str) -> ApiError:
    return error(401, message, headers={"WWW-Authenticate": "Bearer"})
