"""Authentication and account isolation of the sandbox, over real HTTP against real processes.

Covers the interface's Authentication section (SHA-256 hex passwords, HS256 JWTs, the no-token
routes) and the sandbox's own hardening: refusal of forged tokens, expiry, throttled logins,
per-account isolation and salted password storage.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from app.sandbox.auth import TOKEN_CACHE, Authenticator
from app.sandbox.demo_data import create_client, seed_demo
from app.sandbox.keyfile import rotate_key
from app.sandbox.store import Store
from app.sandbox.wire import ApiError
from tests.harness import (
    SandboxProcess,
    Session,
    body,
    digest,
    fresh_client,
    new_client,
    wait_until,
)

LOGIN = "/api/v1/identity/jwt"
ACCOUNT = "/api/v1/accounting/account/{account}"
HEX_CHARS = set("0123456789abcdef")

Factory = Callable[..., SandboxProcess]

#: Operations the interface documents as needing a token (method, path); the sandbox's OpenAPI
#: document must mark each one as secured, and the refusal tests run over every secured one.
SPEC_AUTHED = {
    ("GET", "/api/v1/accounting/account/{accountId}"),
    ("GET", "/api/v1/accounting/account/{accountId}/portfolio"),
    ("GET", "/api/v1/accounting/ledger/{accountId}"),
    ("GET", "/api/v1/accounting/account/{accountId}/request/deposit"),
    ("GET", "/api/v1/accounting/account/{accountId}/request/deposit-instructions"),
    ("GET", "/api/v1/accounting/account/{accountId}/request/withdraw-instructions"),
    ("GET", "/api/v1/routing/account/{accountId}/topofbook"),
    ("GET", "/api/v1/routing/ops/account/{accountId}/topofbook"),
    ("GET", "/api/v1/routing/account/{accountId}/order/estimate"),
    ("POST", "/api/v1/routing/account/{accountId}/order/limit"),
    ("POST", "/api/v1/routing/account/{accountId}/order/rfq"),
    ("POST", "/api/v1/routing/account/{accountId}/order/rfq/{orderId}/accept"),
    ("GET", "/api/v1/routing/order/account/{accountId}"),
    ("GET", "/api/v1/routing/ops/order/account/{accountId}/orders"),
    ("GET", "/api/v1/routing/order/account/{accountId}/order/{orderId}"),
}

#: Query strings that make each GET a valid request, so only the token decides the outcome.
QUERIES: dict[str, dict[str, str]] = {
    "/api/v1/accounting/ledger/{accountId}": {"max": "10"},
    "/api/v1/routing/account/{accountId}/order/estimate": {
        "source": "BTC",
        "destination": "USD",
        "size": "0.01",
        "quote": "USD",
    },
    "/api/v1/routing/account/{accountId}/book": {"assetPair": "BTC/USD"},
}


@pytest.fixture(scope="module")
def holder(sandbox: SandboxProcess) -> Iterator[Session]:
    """One funded client for the read-only and refused requests of this module."""
    yield from fresh_client(sandbox)


# -- helpers -----------------------------------------------------------------------------------


def assert_error(response: httpx.Response, status: int) -> dict[str, Any]:
    """``response`` is a ``status`` refusal with the interface's generic error body."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    payload = body(response)
    assert isinstance(payload, dict), payload
    assert payload.get("httpStatusCode") == status, payload
    assert isinstance(payload.get("status"), str), payload
    assert payload["status"] != "ok", payload
    errors = payload.get("errors")
    assert isinstance(errors, list), payload
    assert errors, payload
    assert all(isinstance(message, str) and message for message in errors), payload
    return payload


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims_of(token: str) -> dict[str, Any]:
    claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return claims


def login(base_url: str, payload: Any = None, *, content: bytes | None = None) -> httpx.Response:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        if content is not None:
            return http.post(LOGIN, content=content, headers={"Content-Type": "application/json"})
        return http.post(LOGIN, json=payload)


def assert_reads_demo_account(session: Session) -> None:
    """``session``'s token is accepted: the ``demo`` account reads (200, its id)."""
    response = session.get(ACCOUNT)
    assert response.status_code == 200, response.text
    assert body(response)["account"]["accountId"] == "demo"


def flip(char: str) -> str:
    return "A" if char != "A" else "B"


