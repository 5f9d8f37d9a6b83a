"""The OpenAPI 3.1 document of the sandbox, generated from the route table."""

from __future__ import annotations

import re
from typing import Any

import app
from app.sandbox.api import Endpoint

_ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "errors": {"type": "array", "items": {"type": "string"}},
        "status": {"type": ["string", "integer"]},
        "httpStatusCode": {"type": "integer"},
        "error": {"type": "string"},
    },
}
_REASONS = {
    400: "Invalid input",
    401: "Missing, invalid or expired token",
    403: "The token has no access to this account",
    404: "Not found",
    409: "Conflict (e.g. quote already accepted)",
    410: "Quote expired",
    424: "Insufficient funds or credit not available",
    429: "Too many failed logins (Retry-After)",
    500: "Internal failure",
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
            "schemas": {"Error": _ERROR_SCHEMA},
        },
        "paths": paths,
    }


def _operation(ep: Endpoint) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", ep.path)
    ]
    for param in ep.query:
        schema: dict[str, Any] = {"type": param.type}
        if param.format:
            schema["format"] = param.format
        parameters.append(
            {
                "name": param.name,
                "in": "query",
                "required": param.required,
                "description": param.description,
                "schema": schema,
            }
        )
    responses: dict[str, Any] = {
        "200": {
            "description": "Success",
            "content": {"application/json": {"schema": {"type": ["object", "array"]}}},
        }
    }
    for code in ep.errors:
        responses[str(code)] = {
            "description": _REASONS.get(code, "Error"),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
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
