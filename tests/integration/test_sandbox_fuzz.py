"""Arbitrary input to every route gets a JSON answer below 500: bad input is never a crash."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.sandbox.api import Endpoint
from app.sandbox.server import endpoints
from tests.harness import SandboxProcess, Session, new_client

ID_CHARS = string.ascii_letters + string.digits + "-_.~"
ROUTES = [ep for ep in endpoints() if not ep.admin]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.text(max_size=20),
    st.sampled_from(["0.5 BTC", "BTC", "USD", "BTC/USD", "NaN", "-1", "1e400", "buy", "sell"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "accountId",
        "type",
        "source",
        "destination",
        "size",
        "limit",
        "endAt",
        "clientOrderId",
        "assetPair",
        "side",
        "amount",
        "networkType",
        "address",
        "method",
        "user",
        "password",
        "pendingSeconds",
        "network",
    ]
)
bodies = st.one_of(json_values, st.dictionaries(field_names, json_values, max_size=8))
query_values = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "10",
            "true",
            "false",
            "BTC",
            "BTC/USD",
            "2026-01-01T00:00:00Z",
            "99999999999999999999999",
            "x,y",
            "",
        ]
    ),
)


@pytest.fixture(scope="module")
def fuzz_client(sandbox: SandboxProcess) -> Iterator[Session]:
    session = new_client(sandbox, balances={"USD": "1000000", "BTC": "100", "ETH": "100"})
    yield session
    session.close()


def _url(ep: Endpoint, session: Session, order_id: str) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "accountId":
            return session.account
        if name == "service":
            return "identity"
        return order_id

    return re.sub(r"{(\w+)}", fill, ep.path)


def _assert_json_below_500(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    decoded: Any = json.loads(response.text, parse_float=Decimal)
    if response.status_code >= 400:
        assert isinstance(decoded, dict)
        assert decoded["httpStatusCode"] == response.status_code
        assert decoded["errors"], decoded


@pytest.mark.parametrize("ep", [ep for ep in ROUTES if ep.method == "POST"], ids=lambda ep: ep.path)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.slow
@given(body=bodies, order_id=st.text(alphabet=ID_CHARS, min_size=1, max_size=40))
def test_post_routes_survive_arbitrary_bodies(
    ep: Endpoint, fuzz_client: Session, body: Any, order_id: str
) -> None:
    url = _url(ep, fuzz_client, order_id)
    _assert_json_below_500(fuzz_client.post(url, body))


@pytest.mark.parametrize("ep", [ep for ep in ROUTES if ep.method == "GET"], ids=lambda ep: ep.path)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_get_routes_survive_arbitrary_queries(
    ep: Endpoint, fuzz_client: Session, data: st.DataObject
) -> None:
    names = [param.name for param in ep.query] or ["x"]
    params = data.draw(st.dictionaries(st.sampled_from(names), query_values, max_size=len(names)))
    url = _url(ep, fuzz_client, "no-such-order")
    response = fuzz_client.http.get(url, params=params, headers=fuzz_client.headers)
    _assert_json_below_500(response)
    if response.status_code == 200 and ep.path.endswith("/info"):
        assert json.loads(response.text)["info"]["service"] == "identity"


def test_raw_garbage_bodies_are_400(fuzz_client: Session) -> None:
    for raw in (b"{", b"[1,2", b"\xff\xfe", b"null", b'"text"', b"NaN", b'{"size": NaN}'):
        response = fuzz_client.post("/api/v1/routing/account/{account}/order/limit", content=raw)
        assert response.status_code == 400, (raw, response.text)
        assert response.json()["tradesSubmitted"] is False