def forged_tokens(token: str) -> dict[str, str | None]:
    """Authorization header values that must all be refused (None: no header at all)."""
    header, payload, signature = token.split(".")
    claims = claims_of(token)
    middle = len(signature) // 2
    flipped = signature[:middle] + flip(signature[middle]) + signature[middle + 1 :]
    longer = {**claims, "exp": int(claims["exp"]) + 365 * 86400}
    changed_payload = b64url(json.dumps(longer, separators=(",", ":")).encode())
    none_header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    other_secret = jwt.encode(claims, "not-the-sandbox-secret-" + "x" * 32, algorithm="HS256")
    return {
        "missing": None,
        "garbage": "Bearer garbage",
        "empty-bearer": "Bearer",
        "flipped-signature": f"Bearer {header}.{payload}.{flipped}",
        "changed-payload": f"Bearer {header}.{changed_payload}.{signature}",
        "alg-none": f"Bearer {none_header}.{payload}.",
        "alg-none-old-signature": f"Bearer {none_header}.{payload}.{signature}",
        "other-secret": f"Bearer {other_secret}",
        "token-scheme": f"Token {token}",
        "basic-scheme": "Basic " + base64.b64encode(b"user:password").decode(),
        "bare-token": token,
    }


def secured_operations(url: str) -> list[tuple[str, str]]:
    """(method, path) of every operation the sandbox's OpenAPI document marks as secured."""
    with httpx.Client(base_url=url, timeout=30) as http:
        document = http.get("/openapi.json").json()
    found = [
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if operation.get("security")
    ]
    return sorted(found)


def call(
    http: httpx.Client, method: str, path: str, account: str, authorization: str | None
) -> httpx.Response:
    """One request to ``path`` (a template) for ``account``; POSTs carry an empty object."""
    url = path.replace("{accountId}", account).replace("{orderId}", str(uuid.uuid4()))
    headers = {} if authorization is None else {"Authorization": authorization}
    if method == "GET":
        return http.get(url, params=QUERIES.get(path), headers=headers)
    return http.request(method, url, json={}, headers=headers)


# -- log in ------------------------------------------------------------------------------------


def test_login_returns_hs256_jwt_that_opens_authed_routes(sandbox: SandboxProcess) -> None:
    response = login(sandbox.url, {"user": "demo", "password": digest("demo")})
    assert response.status_code == 200, response.text
    payload = body(response)
    assert payload["status"] == "ok"
    assert payload["httpStatusCode"] == 200
    token = payload["token"]
    assert isinstance(token, str)
    parts = token.split(".")
    assert len(parts) == 3
    assert all(parts), token
    header = json.loads(b64url_decode(parts[0]))
    assert header["alg"] == "HS256"
    claims = claims_of(token)
    assert claims["sub"] == "demo"
    # "A token expires 24 hours after issue."
    assert int(claims["exp"]) - int(claims["iat"]) == 86400

    session = Session(sandbox.url, "demo", "demo", "demo", token=token)
    try:
        assert_reads_demo_account(session)
    finally:
        session.close()


def test_wrong_password_and_unknown_user_get_the_same_401(client: Session) -> None:
    wrong = login(client.base_url, {"user": client.user, "password": digest("not-it")})
    wrong_body = assert_error(wrong, 401)
    assert "token" not in wrong_body

    stranger = f"nobody-{uuid.uuid4().hex}"
    unknown = login(client.base_url, {"user": stranger, "password": digest(stranger)})
    unknown_body = assert_error(unknown, 401)
    # No user enumeration: the refusal is word for word the same.
    assert unknown_body == wrong_body
    assert client.user not in json.dumps(wrong_body)
    assert stranger not in json.dumps(unknown_body)

    # The failures did not break the right password.
    assert login(client.base_url, {"user": client.user, "password": digest(client.user)}).is_success


@pytest.mark.parametrize(
    "password",
    [
        pytest.param(lambda plain: plain, id="plain-text"),
        pytest.param(lambda plain: digest(plain).upper(), id="uppercase-hex"),
        pytest.param(lambda plain: digest(plain)[:63], id="63-chars"),
        pytest.param(lambda plain: digest(plain) + "0", id="65-chars"),
        pytest.param(lambda plain: "g" * 64, id="64-non-hex"),
        pytest.param(lambda plain: " " + digest(plain)[1:], id="leading-space"),
        pytest.param(lambda plain: 12345, id="number"),
    ],
)
def test_password_that_is_not_64_lowercase_hex_is_400(
    holder: Session, password: Callable[[str], Any]
) -> None:
    response = login(holder.base_url, {"user": holder.user, "password": password(holder.user)})
    payload = assert_error(response, 400)
    assert "token" not in payload


