"""Sandbox authentication: scrypt-hashed credentials, HS256 JWTs, throttled logins.

The client sends the SHA-256 hex of the plain password; the store keeps only a salted scrypt of
that hex. Tokens are signed with the key in ``<db>.key`` (see :mod:`app.sandbox.keyfile`), so
they survive a restart of the same database until they expire or the key is rotated.

Logins are admitted before the password is hashed: an attempt is written down first,
then hashed, so sixty concurrent wrong passwords cannot all be evaluated. Failures count per
(user, client address) and per client address: five wrong passwords from one address throttle
that address for that user, without locking the right password out from elsewhere. At most
``HASH_SLOTS`` scrypt runs (16 MB each) go at once, in worker threads so the event loop keeps
serving; a few more may wait, and the rest get 503 with Retry-After at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import jwt

from app.sandbox.keyfile import KeyFile, SigningKey
from app.sandbox.store import Store
from app.sandbox.wire import ApiError, error

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
_ALGORITHM = "HS256"
#: Seconds a token's ``iat``/``exp`` may stray from the server's own reading of its lifetime.
_LIFETIME_SLACK = 5
#: Concurrent scrypt runs, and logins that may wait for one before the rest get 503.
HASH_SLOTS = 2
HASH_QUEUE = 16
#: Keys kept in the throttle's tables before expired ones are swept.
_SWEEP_AT = 4096
#: Verified tokens remembered by their string (oldest forgotten first): a repeat skips the HMAC
#: and the claim parsing, which with the principal lookup were a quarter of the time the sandbox
#: spent answering top of book.
TOKEN_CACHE = 4096


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


@dataclass(frozen=True)
class VerifiedToken:
    """What a correctly signed token says, remembered so its signature is checked once. Only
    the claims are kept: expiry, key generation, lifetime, user and revocation are judged
    afresh on every request."""

    secret: str
    generation: object
    user: str
    issued: object
    expires: object
    revocation: object


@dataclass(frozen=True)
class Attempt:
    """An admitted login: counted as a failure until it proves right."""

    user: str
    address: str
    at: float


#: Failed logins of one user, from all addresses together, allowed per ``ACCOUNT_WINDOW`` s: a
#: guesser with many addresses gets no more than this (OWASP ASVS: at most 100 an hour).
PER_ACCOUNT = 100
ACCOUNT_WINDOW = 3600.0


class LoginThrottle:
    """Sliding windows of failed (or still running) logins per (user, address), per address,
    and per user across all addresses (a longer window, a higher ceiling).

    An attempt is written down when it is admitted, before its password is hashed, and taken
    back only when the password was right: concurrency cannot slip past the limits.
    """

    def __init__(
        self,
        per_user: int,
        per_address: int,
        window: float,
        clock: Callable[[], float] = time.time,
        per_account: int = PER_ACCOUNT,
        account_window: float = ACCOUNT_WINDOW,
    ) -> None:
        self._per_user = per_user
        self._per_address = per_address
        self._per_account = per_account
        self._window = window
        self._account_window = account_window
        self._clock = clock
        self._pairs: dict[tuple[str, str], deque[float]] = {}
        self._addresses: dict[str, deque[float]] = {}
        self._accounts: dict[str, deque[float]] = {}

    def admit(self, user: str, address: str) -> Attempt:
        """Record the attempt, or 429 with Retry-After when this address is over a limit."""
        now = self._clock()
        self._sweep(now)
        pair = self._recent(self._pairs, (user, address), now)
        if len(pair) >= self._per_user:
            raise self._refusal(pair, now, "for this user")
        by_address = self._recent(self._addresses, address, now)
        if len(by_address) >= self._per_address:
            raise self._refusal(by_address, now, "from this address")
        account = self._recent(self._accounts, user, now, self._account_window)
        if len(account) >= self._per_account:
            raise self._refusal(account, now, "for this user", self._account_window)
        pair.append(now)
        by_address.append(now)
        account.append(now)
        return Attempt(user, address, now)

    def succeeded(self, attempt: Attempt) -> None:
        """The password was right: this address starts afresh for this user."""
        self._pairs.pop((attempt.user, attempt.address), None)
        self.withdraw(attempt, pair=False)

    def withdraw(self, attempt: Attempt, *, pair: bool = True) -> None:
        """Take back an attempt that was never evaluated (the server was too busy)."""
        places: list[deque[float] | None] = [
            self._addresses.get(attempt.address),
            self._accounts.get(attempt.user),
        ]
        if pair:
            places.append(self._pairs.get((attempt.user, attempt.address)))
        for stamps in places:
            if stamps is not None and attempt.at in stamps:
                stamps.remove(attempt.at)

    def _recent(
        self, table: dict[Any, deque[float]], key: Any, now: float, window: float | None = None
    ) -> deque[float]:
        stamps = table.setdefault(key, deque())
        span = self._window if window is None else window
        while stamps and stamps[0] <= now - span:
            stamps.popleft()
        return stamps

    def _refusal(
        self, stamps: deque[float], now: float, scope: str, window: float | None = None
    ) -> ApiError:
        span = self._window if window is None else window
        retry_after = max(1, int(stamps[0] + span - now) + 1)
        return error(
            429,
            f"Too many failed logins {scope}; try again in {retry_after} s",
            headers={"Retry-After": str(retry_after)},
        )

    def _sweep(self, now: float) -> None:
        """Forget expired windows, so a stream of made-up user names cannot grow memory."""
        tables: tuple[tuple[dict[Any, deque[float]], float], ...] = (
            (self._pairs, self._window),
            (self._addresses, self._window),
            (self._accounts, self._account_window),
        )
        for table, span in tables:
            if len(table) > _SWEEP_AT:
                for key in [k for k, v in table.items() if not v or v[-1] <= now - span]:
                    del table[key]


class Authenticator:
    def __init__(
        self,
        store: Store,
        token_ttl: float,
        failures_allowed: int,
        window: float,
        clock: Callable[[], float] = time.time,
        *,
        db_path: str = ":memory:",
        address_failures_allowed: int = 30,
    ) -> None:
        self._store = store
        self._ttl = token_ttl
        self._clock = clock
        self.throttle = LoginThrottle(failures_allowed, address_failures_allowed, window, clock)
        self.logins: Counter[str] = Counter()
        #: scrypt evaluations so far (admin stats): what the throttle is there to bound.
        self.password_checks = 0
        self._hashing = asyncio.Semaphore(HASH_SLOTS)
        self._waiting = 0
        self._keys = KeyFile(db_path, lambda: store.get_meta("jwt_secret"))
        self._verified: dict[str, VerifiedToken] = {}
        self._principals: dict[str, Principal] = {}
        self._generations: dict[str, int] = {}
        if store.get_meta("jwt_secret") is not None:
            with store.transaction():
                store.execute("DELETE FROM meta WHERE key = 'jwt_secret'")

    @property
    def token_ttl(self) -> float:
        return self._ttl

    @asynccontextmanager
    async def hashing_slot(self) -> AsyncIterator[None]:
        """One of the few scrypt slots, or 503 at once when too many logins already wait."""
        if self._hashing.locked() and self._waiting >= HASH_QUEUE:
            raise error(
                503, "Too many logins in progress; try again shortly", headers={"Retry-After": "1"}
            )
        self._waiting += 1
        try:
            await self._hashing.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._hashing.release()

    def record_success(self, user: str) -> None:
        self.logins[user] += 1

    def generation(self, user: str) -> int:
        """Tokens carry their user's revocation count; revoking bumps it and voids older ones.
        Remembered once read: this sandbox is the database's one writer and every bump goes
        through :meth:`revoke`, so the count is read from the database once per user, not on
        every request (that read was on every poll of top of book, the sandbox's busiest
        path)."""
        known = self._generations.get(user)
        if known is None:
            known = self._stored_generation(user)
            if len(self._generations) >= TOKEN_CACHE:
                self._generations.clear()
            self._generations[user] = known
        return known

    def _stored_generation(self, user: str) -> int:
        return int(self._store.get_meta(f"token_generation:{user}") or "0")

    def revoke(self, user: str) -> None:
        with self._store.transaction():
            bumped = self._stored_generation(user) + 1
            self._store.set_meta(f"token_generation:{user}", str(bumped))
        self._generations[user] = bumped  # once written: a rolled-back bump changes nothing

    def credentials_match(self, user: str, digest: str) -> bool:
        """Compare with the stored scrypt; runs scrypt even for unknown users (no timing oracle)."""
        row = self._store.query_one("SELECT pw_salt, pw_hash FROM users WHERE user_id = ?", (user,))
        salt = bytes(row["pw_salt"]) if row else b"0" * 16
        self.password_checks += 1
        _, candidate = hash_digest(digest, salt)
        return row is not None and hmac.compare_digest(candidate, bytes(row["pw_hash"]))

    def issue(self, user: str) -> tuple[str, float]:
        now = self._clock()
        expires = now + self._ttl
        key = self._keys.current()
        claims = {
            "sub": user,
            "iat": int(now),
            "exp": int(expires),
            "jti": uuid.uuid4().hex,
            "gen": key.generation,
            "rev": self.generation(user),
        }
        return jwt.encode(claims, key.secret, algorithm=_ALGORITHM), expires

    def verify(self, authorization: str | None) -> Principal:
        """The principal of a ``Bearer`` header, or a 401 for anything missing or invalid.

        Beyond the signature: the token names the current key generation, and its lifetime is
        the server's to decide (a correctly signed token that claims to live longer than
        ``--token-ttl``, or was issued in the future, is refused). A token's signature is
        checked once and its claims remembered (:data:`TOKEN_CACHE`); every other check runs on
        each request, so an expiry, a key rotation or a revocation refuses it at once.
        """
        if not authorization:
            raise _unauthorized("Missing Authorization header; log in and send 'Bearer <token>'")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _unauthorized("Authorization header must be 'Bearer <token>'")
        token = token.strip()
        key = self._keys.current()
        claims = self._verified.get(token)
        if claims is None or claims.secret != key.secret:
            # not seen, or seen under a key since replaced: the signature decides afresh
            claims = self._decode(token, key)
        now = self._clock()
        issued, expires = claims.issued, claims.expires
        if isinstance(expires, int) and expires <= now:
            raise _unauthorized("Token expired; log in again")
        if claims.generation != key.generation:
            raise _unauthorized("Token signed with a retired key; log in again")
        if (
            not isinstance(issued, int)
            or not isinstance(expires, int)
            or issued > now + _LIFETIME_SLACK
            or expires - issued > self._ttl + _LIFETIME_SLACK
            or expires > now + self._ttl + _LIFETIME_SLACK
        ):
            raise _unauthorized("Invalid token: lifetime longer than this server grants")
        principal = self.principal(claims.user)
        if principal is None:
            raise _unauthorized("Invalid token: unknown user")
        if claims.revocation != self.generation(principal.user_id):
            raise _unauthorized("Token revoked; log in again")
        return principal

    def _decode(self, token: str, key: SigningKey) -> VerifiedToken:
        """Check the signature and the claims' presence, and remember the token; expiry is
        judged by the caller on this server's clock, for a fresh and a remembered token alike."""
        try:
            claims = jwt.decode(
                token,
                key.secret,
                algorithms=[_ALGORITHM],
                options={"require": ["exp", "iat", "sub", "jti", "gen"], "verify_exp": False},
                leeway=0,
            )
        except jwt.InvalidTokenError:
            raise _unauthorized(_why_invalid(token, key.generation)) from None
        verified = VerifiedToken(
            key.secret,
            claims["gen"],
            str(claims["sub"]),
            claims["iat"],
            claims["exp"],
            claims.get("rev", 0),
        )
        if len(self._verified) >= TOKEN_CACHE:
            del self._verified[next(iter(self._verified))]
        self._verified[token] = verified
        return verified

    def principal(self, user_id: str) -> Principal | None:
        """Who ``user_id`` is and which accounts it owns. Remembered once found: a user and
        its account are written together and never changed afterwards (a second client of the
        same name or account is a 409), so only an unknown user is asked of the database again
        (it may be created later)."""
        known = self._principals.get(user_id)
        if known is not None:
            return known
        found = self._lookup(user_id)
        if found is not None:
            if len(self._principals) >= TOKEN_CACHE:
                self._principals.clear()
            self._principals[user_id] = found
        return found

    def _lookup(self, user_id: str) -> Principal | None:
        row = self._store.query_one("SELECT * FROM users WHERE user_id = ?", (user_id,))
        if row is None:
            return None
        accounts = self._store.query("SELECT account_id FROM accounts WHERE owner = ?", (user_id,))
        return Principal(
            row["user_id"], row["email"], row["name"], frozenset(a["account_id"] for a in accounts)
        )


def _why_invalid(token: str, generation: int) -> str:
    """A clearer word for a token of an earlier key (the refusal stands either way)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return "Invalid token"
    if isinstance(claims.get("gen"), int) and claims["gen"] != generation:
        return "Token signed with a retired key; log in again"
    return "Invalid token"


def _unauthorized(message: str) -> ApiError:
    return error(401, message, headers={"WWW-Authenticate": "Bearer"})
