"""The sandbox holds to its own OpenAPI document: schemathesis generates requests for
every operation from the document (valid ones and ones the document forbids) and sends them to a
real sandbox process over loopback; every answer must be documented (status, content type,
headers) and match its declared schema, nothing may fail with a 5xx, and what the document
forbids must be refused with a 4xx.

The account path parameter is pinned to the test's own funded account so requests reach the
handlers instead of stopping at 403; a few examples per operation keep the run short.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi import checks

from app.sandbox.server import endpoints
from tests.harness import (
    ADMIN_TOKEN,
    Faults,
    SandboxProcess,
    Session,
    fresh_client,
    new_client,
    own_sandbox,
)

CHECKS = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
]
#: The fault switches: rules a valid request sets would make later answers HTML pages or cut
#: connections on purpose, so they are lifted after each example (they never touch admin routes,
#: so the switch's own answer is checked as it is).
FAULTS = "/api/v1/sandbox/admin/faults"
#: Values for path parameters where any will do (routing answers 405 before the handler runs).
FILLERS = {"service": "identity", "accountId": "demo"}
#: Examples per operation and generation mode: enough to touch every field, quick to run.
EXAMPLES = 20


@pytest.fixture(scope="module")
def contract_sandbox() -> Iterator[SandboxProcess]:
    yield from own_sandbox("--tick", "3600")


@pytest.fixture(scope="module")
def contract_client(contract_sandbox: SandboxProcess) -> Iterator[Session]:
    yield from fresh_client(contract_sandbox)


@pytest.fixture(scope="module")
def api_schema(contract_sandbox: SandboxProcess) -> Any:
    schema = schemathesis.openapi.from_url(f"{contract_sandbox.url}/openapi.json")
    schema.config.update(base_url=contract_sandbox.url)
    # The token is sent by the test; taking it away is test_sandbox_auth's business.
    schema.config.generation.update(with_security_parameters=False)
    return schema


def _cases() -> list[tuple[str, str, GenerationMode]]:
    """Every operation with valid data, and with invalid data where the document constrains
    something the test does not pin (a query, a body, a path parameter other than the account)."""
    cases = []
    for ep in sorted(endpoints(), key=lambda ep: (ep.path, ep.method)):
        cases.append((ep.method, ep.path, GenerationMode.POSITIVE))
        if ep.query or ep.body is not None or ep.path_params:
            cases.append((ep.method, ep.path, GenerationMode.NEGATIVE))
    return cases


CASES = _cases()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "path", "mode"), CASES, ids=[f"{m} {p} {mode.value}" for m, p, mode in CASES]
)
def test_every_operation_keeps_to_the_document(
    api_schema: Any,
    contract_sandbox: SandboxProcess,
    contract_client: Session,
    method: str,
    path: str,
    mode: GenerationMode,
) -> None:
    operation = api_schema[path][method]
    pinned = {"accountId": contract_client.account} if "{accountId}" in path else None
    headers = {"Authorization": f"Bearer {contract_client.token}", "X-Sandbox-Admin": ADMIN_TOKEN}

    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=pinned))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def keeps_to_it(case: Any) -> None:
        try:
            case.call_and_validate(headers=headers, checks=CHECKS)
        finally:
            if path == FAULTS:
                Faults(contract_sandbox).clear()

    keeps_to_it()


def test_answers_of_real_trading_keep_to_the_document(
    api_schema: Any, contract_sandbox: SandboxProcess
) -> None:
    """Generated data rarely makes a trade, so the success and refusal bodies of the trading
    operations are checked here on a real sequence: fills, a resting order, refusals (400, 424,
    409), a market order, a quote accepted twice, transfers."""
    trader = new_client(contract_sandbox, credit={"USD": "-1000"})
    headers = {"Authorization": f"Bearer {trader.token}", "X-Sandbox-Admin": ADMIN_TOKEN}
    account = {"accountId": trader.account}
    routing = "/api/v1/routing/account/{accountId}"
    accounting = "/api/v1/accounting/account/{accountId}"

    def send(method: str, path: str, status: int, **data: Any) -> Any:
        operation = api_schema[path][method]
        if "body" in data:
            data["media_type"] = "application/json"
        case = operation.Case(path_parameters={**account, **data.pop("ids", {})}, **data)
        response = case.call_and_validate(headers=headers, checks=CHECKS[:-1])
        assert response.status_code == status, (method, path, response.text)
        return response.json()

    def limit(status: int, **fields: Any) -> Any:
        order = {"accountId": {"value": trader.account}, "source": "BTC", "destination": "USD"}
        return send("POST", routing + "/order/limit", status, body={**order, **fields})

    try:
        filled = limit(200, size="0.01", clientOrderId="contract-1")["order"]
        assert filled["result"]["status"] == "filled"
        resting = limit(200, size="0.01", limit="10000000", endAt="2099-01-01T00:00:00Z")
        assert resting["order"]["result"]["status"] == "submitted"
        limit(400, size="-1")
        limit(424, size="100")
        limit(409, size="0.02", clientOrderId="contract-1")
        market = {"type": "market", "source": "USD", "destination": "BTC", "size": "10"}
        send("POST", routing + "/order", 200, body=market)
        quote = send(
            "POST", routing + "/order/rfq", 200, body={"assetPair": "ETH/USD", "size": "1000 USD"}
        )
        accept = routing + "/order/rfq/{orderId}/accept"
        send("POST", accept, 200, ids={"orderId": quote["orderId"]}, body={"side": "buy"})
        send("POST", accept, 409, ids={"orderId": quote["orderId"]}, body={"side": "sell"})
        order = "/api/v1/routing/order/account/{accountId}/order/{orderId}"
        send("GET", order, 200, ids={"orderId": filled["orderId"]})
        estimate = {"source": "BTC", "destination": "USD", "size": "0.1", "quote": "BTC"}
        send("GET", routing + "/order/estimate", 200, query=estimate)
        topup = {"amount": "1 BTC", "pendingSeconds": 600}
        send("POST", "/api/v1/sandbox/account/{accountId}/deposit", 200, body=topup)
        send("GET", accounting, 200)
        send("GET", accounting + "/portfolio", 200)
        whitelist = send("GET", accounting + "/request/withdraw-instructions", 200)
        btc = next(i for i in whitelist["instructions"] if i["asset"] == "BTC")
        chain = {"amount": "0.1 BTC", "networkType": "bitcoin", "address": btc["address"]}
        send("POST", accounting + "/request/withdraw/blockchain", 200, body=chain)
        send("POST", accounting + "/request/withdraw/fiat", 200, body={"amount": "10 USD"})
        send("POST", accounting + "/request/withdraw/fiat", 424, body={"amount": "9999999 USD"})
        for path in ("/request/deposit", "/request/withdraw", "/request/deposit-instructions"):
            send("GET", accounting + path, 200)
        send("GET", "/api/v1/accounting/ledger/{accountId}", 200, query={"max": "50"})
        send("GET", routing + "/pairs", 200)
        send("GET", "/api/v1/routing/time", 200)
    finally:
        trader.close()


def test_document_declares_every_response_and_bound(contract_sandbox: SandboxProcess) -> None:
    """No loose ``{"type": ["object", "array"]}`` left, and the parameters the handlers bound
    carry their bounds and allowed values."""
    with httpx.Client(base_url=contract_sandbox.url, timeout=30) as http:
        document = http.get("/openapi.json").json()
    operations = [op for ops in document["paths"].values() for op in ops.values()]
    assert len(operations) >= 25
    for operation in operations:
        for code, answer in operation["responses"].items():
            schema = answer["content"]["application/json"]["schema"]
            assert schema != {"type": ["object", "array"]}, (operation["operationId"], code)
            assert "$ref" in schema or "required" in schema or schema.get("type") == "array"
    ledger = document["paths"]["/api/v1/accounting/ledger/{accountId}"]["get"]
    by_name = {p["name"]: p["schema"] for p in ledger["parameters"]}
    assert by_name["max"] == {"type": "integer", "minimum": 1, "maximum": 10000}
    assert "trade" in by_name["type"]["enum"]
    limit = document["paths"]["/api/v1/routing/account/{accountId}/order/limit"]["post"]
    body = limit["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["clientOrderId"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 128,
    }


def test_wrong_method_is_405_with_allow(contract_sandbox: SandboxProcess) -> None:
    """Every path answers an undeclared method with 405 and the methods it does take."""
    with httpx.Client(base_url=contract_sandbox.url, timeout=30) as http:
        document = http.get("/openapi.json").json()
        for template, operations in document["paths"].items():
            path = re.sub(r"{(\w+)}", lambda m: FILLERS.get(m.group(1), "x"), template)
            answer = http.patch(path)
            assert answer.status_code == 405, (template, answer.text)
            assert answer.json()["httpStatusCode"] == 405
            allowed = {m.strip() for m in answer.headers["Allow"].split(",")}
            declared = {m.upper() for m in operations}
            if len(declared) == 1:
                assert allowed - {"HEAD"} == declared, (template, allowed)
            else:  # Starlette names the first route of the path that matched (admin faults)
                assert allowed - {"HEAD"} <= declared, (template, allowed)