@pytest.mark.parametrize(
    ("payload", "content"),
    [
        pytest.param({}, None, id="empty-object"),
        pytest.param({"user": "demo"}, None, id="no-password"),
        pytest.param({"password": digest("demo")}, None, id="no-user"),
        pytest.param({"user": "", "password": digest("demo")}, None, id="empty-user"),
        pytest.param({"user": 7, "password": digest("demo")}, None, id="user-not-string"),
        pytest.param(None, b"", id="empty-body"),
        pytest.param(None, b'{"user": "demo", "password": ', id="truncated-json"),
        pytest.param(None, b"{user: demo}", id="not-json"),
        pytest.param(None, b'["demo", "x"]', id="json-array"),
        pytest.param(None, b'"demo"', id="json-string"),
    ],
)
def test_malformed_login_is_400(
    sandbox: SandboxProcess, payload: Any, content: bytes | None
) -> None:
    response = login(sandbox.url, payload, content=content)
    result = assert_error(response, 400)
    assert "token" not in result


@pytest.mark.parametrize("service", ["routing", "accounting"])
def test_login_only_through_identity(sandbox: SandboxProcess, service: str) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        response = http.post(
            f"/api/v1/{service}/jwt", json={"user": "demo", "password": digest("demo")}
        )
    payload = assert_error(response, 404)
    assert "token" not in payload


# -- tokens ------------------------------------------------------------------------------------


def test_every_spec_authed_operation_is_secured(sandbox: SandboxProcess) -> None:
    secured = set(secured_operations(sandbox.url))
    assert secured >= SPEC_AUTHED, sorted(SPEC_AUTHED - secured)


@pytest.mark.parametrize(
    "kind",
    [
        "missing",
        "garbage",
        "empty-bearer",
        "flipped-signature",
        "changed-payload",
        "alg-none",
        "alg-none-old-signature",
        "other-secret",
        "token-scheme",
        "basic-scheme",
        "bare-token",
    ],
)
def test_authed_routes_refuse_bad_tokens(
    sandbox: SandboxProcess, holder: Session, kind: str
) -> None:
    operations = secured_operations(sandbox.url)
    assert len(operations) >= len(SPEC_AUTHED)
    authorization = forged_tokens(holder.token)[kind]
    failures: list[str] = []
    for method, path in operations:
        # Control: the real token is not refused on this route (no POST body, so no trade).
        control = call(holder.http, method, path, holder.account, f"Bearer {holder.token}")
        if control.status_code in (401, 403):
            failures.append(f"{method} {path}: valid token refused: {control.text}")
            continue
        response = call(holder.http, method, path, holder.account, authorization)
        try:
            assert_error(response, 401)
        except AssertionError as exc:
            failures.append(f"{method} {path}: {exc}")
    assert not failures, "\n".join(failures)


def test_no_token_needed_for_info_and_time(sandbox: SandboxProcess) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=30) as http:
        for service in ("routing", "accounting", "identity"):
            response = http.get(f"/api/v1/{service}/info")
            assert response.status_code == 200, response.text
            payload = body(response)
            assert payload["status"] == "ok"
            assert payload["info"]["service"] == service
        clock = http.get("/api/v1/routing/time")
        assert clock.status_code == 200, clock.text
        assert body(clock)["status"] == "ok"


@pytest.mark.slow
def test_token_expires_after_its_ttl(sandbox_factory: Factory) -> None:
    short = sandbox_factory("--token-ttl", "2")
    session = Session(short.url, "demo", "demo", "demo")
    try:
        claims = claims_of(session.token)
        assert int(claims["exp"]) - int(claims["iat"]) == 2
        assert session.get(ACCOUNT).status_code == 200

        def refused() -> httpx.Response | None:
            response = session.get(ACCOUNT)
            return response if response.status_code == 401 else None

        expired: httpx.Response = wait_until(refused, timeout=6)
        payload = assert_error(expired, 401)
        assert any("expir" in message.lower() for message in payload["errors"]), payload

        session.login()
        assert_reads_demo_account(session)  # again
    finally:
        session.close()


