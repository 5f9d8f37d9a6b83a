"""The request body cap, enforced while the body arrives.

Reading a body whole and then measuring it let one unauthenticated 400 MB upload take 835 MB of
memory. This outermost ASGI middleware refuses a declared ``Content-Length`` over the cap with
413 before reading a byte of it, and counts the bytes of a chunked (or lying) body as the
application reads them, raising a 413 refusal the moment the count passes the cap. uvicorn
stops reading a socket whose application is not reading, and closes a connection answered before
its body was read, so the rest of an oversized body is never buffered.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.sandbox.wire import ApiError, error, json_response


def too_large(limit: int) -> ApiError:
    return error(413, f"Request body larger than {limit} bytes", headers={"Connection": "close"})


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, without buffering them."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            refusal = too_large(self.limit)
            response = json_response(refusal.body, refusal.status_code, refusal.headers)
            await response(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    # An ApiError: the route handler answers it like any other refusal.
                    raise too_large(self.limit)
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
