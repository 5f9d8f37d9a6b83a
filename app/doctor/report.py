"""Run every check of ``tradeterm doctor`` and print them as one table.

The Qt probe (a child process, about a second) runs while the other checks do; the service
and the sandbox are asked concurrently too. A check's advice is printed under its row.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from collections.abc import Awaitable, Callable, Sequence

from app.doctor import checks
from app.doctor.checks import Check, Status, Terminal

OK, FAILED = 0, 1


def run(args: argparse.Namespace, terminal: Terminal) -> int:
    url = args.url or _env_url()
    try:
        found = asyncio.run(_all(url, args.sandbox_db, terminal))
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    sys.stdout.write(render(found) + "\n")
    failed = [check.name for check in found if check.status == "FAIL"]
    if failed:
        sys.stdout.write(f"\n{len(failed)} check(s) failed: {', '.join(failed)}\n")
        return FAILED
    return OK


def _env_url() -> str | None:
    """TRADETERM_BASE_URL when it is a usable URL (a broken one is the CLI's to report)."""
    from app.cli.credentials import checked_url
    from app.cli.errors import UsageError

    text = os.environ.get("TRADETERM_BASE_URL", "").strip()
    try:
        return checked_url(text) if text else None
    except UsageError:
        return None


async def _all(url: str | None, sandbox_db: str | None, terminal: Terminal) -> list[Check]:
    probe = asyncio.ensure_future(checks.run_probe())
    sandbox = asyncio.ensure_future(checks.sandbox_check(sandbox_db))
    service = asyncio.ensure_future(checks.service_check(url)) if url else None
    local = await asyncio.to_thread(_local_checks, terminal)
    try:
        found = await probe
    except OSError as exc:  # the child could not even be started
        found = checks.Probe(1, {}, None, f"cannot start {checks.probe_command()}: {exc}")
    rows = [checks.platform_check(found), *checks.font_checks(found), *local]
    rows.append(await _guarded_async("Sandbox database", sandbox))
    if service is not None:
        rows.append(await _guarded_async("Service URL", service))
    return rows


def _local_checks(terminal: Terminal) -> list[Check]:
    """The keyring (which may ask D-Bus) and the folders, off the event loop."""
    rows = [_guarded("Keyring", lambda: checks.keyring_check(terminal.keyring()), "WARN")]
    for name, path in checks.app_folders(terminal.config_dir()):
        rows.append(_guarded(name, functools.partial(checks.folder_check, name, path)))
    return rows


def _guarded(name: str, check: Callable[[], Check], status: Status = "FAIL") -> Check:
    """One check that broke is one row saying so: the other rows still answer."""
    try:
        return check()
    except Exception as exc:
        return _broken(name, exc, status)


async def _guarded_async(name: str, check: Awaitable[Check]) -> Check:
    try:
        return await check
    except Exception as exc:
        return _broken(name, exc, "FAIL")


def _broken(name: str, exc: Exception, status: Status) -> Check:
    return Check(name, status, f"could not be checked: {type(exc).__name__}: {exc}")


def render(rows: Sequence[Check]) -> str:
    """CHECK, STATUS, DETAIL columns; advice lines indented under the detail."""
    width = max(len("CHECK"), *(len(row.name) for row in rows))
    indent = " " * (width + 2 + len("STATUS") + 2)
    lines = [f"{'CHECK'.ljust(width)}  STATUS  DETAIL"]
    for row in rows:
        lines.append(f"{row.name.ljust(width)}  {row.status.ljust(6)}  {row.detail}")
        lines += [f"{indent}-> {advice}" for advice in row.advice]
    return "\n".join(lines)
