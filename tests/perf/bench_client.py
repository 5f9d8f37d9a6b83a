"""The service client's overhead per call against a bare httpx request to the same endpoint.

Run: ``.venv/bin/python -m tests.perf.bench_client [--calls N]``. Starts a real sandbox, then
times, alternating in rounds so drift hits both alike: ``httpx.AsyncClient.get`` of top of book
(no parsing beyond the bytes) and ``ServiceClient.top_of_book`` (auth header, error mapping,
Decimal JSON decoding, domain values). Prints medians and the difference; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx

from app.api import ClientSettings, ServiceClient
from tests.harness import SandboxProcess, digest

PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "BTC/USDT", "ETH/BTC", "USDT/USD"]


async def run(url: str, calls: int) -> None:
    client = ServiceClient(ClientSettings(url))
    await client.login("demo", "demo", "demo")
    async with httpx.AsyncClient(base_url=url) as bare:
        token = (
            await bare.post(
                "/api/v1/identity/jwt", json={"user": "demo", "password": digest("demo")}
            )
        ).json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        params = {"assetPairs": ",".join(PAIRS)}
        path = "/api/v1/routing/account/demo/topofbook"
        bare_times: list[float] = []
        client_times: list[float] = []
        for _ in range(50):  # warm-up: connections, caches
            await bare.get(path, params=params, headers=headers)
            await client.top_of_book(PAIRS)
        for _ in range(calls):
            started = time.perf_counter()
            response = await bare.get(path, params=params, headers=headers)
            response.read()
            bare_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            await client.top_of_book(PAIRS)
            client_times.append(time.perf_counter() - started)
    await client.aclose()
    bare_median = statistics.median(bare_times) * 1000
    client_median = statistics.median(client_times) * 1000
    print(f"top of book, 6 pairs, {calls} calls each, sequential on one keep-alive connection")
    print(f"bare httpx GET      median {bare_median:7.3f} ms")
    print(f"ServiceClient call  median {client_median:7.3f} ms")
    print(f"client overhead     median {client_median - bare_median:7.3f} ms per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    sandbox = SandboxProcess().start()
    try:
        asyncio.run(run(sandbox.url, args.calls))
    finally:
        sandbox.close()


if __name__ == "__main__":
    main()