def test_failed_logins_are_throttled_per_user(sandbox_factory: Factory) -> None:
    fresh = sandbox_factory()
    for _ in range(5):
        assert_error(login(fresh.url, {"user": "demo", "password": digest("wrong")}), 401)

    right = login(fresh.url, {"user": "demo", "password": digest("demo")})
    payload = assert_error(right, 429)
    assert "token" not in payload
    retry_after = right.headers.get("Retry-After")
    assert retry_after is not None, right.headers
    assert retry_after.isdigit(), retry_after
    assert 1 <= int(retry_after) <= 3600

    # Still throttled, wrong or right.
    assert_error(login(fresh.url, {"user": "demo", "password": digest("wrong")}), 429)

    # Another user is not affected.
    other = login(fresh.url, {"user": "demo2", "password": digest("demo2")})
    assert other.status_code == 200, other.text
    assert body(other)["token"]


# -- isolation ---------------------------------------------------------------------------------

#: demo's token on demo2's account: every one must be refused without demo2's data.
FOREIGN_REQUESTS: list[tuple[str, str, dict[str, str] | None, Any]] = [
    ("GET", "/api/v1/accounting/account/demo2", None, None),
    ("GET", "/api/v1/accounting/account/demo2/portfolio", None, None),
    ("GET", "/api/v1/accounting/ledger/demo2", {"max": "1000"}, None),
    ("GET", "/api/v1/accounting/account/demo2/request/deposit", {"max": "100"}, None),
    ("GET", "/api/v1/accounting/account/demo2/request/deposit-instructions", None, None),
    ("GET", "/api/v1/accounting/account/demo2/request/withdraw-instructions", None, None),
    ("GET", "/api/v1/routing/account/demo2/topofbook", {"assetPairs": "BTC/USD"}, None),
    ("GET", "/api/v1/routing/ops/account/demo2/topofbook", {"assetPairs": "BTC/USD"}, None),
    ("GET", "/api/v1/routing/order/account/demo2", {"max": "100"}, None),
    ("GET", "/api/v1/routing/ops/order/account/demo2/orders", {"max": "100"}, None),
    (
        "POST",
        "/api/v1/routing/account/demo2/order/limit",
        None,
        {
            "accountId": {"value": "demo2"},
            "type": "limit",
            "source": "BTC",
            "destination": "USD",
            "size": "0.01",
        },
    ),
    (
        "POST",
        "/api/v1/routing/account/demo2/order/rfq",
        None,
        {"assetPair": "BTC/USD", "size": "0.01 BTC"},
    ),
    (
        "POST",
        f"/api/v1/routing/account/demo2/order/rfq/{uuid.uuid4()}/accept",
        None,
        {"side": "sell"},
    ),
    ("POST", "/api/v1/sandbox/account/demo2/deposit", None, {"amount": "1 BTC"}),
]

ERROR_KEYS = {"errors", "status", "httpStatusCode", "orderId", "tradesSubmitted", "trades"}


def _snapshot(session: Session) -> dict[str, Any]:
    return {
        "account": body(session.get(ACCOUNT))["account"],
        "portfolio": body(session.get(ACCOUNT + "/portfolio"))["account"],
        "ledger": body(session.get("/api/v1/accounting/ledger/{account}", max="1000")),
        "deposits": body(session.get(ACCOUNT + "/request/deposit", max="1000")),
        "orders": body(session.get("/api/v1/routing/order/account/{account}", max="1000"))[
            "orders"
        ],
    }


def _secrets_of(snapshot: dict[str, Any], instructions: list[dict[str, Any]]) -> set[str]:
    """Strings that only demo2's own reads reveal."""
    found = {snapshot["account"]["name"]}
    for entry in snapshot["ledger"]:
        found.add(entry["transactionId"])
    for deposit in snapshot["deposits"]:
        found.update({deposit["transactionId"], deposit["hash"]})
    for item in instructions:
        if "address" in item:
            found.add(item["address"])
    return {text for text in found if isinstance(text, str) and len(text) >= 6}


