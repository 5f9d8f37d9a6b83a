"""The sandbox's route table: each endpoint declared once, served by Starlette and described in
the OpenAPI document from the same declaration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams
from starlette.requests import Request

from app.sandbox.auth import Principal
from app.sandbox.wire import bad_request, decode_body, error

if TYPE_CHECKING:
    from app.sandbox.context import Sandbox

MAX_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Param:
    """A query parameter, for the OpenAPI document (validation is the handler's): its bounds
    and allowed values are declared here so the document refuses what the handler refuses."""

    name: str
    description: str
    type: str = "string"
    required: bool = False
    format: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    enum: tuple[str, ...] = ()
    pattern: str | None = None
    min_length: int | None = None
    max_length: int | None = None

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.type}
        for key, value in (
            ("format", self.format),
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("pattern", self.pattern),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
        ):
            if value is not None:
                schema[key] = value
        if self.enum:
            schema["enum"] = list(self.enum)
        return schema


#: Query strings parsed, by their raw bytes: a terminal polls with the same few again and again
#: (parsing was 7 % of a top-of-book answer under load). ``QueryParams`` cannot be changed.
_PARSED: dict[bytes, QueryParams] = {}
PARSED_KEPT = 256


@dataclass
class Call:
    """One request as a handler sees it: the sandbox, who is calling, and when."""

    request: Request
    sandbox: Sandbox
    principal: Principal | None
    now: datetime

    @property
    def params(self) -> Mapping[str, str]:
        """The query parameters; one named twice is refused (which one would count?)."""
        raw: bytes = self.request.scope.get("query_string", b"")
        query = _PARSED.get(raw)
        if query is None:
            query = QueryParams(raw)
            if len(_PARSED) >= PARSED_KEPT:
                _PARSED.clear()
            _PARSED[raw] = query
        if len(query) < len(query.multi_items()):  # a name given twice (one pass to find it)
            for name in query:
                if len(query.getlist(name)) > 1:
                    raise bad_request(f"Query parameter {name} given more than once")
        return query

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
    #: The success body's schema (see app.sandbox.schemas).
    response: dict[str, Any] = field(default_factory=dict)
    #: Error bodies other than the generic ``Error`` (e.g. 424 -> ``OrderRefusal``).
    error_bodies: dict[int, str] = field(default_factory=dict)
    #: Schemas of path parameters other than a non-empty string (e.g. an enum of services).
    path_params: dict[str, dict[str, Any]] = field(default_factory=dict)


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
    response: dict[str, Any],
    error_bodies: dict[int, str] | None = None,
    path_params: dict[str, dict[str, Any]] | None = None,
) -> Callable[[Handler], Handler]:
    """Register ``handler`` for ``method path``; ``extension`` marks routes the seed only names.
    ``response`` is required: the OpenAPI document describes every success body exactly."""

    def register(handler: Handler) -> Handler:
        ENDPOINTS.append(
            Endpoint(
                method,
                path,
                handler,
                summary,
                tag,
                auth,
                query,
                body,
                extension,
                admin,
                errors,
                response,
                error_bodies or {},
                path_params or {},
            )
        )
        return handler

    return register
