"""Run every check of ``tradeterm doctor`` and print them as one table.

The Qt probe (a child process, about a second) runs while the other checks do; the service
and the sandbox are asked concurrently too. A check's advice is printed under its row.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from app.doctor import checks
from app.doctor.checks import Check, Terminal

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
    found = await probe
    rows = [checks.platform_check(found), *checks.font_checks(found), *local]
    rows.append(await sandbox)
    if service is not None:
        rows.append(await service)
    return rows


def _local_checks(terminal: Terminal) -> list[Check]:
    """The keyring (which may ask D-Bus) and the folders, off the event loop."""
    rows = [checks.keyring_check(terminal.keyring())]
    folders = checks.app_folders(terminal.config_dir())
    return rows + [checks.folder_check(name, path) for name, path in folders]


def render(rows: Sequence[Check]) -> str:
    """CHECK, STATUS, DETAIL columns; advice lines indented under the detail."""
    width = max(len("CHECK"), *(len(row.name) for row in rows))
    indent = " " * (width + 2 + len("STATUS") + 2)
    lines = [f"{'CHECK'.ljust(width)}  STATUS  DETAIL"]
    for row in rows:
        lines.append(f"{row.name.ljust(width)}  {row.status.ljust(6)}  {row.detail}")
        lines += [f"{indent}-> {advice}" for advice in row.advice]
    return "\n".join(lines)