def test_token_cannot_reach_another_account(sandbox: SandboxProcess, demo: Session) -> None:
    owner = Session(sandbox.url, "demo2", "demo2", "demo2")
    try:
        before = _snapshot(owner)
        instructions = body(owner.get(ACCOUNT + "/request/deposit-instructions"))["instructions"]
        secrets_ = _secrets_of(before, instructions)
        secrets_.add("Second Demo Trader")
        balance_words = {
            str(value)
            for balance in before["account"]["balances"].values()
            for value in balance.values()
            if value != 0
        }

        failures: list[str] = []
        for method, path, params, payload in FOREIGN_REQUESTS:
            response = demo.http.request(
                method, path, params=params, json=payload, headers=demo.headers
            )
            where = f"{method} {path}"
            if response.status_code not in (403, 404):
                failures.append(f"{where}: {response.status_code} {response.text}")
                continue
            try:
                refusal = assert_error(response, response.status_code)
            except AssertionError as exc:
                failures.append(f"{where}: {exc}")
                continue
            if not set(refusal) <= ERROR_KEYS or refusal.get("trades", []) != []:
                failures.append(f"{where}: unexpected fields {sorted(refusal)}")
            text = response.text
            leaked = [s for s in secrets_ if s in text]
            words = {w.strip(".,;:'\"()") for m in refusal["errors"] for w in m.split()}
            leaked += sorted(words & balance_words)
            if leaked:
                failures.append(f"{where}: leaks {leaked}: {text}")
        assert not failures, "\n".join(failures)

        assert _snapshot(owner) == before
    finally:
        owner.close()


def test_orders_and_quotes_of_another_account_are_not_found(sandbox: SandboxProcess) -> None:
    alice, bob = new_client(sandbox), new_client(sandbox)
    try:
        placed = alice.limit_order("BTC", "USD", "0.01")
        assert placed.status_code == 200, placed.text
        order_id = body(placed)["order"]["orderId"]
        assert alice.get(f"/api/v1/routing/order/account/{{account}}/order/{order_id}").is_success

        bob_before = _snapshot(bob)

        # Bob asks for Alice's order under his own account: not found, nothing of hers shown.
        mine = bob.get(f"/api/v1/routing/order/account/{{account}}/order/{order_id}")
        refusal = assert_error(mine, 404)
        assert alice.account not in mine.text
        assert alice.user not in mine.text
        assert "order" not in refusal
        # ... and under her account: forbidden.
        theirs = bob.http.get(
            f"/api/v1/routing/order/account/{alice.account}/order/{order_id}", headers=bob.headers
        )
        assert theirs.status_code in (403, 404)
        assert_error(theirs, theirs.status_code)
        assert order_id not in theirs.text

        quote = alice.post(
            "/api/v1/routing/account/{account}/order/rfq",
            {"assetPair": "BTC/USD", "size": "0.01 BTC"},
        )
        assert quote.status_code == 200, quote.text
        quote_id = body(quote)["orderId"]

        stolen = bob.post(
            f"/api/v1/routing/account/{{account}}/order/rfq/{quote_id}/accept", {"side": "sell"}
        )
        stolen_body = assert_error(stolen, 404)
        assert "order" not in stolen_body
        assert alice.account not in stolen.text

        # Bob's attempt neither traded for him nor used up Alice's quote.
        assert _snapshot(bob) == bob_before
        accepted = alice.post(
            f"/api/v1/routing/account/{{account}}/order/rfq/{quote_id}/accept", {"side": "sell"}
        )
        assert accepted.status_code == 200, accepted.text
        assert body(accepted)["order"]["accountId"] == alice.account
        assert body(accepted)["order"]["result"]["status"] == "filled"
    finally:
        alice.close()
        bob.close()


# -- storage -----------------------------------------------------------------------------------


