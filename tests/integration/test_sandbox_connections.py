"""The header deadline and the cap on connections waiting for headers, in both of uvicorn's
HTTP/1.1 implementations (the sandbox uses httptools; h11 is its fallback), served in-process
over loopback with a one-route app."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator

import pytest
import uvicorn

from app.sandbox.connections import protocol_class

pytestmark = pytest.mark.anyio

IMPLEMENTATIONS = ["httptools", "h11"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def hello(scope: dict[str, object], receive: object, send: object) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
    await send({"type": "http.response.body", "body": b"hello"})  # type: ignore[operator]


async def serving(
    implementation: str, header_seconds: float, max_waiting: int
) -> AsyncIterator[int]:
    config = uvicorn.Config(
        hello,
        http=protocol_class(implementation, header_seconds=header_seconds, max_waiting=max_waiting),
        lifespan="off",
        log_level="warning",
    )
    server = uvicorn.Server(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # uvicorn offers a flag, not an event
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task


async def closed(reader: asyncio.StreamReader, within: float) -> bool:
    """The server closed the connection within ``within`` seconds."""
    try:
        return await asyncio.wait_for(reader.read(), within) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


async def whole_request(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
async def test_headers_not_in_by_the_deadline_close_the_connection(implementation: str) -> None:
    async for port in serving(implementation, header_seconds=0.5, max_waiting=100):
        started = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: t\r\n")  # never the blank line
        silent_reader, silent_writer = await asyncio.open_connection("127.0.0.1", port)
        assert await closed(reader, 10) and await closed(silent_reader, 10)
        elapsed = time.monotonic() - started
        assert 0.5 <= elapsed < 8, elapsed  # the deadline, and what a busy machine adds
        writer.close()
        silent_writer.close()
        assert b"\r\nhello\r\n" in await whole_request(port)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
async def test_beyond_the_cap_the_longest_waiting_connection_is_closed(implementation: str) -> None:
    async for port in serving(implementation, header_seconds=60, max_waiting=3):
        slow = []
        for _ in range(5):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\n")
            await writer.drain()
            slow.append((reader, writer))
        assert b"\r\nhello\r\n" in await whole_request(port)  # served at once
        # the real request waited too, for a moment: each newcomer beyond three closed the one
        # that had waited longest, so the three oldest went and the two newest still wait
        assert [await closed(reader, 5) for reader, _ in slow[:3]] == [True] * 3
        assert [await closed(reader, 0.1) for reader, _ in slow[3:]] == [False] * 2
        for _, writer in slow:
            writer.close()


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
async def test_a_kept_alive_connection_between_requests_is_not_waiting(implementation: str) -> None:
    async for port in serving(implementation, header_seconds=0.3, max_waiting=100):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(2):
            writer.write(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"hello"), 10)
            assert head.startswith(b"HTTP/1.1 200")
            # idle past the deadline between requests: still open (keep-alive governs it)
            assert not await closed(reader, 0.6)
        writer.close()
