"""Idle top-of-book latency with no resting orders and with many (the matcher must
stay off the hot path: a pass that held the event loop would delay every poll).

Run: ``.venv/bin/python -m tests.perf.bench_matcher [--resting N] [--seconds S]``.
Starts a real sandbox process (file database, as users run it), measures top of book for
``--seconds`` (one request every 20 ms on one keep-alive connection: an idle terminal's feed,
not a load test), then places ``--resting`` limit orders far from the market through the API
(they rest for ever) and measures again. A matcher pass that holds the event loop shows as the
p99 and max. Prints a table, then one JSON line; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import httpx

from tests.harness import bench_sandbox, digest
from tests.perf.bench_sandbox import RawConnection, get, post

#: (source, destination, limit): never marketable at the simulated prices.
FAR_ORDERS = (
    ("BTC", "USD", "900000000"),
    ("ETH", "USD", "900000000"),
    ("SOL", "USD", "900000000"),
    ("USD", "BTC", "1"),
    ("USD", "ETH", "1"),
)
SIZES = {"BTC": "0.0001", "ETH": "0.001", "SOL": "0.01", "USD": "1"}


async def idle_latency(url: str, path: bytes, seconds: float) -> dict[str, float]:
    """Latency of one request every 20 ms for ``seconds``, in milliseconds."""
    connection = await RawConnection.open(url)
    latencies: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        status = await connection.send(path)
        latencies.append(time.perf_counter() - started)
        assert status == 200, status
        await asyncio.sleep(0.02)
    connection.close()
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


async def place_far(url: str, account: str, token: str, count: int, concurrency: int) -> int:
    """``count`` resting limit orders through the API; returns how many rested."""
    counter = iter(range(count))
    rested = 0
    statuses: dict[int, int] = {}
    order_path = f"/api/v1/routing/account/{account}/order/limit"

    async def worker() -> None:
        nonlocal rested
        connection = await RawConnection.open(url)
        for index in counter:
            source, destination, limit = FAR_ORDERS[index % len(FAR_ORDERS)]
            payload: dict[str, object] = {
                "accountId": {"value": account},
                "type": "limit",
                "source": source,
                "destination": destination,
                "size": SIZES[source],
                "limit": limit,
                "clientOrderId": f"far-{index}",
            }
            status = await connection.send(post(order_path, token, payload))
            statuses[status] = statuses.get(status, 0) + 1
            rested += status == 200
        connection.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    if set(statuses) != {200}:
        print(f"answers while placing: {statuses}")
    return rested


async def run(url: str, account: str, user: str, resting: int, seconds: float) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        login = await http.post(
            "/api/v1/identity/jwt", json={"user": user, "password": digest(user)}
        )
        token = login.json()["token"]
    tob = get(f"/api/v1/routing/account/{account}/topofbook?assetPairs=BTC/USD,ETH/USD", token)
    await idle_latency(url, tob, 1.0)  # warm-up
    empty = await idle_latency(url, tob, seconds)
    began = time.perf_counter()
    rested = await place_far(url, account, token, resting, 8)
    placing = time.perf_counter() - began
    await idle_latency(url, tob, 1.0)  # let the placing settle
    full = await idle_latency(url, tob, seconds)
    print(f"placed {rested} resting orders in {placing:.1f} s")
    print(f"{'resting orders':>15} {'requests':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for count, figures in ((0, empty), (rested, full)):
        print(
            f"{count:>15} {figures['requests']:>9.0f} {figures['p50_ms']:>8.2f} "
            f"{figures['p99_ms']:>8.2f} {figures['max_ms']:>8.2f}"
        )
    print(
        json.dumps(
            {
                "benchmark": "matcher",
                "resting": rested,
                "idle_p99_ms_empty": empty["p99_ms"],
                "idle_p99_ms_resting": full["p99_ms"],
                "idle_max_ms_empty": empty["max_ms"],
                "idle_max_ms_resting": full["max_ms"],
                "place_seconds": round(placing, 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--resting", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    balances = {"BTC": "1000", "ETH": "10000", "SOL": "100000", "USD": "10000000"}
    with bench_sandbox(balances) as (sandbox, session):
        asyncio.run(run(sandbox.url, session.account, session.user, args.resting, args.seconds))


if __name__ == "__main__":
    main()
