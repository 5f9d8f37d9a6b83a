"""The fault matrix: how fast the terminal's connection health sees each fault and its end.

Run: ``.venv/bin/python -m tests.perf.bench_faults [--faults down,blackhole,...] [--cap S]``.
Starts a real sandbox (a database file, so it can come back on the same port) behind the
loopback proxy of ``tests/proxy.py``, opens a session as the app does (``connect``, default
feed intervals: top of book 0.5 s, balances 5 s, order book 1 s) and, per fault, measures from
the moment the fault is switched on: seconds to DEGRADED (the first state that is not live),
to OFFLINE, and, from the moment it is switched off, to LIVE again; plus how often the state
changed while the fault was on (flapping). A phase not reached within ``--cap`` seconds shows
as ``>cap``. Prints a table and ends with one JSON line. Faults:

down        the sandbox process stopped (started again on the same port to clear)
blackhole   the proxy accepts and never answers
html502     the sandbox answers an HTML 502 page
5xx         the sandbox answers 503
429         the sandbox answers 429 with Retry-After: 1
slow2       the sandbox holds every request 2 s
slow10      the sandbox holds every request 10 s
malformed   the proxy answers 200 with truncated JSON
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.services.connect import connect
from app.services.health import Health, HealthState
from app.services.session import TerminalSession
from tests.harness import Faults, SandboxProcess, free_port
from tests.proxy import Proxy

FAULTS = ("down", "blackhole", "html502", "5xx", "429", "slow2", "slow10", "malformed")
SANDBOX_RULES: dict[str, dict[str, Any]] = {
    "html502": {"kind": "html", "status": 502},
    "5xx": {"kind": "status", "status": 503},
    "429": {"kind": "retry_after", "retryAfter": 1},
    "slow2": {"kind": "latency", "seconds": 2},
    "slow10": {"kind": "latency", "seconds": 10},
}
PROXY_MODES = {"blackhole": "blackhole", "malformed": "garble"}


@dataclass
class Measured:
    fault: str
    degraded: float | None  # seconds from fault on; None: not within the cap
    offline: float | None
    recovery: float | None  # seconds from fault off to live
    flips: int  # state changes while the fault was on


class Rig:
    """A sandbox on a fixed port with a database file, the proxy in front of it."""

    def __init__(self, folder: str) -> None:
        self.port = free_port()
        self.db = str(Path(folder) / "faults.db")
        self.sandbox = SandboxProcess("--port", str(self.port), db=self.db).start()
        self.proxy = Proxy(self.port).start()

    def switch_on(self, fault: str) -> None:
        if fault == "down":
            self.sandbox.stop()
        elif fault in PROXY_MODES:
            self.proxy.set_mode(PROXY_MODES[fault])
        else:
            Faults(self.sandbox)(SANDBOX_RULES[fault])

    def switch_off(self, fault: str) -> None:
        if fault == "down":
            self.sandbox.close()
            self.sandbox = SandboxProcess("--port", str(self.port), db=self.db).start()
        elif fault in PROXY_MODES:
            self.proxy.set_mode("forward")
        else:
            Faults(self.sandbox).clear()

    def close(self) -> None:
        self.proxy.close()
        self.sandbox.close()


async def _until(condition: Callable[[], bool], cap: float) -> float | None:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > cap:
            return None
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def measure(rig: Rig, fault: str, cap: float = 30.0) -> Measured:
    """One fault on a fresh session through ``rig``'s proxy."""
    terminal = await connect(rig.proxy.url, "demo", "demo", "demo", sandbox=True)
    session: TerminalSession = terminal.session
    states: list[tuple[float, Health]] = []

    def seen(state: HealthState) -> None:
        states.append((time.monotonic(), state.health))

    session.health.changes.subscribe(seen)
    await session.start()
    try:
        live = await _until(lambda: session.health.current.health == Health.LIVE, 30)
        if live is None:
            raise RuntimeError(f"{fault}: the session never went live")
        await asyncio.sleep(1.0)  # settled: every feed has polled
        on = time.monotonic()
        await asyncio.to_thread(rig.switch_on, fault)
        offline = await _until(lambda: session.health.current.health == Health.OFFLINE, cap)
        await asyncio.sleep(1.0)  # a little longer in the fault: flapping would show
        # state changes, not every new reason (which is published too, for the tooltip)
        during = [h for t, h in states if t >= on]
        during = [h for i, h in enumerate(during) if h != (during[i - 1] if i else Health.LIVE)]
        degraded_at = next((t for t, h in states if t >= on and h != Health.LIVE), None)
        offline_at = next((t for t, h in states if t >= on and h == Health.OFFLINE), None)
        await asyncio.to_thread(rig.switch_off, fault)
        off = time.monotonic()
        recovery = await _until(lambda: session.health.current.health == Health.LIVE, cap)
        return Measured(
            fault,
            None if degraded_at is None else degraded_at - on,
            None if offline is None or offline_at is None else offline_at - on,
            None if recovery is None else time.monotonic() - off,
            len(during),
        )
    finally:
        await terminal.aclose()


def _cell(value: float | None, cap: float) -> str:
    return f">{cap:g}" if value is None else f"{value:.2f}"


async def run(faults: list[str], cap: float) -> list[Measured]:
    results = []
    with tempfile.TemporaryDirectory() as folder:
        rig = Rig(folder)
        try:
            for fault in faults:
                results.append(await measure(rig, fault, cap))
                print(f"  measured {fault}", flush=True)
        finally:
            rig.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--cap", type=float, default=30.0, help="seconds to wait for a phase")
    args = parser.parse_args()
    faults = [f for f in args.faults.split(",") if f]
    unknown = set(faults) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults: {sorted(unknown)}")
    results = asyncio.run(run(faults, args.cap))
    print(f"{'fault':<11} {'degraded s':>10} {'offline s':>10} {'recovery s':>10} {'flips':>6}")
    for r in results:
        print(
            f"{r.fault:<11} {_cell(r.degraded, args.cap):>10} {_cell(r.offline, args.cap):>10} "
            f"{_cell(r.recovery, args.cap):>10} {r.flips:>6}"
        )
    print(json.dumps({"bench": "faults", "cap": args.cap, "results": [asdict(r) for r in results]}))


if __name__ == "__main__":
    main()
