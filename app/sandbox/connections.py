"""The sandbox's HTTP connections: a deadline for a request's headers and a cap on the
connections still waiting for theirs.

Why: uvicorn bounds an idle keep-alive connection and (with ``limit_concurrency``) the requests
it serves, but not a client that opens a connection and then trickles its headers, or sends
nothing at all. Four hundred such connections were held for 75 s, and at a 1,024-descriptor limit
every real request timed out. A real client sends its headers in one write, microseconds after
connecting; so a connection that has not finished its headers within ``header_seconds`` is closed,
and when more than ``max_waiting`` connections are waiting for headers at once, the one that has
waited longest is closed first — a burst of slow clients evicts itself, never the request that
just arrived whole.

A connection between requests (a keep-alive connection the terminal will reuse) is *not*
waiting: uvicorn's keep-alive timeout governs it, and closing it early could cut a POST the
client is about to send on it.

Both of uvicorn's HTTP/1.1 implementations get the same rule: httptools (the one normally used)
through its parser callbacks, h11 (the fallback) from the parser's state after each read.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from typing import Any, Protocol

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

#: Seconds a connection may take to send a request's headers (from connecting, or from the
#: request's first byte on a kept-alive connection).
HEADER_SECONDS = 10.0
#: Connections that may wait for their headers at once; beyond, the longest-waiting is closed.
#: Well under uvicorn's ``limit_concurrency`` (512), so real requests still find a seat.
MAX_WAITING = 256


class _Waiting:
    """The connections of one server still waiting for their headers, oldest first."""

    def __init__(self) -> None:
        self.order: OrderedDict[_Deadline, asyncio.TimerHandle] = OrderedDict()


_by_server: weakref.WeakKeyDictionary[ServerState, _Waiting] = weakref.WeakKeyDictionary()


class _Transport(Protocol):
    def is_closing(self) -> bool: ...

    def close(self) -> None: ...


class _Deadline:
    """The rule, shared by both protocol classes (mixed in before uvicorn's)."""

    header_seconds: float = HEADER_SECONDS
    max_waiting: int = MAX_WAITING
    #: Set by uvicorn's protocol ``__init__`` / ``connection_made``.
    server_state: ServerState
    transport: Any
    loop: asyncio.AbstractEventLoop

    def _waiting(self) -> _Waiting:
        waiting = _by_server.get(self.server_state)
        if waiting is None:
            waiting = _by_server[self.server_state] = _Waiting()
        return waiting

    def _start_waiting(self) -> None:
        """The clock starts (once per request) for this connection's headers."""
        order = self._waiting().order
        if self in order:
            return
        order[self] = self.loop.call_later(self.header_seconds, self._too_slow)
        while len(order) > self.max_waiting:
            oldest, handle = order.popitem(last=False)
            handle.cancel()
            oldest._close()

    def _stop_waiting(self) -> None:
        """The headers are in (or the connection is gone)."""
        handle = self._waiting().order.pop(self, None)
        if handle is not None:
            handle.cancel()

    def _too_slow(self) -> None:
        self._waiting().order.pop(self, None)
        self._close()

    def _close(self) -> None:
        transport: _Transport | None = self.transport
        if transport is not None and not transport.is_closing():
            transport.close()


def _httptools_class() -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class HeaderDeadlineHttpTools(_Deadline, HttpToolsProtocol):
        """httptools with the header deadline: llhttp calls ``on_message_begin`` at a request's
        first byte and ``on_headers_complete`` at its blank line."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._start_waiting()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._start_waiting()

        def on_headers_complete(self) -> None:
            self._stop_waiting()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

    return HeaderDeadlineHttpTools


class HeaderDeadlineH11(_Deadline, H11Protocol):
    """h11 with the header deadline: after each read, a connection whose parser is still idle
    with bytes in hand is mid-headers; any later state means the headers are in."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_waiting()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._stop_waiting()
        elif self.conn.trailing_data[0]:
            self._start_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)


def protocol_class(
    implementation: str, *, header_seconds: float = HEADER_SECONDS, max_waiting: int = MAX_WAITING
) -> type[asyncio.Protocol]:
    """uvicorn's ``implementation`` ("httptools" or "h11") with the header deadline."""
    base = _httptools_class() if implementation == "httptools" else HeaderDeadlineH11
    settings = {"header_seconds": header_seconds, "max_waiting": max_waiting}
    return type(base.__name__, (base,), settings)
