"""The hello-JSON ceiling of the sandbox bench: a one-route Starlette app answering a small JSON
object, served by uvicorn with the sandbox's own settings (:func:`app.sandbox.cli.serve`:
socket with TCP_NODELAY, log level, no access log, lifespan, keep-alive, HTTP protocol), so the
difference between the two is the sandbox's own work per request.

Run: ``python -m tests.perf.hello_server``; prints ``Hello listening on http://HOST:PORT``.
"""

from __future__ import annotations

import asyncio
import socket

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.sandbox.cli import uvicorn_config
from app.sandbox.config import SandboxConfig

PREFIX = "Hello listening on "


async def hello(request: Request) -> JSONResponse:
    return JSONResponse({"hello": "world"})


async def serve() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    application = Starlette(routes=[Route("/hello", hello)])
    server = uvicorn.Server(uvicorn_config(application, SandboxConfig().keep_alive))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    print(f"{PREFIX}http://127.0.0.1:{port}", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(serve())
