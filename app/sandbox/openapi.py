"""The OpenAPI 3.1 document of the sandbox, generated from the route table.

Every operation declares its real success schema (``app.sandbox.schemas``), its error bodies,
the headers that come with them (``Retry-After`` on 429/503, ``WWW-Authenticate`` on 401) and
the bounds and allowed values of each parameter, so a contract test can hold the sandbox to it.
"""

from __future__ import annotations

import re
from typing import Any

import app
from app.sandbox.api import Endpoint
from app.sandbox.schemas import COMPONENTS, TEXT, ref

_REASONS = {
    400: "Invalid input",
    401: "Missing, invalid or expired token",
    403: "The token has no access to this account",
    404: "Not found",
    409: "Conflict (e.g. quote already accepted)",
    410: "Quote expired",
    413: "Request body larger than 64 KB",
    424: "Insufficient funds or credit not available",
    429: "Too many failed logins (Retry-After)",
    500: "Internal failure",
    503: "Too busy right now (Retry-After)",
}
_RETRY_AFTER = {
    "Retry-After": {
        "required": True,
        "description": "Seconds to wait before trying again",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    }
}
_HEADERS = {
    401: {"WWW-Authenticate": {"required": True, "schema": {"type": "string"}}},
    429: _RETRY_AFTER,
    503: _RETRY_AFTER,
}


def document(endpoints: list[Endpoint]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for ep in endpoints:
        paths.setdefault(ep.path, {})[ep.method.lower()] = _operation(ep)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Tradeterm sandbox: trading and accounting service interface",
            "version": app.version(),
            "description": "The embedded sandbox of the service interface v1. Operations marked "
            "x-sandbox-extension are the sandbox's own shapes for operations the "
            "interface names without detail.",
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
            },
            "schemas": COMPONENTS,
        },
        "paths": paths,
    }


def _operation(ep: Endpoint) -> dict[str, Any]:
    if not ep.response:
        raise ValueError(f"{ep.method} {ep.path} declares no response schema")
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": ep.path_params.get(name, TEXT)}
        for name in re.findall(r"{(\w+)}", ep.path)
    ]
    for param in ep.query:
        parameters.append(
            {
                "name": param.name,
                "in": "query",
                "required": param.required,
                "description": param.description,
                "schema": param.schema(),
            }
        )
    responses: dict[str, Any] = {
        "200": {
            "description": "Success",
            "content": {"application/json": {"schema": ep.response}},
        }
    }
    codes = sorted({*ep.errors, *((413,) if ep.body is not None else ())})
    for code in codes:
        answer: dict[str, Any] = {
            "description": _REASONS.get(code, "Error"),
            "content": {"application/json": {"schema": ref(ep.error_bodies.get(code, "Error"))}},
        }
        if code in _HEADERS and (code != 401 or ep.auth):  # a failed login is no challenge
            answer["headers"] = _HEADERS[code]
        responses[str(code)] = answer
    operation: dict[str, Any] = {
        "operationId": ep.handler.__name__,
        "summary": ep.summary,
        "tags": [ep.tag],
        "parameters": parameters,
        "responses": responses,
    }
    if ep.auth:
        operation["security"] = [{"bearer": []}]
    if ep.admin:
        operation["parameters"].append(
            {
                "name": "X-Sandbox-Admin",
                "in": "header",
                "required": True,
                "schema": {"type": "string"},
            }
        )
    if ep.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": ep.body}},
        }
    if ep.extension:
        operation["x-sandbox-extension"] = True
    return operation
