"""The sandbox's route table: each endpoint declared once, served by Starlette and described in
the OpenAPI document from the same declaration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from app.sandbox.auth import Principal
from app.sandbox.wire import decode_body, error

if TYPE_CHECKING:
    from app.sandbox.context import Sandbox

MAX_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Param:
    """A query parameter, for the OpenAPI document (validation is the handler's)."""

    name: str
    description: str
    type: str = "string"
    required: bool = False
    format: str | None = None


@dataclass
class Call:
    """One request as a handler sees it: the sandbox, who is calling, and when."""

    request: Request
    sandbox: Sandbox
    principal: Principal | None
    now: datetime

    @property
    def params(self) -> Mapping[str, str]:
        return self.request.query_params

    def path(self, name: str) -> str:
        return str(self.request.path_params[name])

    @property
    def account_id(self) -> str:
        return self.path("accountId")

    @property
    def user(self) -> Principal:
        assert self.principal is not None, "route declared without auth"
        return self.principal

    async def json(self) -> Any:
        raw = await self.request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise error(413, f"Request body larger than {MAX_BODY_BYTES} bytes")
        return decode_body(raw)


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    handler: Handler
    summary: str
    tag: str
    auth: bool = True
    query: tuple[Param, ...] = ()
    body: dict[str, Any] | None = None
    extension: bool = False
    admin: bool = False
    errors: tuple[int, ...] = field(default=())


ENDPOINTS: list[Endpoint] = []


def endpoint(
    method: str,
    path: str,
    summary: str,
    *,
    tag: str,
    auth: bool = True,
    query: tuple[Param, ...] = (),
    body: dict[str, Any] | None = None,
    extension: bool = False,
    admin: bool = False,
    errors: tuple[int, ...] = (400,),
) -> Callable[[Handler], Handler]:
    """Register ``handler`` for ``method path``; ``extension`` marks routes the seed only names."""

    def register(handler: Handler) -> Handler:
        ENDPOINTS.append(
            Endpoint(
                method, path, handler, summary, tag, auth, query, body, extension, admin, errors
            )
        )
        return handler

    return register


def obj(required: tuple[str, ...] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON-schema object, for request bodies in the OpenAPI document."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


STRING: dict[str, Any] = {"type": "string"}
