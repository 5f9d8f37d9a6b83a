"""Time from launch to the first painted price with ``--sandbox`` (offscreen).

Run: ``.venv/bin/python -m tests.perf.bench_launch [--runs N]``. Each run starts
``python -m app --sandbox --smoke-test`` in a fresh config and data folder (so the sandbox
seeds a new database, as on a first launch) and reads the figure the app prints (measured from
the moment the ``app`` package was imported); also prints the whole process's wall time, then
one JSON line (``median_s``, ``min_s``, ``max_s``, ``process_median_s``). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from tests.harness import launch, user_env


def one_run() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        done = launch("--sandbox", "--smoke-test", env=user_env(Path(home)), timeout=120)
        wall = time.perf_counter() - started
    match = re.search(r"first price painted ([0-9.]+) s after launch", done.stdout)
    if done.returncode != 0 or match is None:
        raise SystemExit(f"run failed ({done.returncode}): {done.stdout} {done.stderr[-500:]}")
    return float(match.group(1)), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    painted, walls = zip(*(one_run() for _ in range(args.runs)), strict=True)
    print(
        f"launch to first painted price (--sandbox, offscreen), {args.runs} runs: "
        f"median {statistics.median(painted):.2f} s, min {min(painted):.2f} s, "
        f"max {max(painted):.2f} s"
    )
    print(
        f"whole process incl. interpreter start and clean exit: median "
        f"{statistics.median(walls):.2f} s"
    )
    figures = {
        "median_s": round(statistics.median(painted), 3),
        "min_s": round(min(painted), 3),
        "max_s": round(max(painted), 3),
        "process_median_s": round(statistics.median(walls), 3),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
