"""A loopback TCP proxy between the client and a server, for faults the server cannot make
itself: a blackhole (connections accepted, nothing ever answered), malformed JSON answers, and
connections cut under a reused request. It runs its own event loop in a thread, so a test's
loop (or a benchmark's) only flips its mode.

Modes: ``forward`` (pass bytes both ways), ``blackhole`` (accept and read, never answer; open
connections stall too), ``garble`` (answer every request ``200`` with truncated JSON),
``cut_reused`` (the second request on any connection is read, then the connection is closed
without a byte of answer: what a server closing an idle keep-alive connection does to a client
that reuses it at that moment).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

GARBLED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n"
    b'{"topOfBook": [{"a'
)
MODES = ("forward", "blackhole", "garble", "cut_reused")


class Proxy:
    """``Proxy(upstream_port).start()``; clients use ``proxy.url``; ``proxy.mode = ...``."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.mode = "forward"
        self.port = 0
        self.cut = 0  # connections closed by cut_reused
        self.forwarded = 0  # requests passed upstream (one per chunk that starts a request)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Proxy:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        self.port = future.result(10)
        return self

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode = mode

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def _listen(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        pump: asyncio.Task[None] | None = None
        requests = 0
        try:
            while chunk := await reader.read(65536):
                mode = self.mode
                if mode == "blackhole":
                    continue  # read and forget: the client waits for ever
                if mode == "garble":
                    writer.write(GARBLED)
                    await writer.drain()
                    continue
                if _starts_request(chunk):
                    requests += 1
                    if mode == "cut_reused" and requests > 1:
                        self.cut += 1
                        return  # closed with the request read and no answer
                    self.forwarded += 1
                if upstream is None:
                    try:
                        up_reader, upstream = await asyncio.open_connection(*self.upstream)
                    except OSError:
                        return  # the server is down: close the client's connection
                    self._writers.add(upstream)
                    pump = asyncio.create_task(self._pump(up_reader, writer))
                upstream.write(chunk)
                await upstream.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if pump is not None:
                pump.cancel()
            for end in (upstream, writer):
                if end is not None:
                    self._writers.discard(end)
                    end.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Upstream's answers to the client, while the mode lets them through."""
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(65536):
                if self.mode == "blackhole":
                    continue
                writer.write(chunk)
                await writer.drain()
            writer.close()


def _starts_request(chunk: bytes) -> bool:
    head = chunk[:8]
    return any(head.startswith(m) for m in (b"GET ", b"POST ", b"PUT ", b"DELETE ", b"HEAD "))


@contextlib.contextmanager
def proxy_to(port: int) -> Iterator[Proxy]:
    """A running proxy in front of ``127.0.0.1:port``, closed after the block."""
    proxy = Proxy(port).start()
    try:
        yield proxy
    finally:
        proxy.close()
