"""Sandbox throughput: requests per second for top of book and for limit orders.

Run: ``.venv/bin/python -m tests.perf.bench_sandbox [--requests N] [--concurrency C]``.
Starts a real sandbox process (file database, as users run it) and drives it over loopback
with keep-alive connections speaking raw HTTP/1.1 (cheaper than httpx, so the figures are the
server's, not the load generator's). Client and server share the machine's two cores.

The same run measures a ceiling first: a hello-JSON Starlette app served by uvicorn with the
sandbox's settings (:mod:`tests.perf.hello_server`), driven by the same client loop with the same
headers; top of book is then given as a fraction of it (the target: at least 0.7).
Hello and top of book alternate in rounds (medians compared). Prints figures and one JSON line
last; asserts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx

from tests.harness import bench_sandbox, digest
from tests.perf import hello_server
from tests.perf.options import bench_parser


class RawConnection:
    """A keep-alive HTTP/1.1 connection speaking just enough HTTP to time the server: httpx
    costs more CPU per request than the sandbox does, and would measure itself."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str) -> RawConnection:
        host, port = url.removeprefix("http://").split(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def send(self, request: bytes) -> int:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        self.writer.close()


def get(path: str, token: str) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n\r\n").encode()


def post(path: str, token: str, payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def measure(
    name: str, url: str, total: int, concurrency: int, request: Callable[[int], bytes]
) -> float:
    latencies: list[float] = []
    failures = 0
    counter = iter(range(total))

    async def worker() -> None:
        nonlocal failures
        connection = await RawConnection.open(url)
        for index in counter:
            payload = request(index)
            started = time.perf_counter()
            status = await connection.send(payload)
            latencies.append(time.perf_counter() - started)
            failures += status != 200
        connection.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - began
    ordered = sorted(latencies)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    print(
        f"{name:<28} {total:>6} requests, {concurrency:>3} connections: "
        f"{total / elapsed:8.0f} req/s, p50 {statistics.median(ordered) * 1000:6.2f} ms, "
        f"p99 {p99 * 1000:6.2f} ms, non-200 {failures}"
    )
    return total / elapsed


@contextlib.contextmanager
def hello_process() -> Iterator[str]:
    """The ceiling's server in a child process; its URL while it runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.perf.hello_server"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith(hello_server.PREFIX):
            raise RuntimeError(f"hello server did not start: {line!r}")
        yield line.removeprefix(hello_server.PREFIX).strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def login(url: str, user: str) -> str:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        answer = await http.post(
            "/api/v1/identity/jwt", json={"user": user, "password": digest(user)}
        )
        token: str = answer.json()["token"]
        return token


async def run(
    hello_url: str, url: str, account: str, user: str, requests: int, concurrency: int, rounds: int
) -> dict[str, float]:
    """Hello and top of book in alternating rounds, both servers up all along: the machine's
    load changes from second to second, and a ceiling measured once, before, made the ratio
    swing from 0.5 to 0.96 between two runs. The median of each is compared."""
    token = await login(url, user)
    hello = get("/hello", "x" * len(token))  # the same header sizes as top of book's
    pairs = "BTC/USD,ETH/USD,SOL/USD,BTC/USDT,ETH/BTC,USDT/USD"
    tob = get(f"/api/v1/routing/account/{account}/topofbook?assetPairs={pairs}", token)
    await measure("warm-up hello", hello_url, 300, concurrency, lambda _: hello)
    await measure("warm-up top of book", url, 300, concurrency, lambda _: tob)
    ceilings: list[float] = []
    tops: list[float] = []
    for _ in range(rounds):
        ceilings.append(
            await measure("hello JSON (ceiling)", hello_url, requests, concurrency, lambda _: hello)
        )
        tops.append(
            await measure("top of book (6 pairs)", url, requests, concurrency, lambda _: tob)
        )
    ceiling, top = statistics.median(ceilings), statistics.median(tops)
    print(f"{'median ceiling':<28} {ceiling:8.0f} req/s")
    print(f"{'median top of book':<28} {top:8.0f} req/s")
    print(f"{'top of book / ceiling':<28} {top / ceiling:.2f}")
    order_path = f"/api/v1/routing/account/{account}/order/limit"

    def order(index: int) -> bytes:
        return post(
            order_path,
            token,
            {
                "accountId": {"value": account},
                "type": "limit",
                "source": "BTC",
                "destination": "USD",
                "size": "0.0001",
                "clientOrderId": f"bench-{index}",
            },
        )

    orders = await measure("limit order (fills)", url, requests, concurrency, order)
    return {
        "hello_rps": round(ceiling),
        "top_of_book_rps": round(top),
        "ratio": round(top / ceiling, 2),
        "limit_order_rps": round(orders),
    }


def main() -> None:
    args = bench_parser(__doc__, requests=3000, concurrency=16, rounds=5).parse_args()
    with (
        hello_process() as hello_url,
        bench_sandbox({"BTC": "1000", "USD": "1000"}) as (sandbox, session),
    ):
        figures = asyncio.run(
            run(
                hello_url,
                sandbox.url,
                session.account,
                session.user,
                args.requests,
                args.concurrency,
                args.rounds,
            )
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
