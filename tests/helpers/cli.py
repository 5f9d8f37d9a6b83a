"""The command line run as a trader runs it, and reading its tables."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.harness import Session


@dataclass
class Cli:
    """Runs ``python -m app api ...`` with a client's credentials in the environment."""

    url: str
    session: Session | None = None

    def env(self, **overrides: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARS}
        env["TRADETERM_BASE_URL"] = self.url
        if self.session is not None:
            env["TRADETERM_USER"] = self.session.user
            env["TRADETERM_PASSWORD"] = self.session.password
            env["TRADETERM_ACCOUNT"] = self.session.account
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def __call__(self, *argv: str, **env: str | None) -> Run:
        proc = subprocess.run(
            [sys.executable, "-m", "app", "api", *argv],
            cwd=ROOT,
            env=self.env(**env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        run = Run(tuple(argv), proc.returncode, proc.stdout, proc.stderr)
        assert "Traceback" not in run.err, run
        if self.session is not None:
            assert self.session.password not in run.out + run.err, run
        return run

    def many(self, *jobs: Sequence[str] | Job) -> list[Run]:
        """Independent invocations in parallel, results in the given order."""

        def start(job: Sequence[str] | Job) -> Run:
            return self(*job.argv, **job.env) if isinstance(job, Job) else self(*job)

        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            return list(pool.map(start, jobs))


def column_values(text: str, header: str) -> dict[str, str]:
    """First cell -> the cell under the numeric column ``header``."""
    return {key: cell for key, (_, cell) in numeric_cells(text, header).items()}


ROOT = Path(__file__).resolve().parents[2]


CREDENTIAL_VARS = (
    "TRADETERM_BASE_URL",
    "TRADETERM_USER",
    "TRADETERM_PASSWORD",
    "TRADETERM_ACCOUNT",
)


@dataclass(frozen=True)
class Run:
    argv: tuple[str, ...]
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out, parse_float=Decimal)


@dataclass(frozen=True)
class Job:
    """An invocation with environment overrides (None removes a variable)."""

    argv: Sequence[str]
    env: dict[str, str | None]


def numeric_cells(text: str, header: str) -> dict[str, tuple[int, str]]:
    """First cell -> (where it starts, the cell under ``header``) of a numeric column: the
    column is right-aligned under its header and its numbers aligned on the decimal point, so
    each value ends at or before the header's right edge, padded to it with spaces."""
    lines = [line for line in text.splitlines() if line.strip()]
    pattern = re.compile(rf"(?:^|  ){re.escape(header)}(?=  |$)")
    head_index = next(i for i, line in enumerate(lines) if pattern.search(line))
    right = pattern.search(lines[head_index]).end()  # type: ignore[union-attr]
    found = {}
    for line in lines[head_index + 1 :]:
        assert len(line) <= right or line[right : right + 1] == " ", (header, line)
        cell = line[:right].rstrip().split("  ")[-1].strip()
        found[line.split()[0]] = (line.rindex(cell, 0, right), cell)
    return found
