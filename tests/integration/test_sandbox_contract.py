"""The sandbox holds to its own OpenAPI document (issue 15): schemathesis generates requests for
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
from tests.harness import ADMIN_TOKEN, SandboxProcess, Session, new_client

CHECKS = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
]
#: The fault switches deliberately answer with undocumented bodies (HTML pages, cut
#: connections): generating valid rules would break every later request of the run.
SKIPPED = {("POST", "/api/v1/sandbox/admin/faults")}
#: Values for path parameters where any will do (routing answers 405 before the handler runs).
FILLERS = {"service": "identity", "accountId": "demo"}
#: Examples per operation and generation mode: enough to touch every field, quick to run.
EXAMPLES = 20


@pytest.fixture(scope="module")
def contract_sandbox() -> Iterator[SandboxProcess]:
    process = SandboxProcess("--tick", "3600").start()
    yield process
    process.close()


@pytest.fixture(scope="module")
def contract_client(contract_sandbox: SandboxProcess) -> Iterator[Session]:
    session = new_client(contract_sandbox)
    yield session
    session.close()


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
        if (ep.method, ep.path) in SKIPPED:
            continue
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
    api_schema: Any, contract_client: Session, method: str, path: str, mode: GenerationMode
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
        case.call_and_validate(headers=headers, checks=CHECKS)

    keeps_to_it()


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
