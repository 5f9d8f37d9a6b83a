"""Sandbox throughput: requests per second for top of book and for limit orders.

Run: ``.venv/bin/python -m tests.perf.bench_sandbox [--requests N] [--concurrency C]``.
Starts a real sandbox process (file database, as users run it) and drives it over loopback
with httpx from this process; client and server share the machine's cores, so the figures are
a floor for a dedicated server. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from tests.harness import SandboxProcess, digest, new_client


async def measure(
    name: str, total: int, concurrency: int, call: Callable[[int], Awaitable[httpx.Response]]
) -> None:
    latencies: list[float] = []
    failures = 0
    counter = iter(range(total))

    async def worker() -> None:
        nonlocal failures
        for index in counter:
            started = time.perf_counter()
            response = await call(index)
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                failures += 1

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - began
    ordered = sorted(latencies)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    print(
        f"{name:<28} {total:>6} requests, {concurrency:>3} concurrent: "
        f"{total / elapsed:8.0f} req/s, p50 {statistics.median(ordered) * 1000:6.2f} ms, "
        f"p99 {p99 * 1000:6.2f} ms, non-200 {failures}"
    )


async def run(url: str, account: str, user: str, requests: int, concurrency: int) -> None:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as http:
        login = await http.post(
            "/api/v1/identity/jwt", json={"user": user, "password": digest(user)}
        )
        http.headers["Authorization"] = f"Bearer {login.json()['token']}"
        tob = f"/api/v1/routing/account/{account}/topofbook"
        pairs = {"assetPairs": "BTC/USD,ETH/USD,SOL/USD,BTC/USDT,ETH/BTC,USDT/USD"}
        await measure("warm-up", 200, concurrency, lambda _: http.get(tob, params=pairs))
        await measure(
            "top of book (6 pairs)", requests, concurrency, lambda _: http.get(tob, params=pairs)
        )
        order_path = f"/api/v1/routing/account/{account}/order/limit"

        def order(index: int) -> Awaitable[httpx.Response]:
            return http.post(
                order_path,
                json={
                    "accountId": {"value": account},
                    "type": "limit",
                    "source": "BTC",
                    "destination": "USD",
                    "size": "0.0001",
                    "clientOrderId": f"bench-{index}",
                },
            )

        await measure("limit order (fills)", requests, concurrency, order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sandbox = SandboxProcess(db=str(Path(folder) / "bench.db")).start()
        try:
            session = new_client(sandbox, balances={"BTC": "1000", "USD": "1000"})
            session.close()
            asyncio.run(
                run(sandbox.url, session.account, session.user, args.requests, args.concurrency)
            )
        finally:
            sandbox.close()


if __name__ == "__main__":
    main()
