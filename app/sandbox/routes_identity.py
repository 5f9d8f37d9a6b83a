"""Log in and service information (no token needed)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anyio

from app.domain import format_timestamp
from app.sandbox.api import Call, endpoint
from app.sandbox.auth import is_password_digest
from app.sandbox.schemas import (
    INTEGER,
    PASSWORD_DIGEST,
    STRING,
    TEXT,
    TIMESTAMP,
    obj,
    record,
    success,
)
from app.sandbox.validation import require_object
from app.sandbox.wire import ApiError, bad_request, error, ok

SERVICES = ("accounting", "identity", "routing")


@endpoint(
    "POST",
    "/api/v1/{service}/jwt",
    "Log in: exchange user and SHA-256 password for a JWT",
    tag="identity",
    auth=False,
    errors=(400, 401, 404, 429, 503),
    body=obj(("user", "password"), user=TEXT, password=PASSWORD_DIGEST),
    response=success(("token", "expiresAt"), token=TEXT, expiresAt=TIMESTAMP),
    path_params={"service": {"type": "string", "enum": ["identity"]}},
)
async def login(call: Call) -> dict[str, Any]:
    if call.path("service") != "identity":
        raise error(404, "Log in through the identity service: POST /api/v1/identity/jwt")
    body = require_object(await call.json())
    user, password = body.get("user"), body.get("password")
    if not isinstance(user, str) or not user:
        raise bad_request("user is required")
    if not is_password_digest(password):
        raise bad_request(
            "password must be the SHA-256 hash of the password as 64 lowercase hex characters"
        )
    auth = call.sandbox.auth
    client = call.request.client
    attempt = auth.throttle.admit(user, client.host if client else "")
    try:
        async with auth.hashing_slot():
            matches = await anyio.to_thread.run_sync(auth.credentials_match, user, str(password))
    except ApiError:
        auth.throttle.withdraw(attempt)  # never evaluated: not a failure
        raise
    if not matches:
        raise error(401, "Invalid user or password")
    auth.throttle.succeeded(attempt)
    auth.record_success(user)
    token, expires = auth.issue(user)
    return ok(
        {"token": token, "expiresAt": format_timestamp(datetime.fromtimestamp(int(expires), UTC))}
    )


@endpoint(
    "GET",
    "/api/v1/{service}/info",
    "Service information: version, build, launch time",
    tag="identity",
    auth=False,
    errors=(404,),
    response=success(
        ("info",),
        info=record(
            {
                "service": {"type": "string", "enum": list(SERVICES)},
                "application": STRING,
                "instance": STRING,
                "applicationLaunchTime": TIMESTAMP,
                "build": record(
                    {
                        "version": STRING,
                        "commit": STRING,
                        "branch": STRING,
                        "iso8601": TIMESTAMP,
                        "unixSeconds": INTEGER,
                    }
                ),
            }
        ),
    ),
    path_params={"service": {"type": "string", "enum": list(SERVICES)}},
)
async def info(call: Call) -> dict[str, Any]:
    service = call.path("service")
    if service not in SERVICES:
        raise error(404, f"Unknown service {service!r}; one of {', '.join(SERVICES)}")
    sandbox = call.sandbox
    return ok(
        {
            "info": {
                "service": service,
                "application": "tradeterm-sandbox",
                "instance": sandbox.instance,
                "applicationLaunchTime": format_timestamp(sandbox.launched_at),
                "build": sandbox.build,
            }
        }
    )