def test_stored_password_is_salted_not_the_hex(sandbox_factory: Factory, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    process = sandbox_factory(db=str(db))
    # The stored credentials still let the demo users in.
    for user in ("demo", "demo2"):
        assert login(process.url, {"user": user, "password": digest(user)}).status_code == 200
    assert process.stop() == 0

    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT user_id, pw_salt, pw_hash FROM users WHERE user_id IN ('demo', 'demo2')"
        ).fetchall()
    connection.close()
    assert len(rows) == 2
    salts = []
    for user_id, salt, stored in rows:
        hex_digest = digest(user_id)
        stored_bytes = stored if isinstance(stored, bytes) else str(stored).encode()
        assert stored_bytes != user_id.encode()
        assert stored_bytes.lower() != hex_digest.encode()
        assert hex_digest.encode() not in stored_bytes.lower()
        assert bytes.fromhex(hex_digest) not in stored_bytes
        assert isinstance(salt, bytes), type(salt)
        assert len(salt) >= 16
        salts.append(salt)
    assert salts[0] != salts[1]

    # The hex the client sends appears nowhere in the database files.
    for path in tmp_path.glob("s.db*"):
        raw = path.read_bytes()
        for user in ("demo", "demo2"):
            assert digest(user).encode() not in raw, path
            assert bytes.fromhex(digest(user)) not in raw, path


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def authority(tmp_path: Path) -> Iterator[tuple[Authenticator, FakeClock, str]]:
    """An authenticator on a database file (so its key can be rotated) with the demo users, on a
    clock the test moves."""
    db = str(tmp_path / "auth.db")
    store = Store(db)
    seed_demo(store, datetime.now(UTC))
    clock = FakeClock()
    try:
        yield Authenticator(store, 60, 5, 60, clock, db_path=db), clock, db
    finally:
        store.close()


def remembered_token(auth: Authenticator) -> str:
    """A token issued for ``demo`` and verified once, so the authenticator remembers it."""
    token, _ = auth.issue("demo")
    assert auth.verify(f"Bearer {token}").user_id == "demo"
    return token


def assert_refused(auth: Authenticator, token: str, reason: str) -> None:
    """``token`` is refused with a 401 whose messages name ``reason``."""
    with pytest.raises(ApiError) as refused:
        auth.verify(f"Bearer {token}")
    assert refused.value.status_code == 401 and reason in " ".join(refused.value.messages)


def test_a_remembered_token_is_refused_once_it_expires(
    authority: tuple[Authenticator, FakeClock, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth, clock, _ = authority
    token = remembered_token(auth)

    def decode(*args: object, **kwargs: object) -> None:
        raise AssertionError("a remembered token is not decoded again")

    monkeypatch.setattr(jwt, "decode", decode)
    assert auth.verify(f"Bearer {token}").user_id == "demo"
    clock.now += 61
    assert_refused(auth, token, "expired")


def test_a_remembered_token_is_refused_at_once_after_a_key_rotation(
    authority: tuple[Authenticator, FakeClock, str],
) -> None:
    auth, _, db = authority
    token = remembered_token(auth)
    time.sleep(0.01)  # a distinct mtime for the new key file
    rotate_key(db)
    assert_refused(auth, token, "retired key")
    remembered_token(auth)  # a new token, signed with the new key, is accepted


def test_a_remembered_token_is_refused_at_once_after_a_revocation(
    authority: tuple[Authenticator, FakeClock, str],
) -> None:
    auth, _, _ = authority
    token = remembered_token(auth)
    auth.revoke("demo")
    assert_refused(auth, token, "revoked")


def test_remembered_tokens_are_bounded_and_a_forged_one_is_never_remembered(
    authority: tuple[Authenticator, FakeClock, str],
) -> None:
    auth, _, _ = authority
    token, _ = auth.issue("demo")
    forged = jwt.encode(jwt.decode(token, options={"verify_signature": False}), "x" * 32)
    for _ in range(2):
        with pytest.raises(ApiError):
            auth.verify(f"Bearer {forged}")
    assert forged not in auth._verified
    tokens = [auth.issue("demo")[0] for _ in range(TOKEN_CACHE + 10)]
    for each in tokens:
        auth.verify(f"Bearer {each}")
    assert auth.verify(f"Bearer {tokens[0]}").user_id == "demo"  # forgotten, verified afresh
    assert len(auth._verified) == TOKEN_CACHE


def test_an_unknown_user_is_looked_up_again_and_a_known_one_remembered(
    authority: tuple[Authenticator, FakeClock, str],
) -> None:
    auth, _, _ = authority
    assert auth.principal("newcomer") is None
    create_client(
        auth._store,
        user="newcomer",
        password_hex=digest("newcomer"),
        account="newcomer-1",
        name="Newcomer",
        account_name="newcomer-1 account",
        balances={},
        credit={},
        now=datetime.now(UTC),
    )
    found = auth.principal("newcomer")
    assert found is not None and found.accounts == frozenset({"newcomer-1"})
    assert auth.principal("newcomer") is found
