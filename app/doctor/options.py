"""The ``tradeterm doctor`` options: declared without importing Qt or the HTTP client, so
``tradeterm --help`` stays fast."""

from __future__ import annotations

import argparse

from app.cli.credentials import checked_url
from app.cli.errors import UsageError


def service_url(text: str) -> str:
    """An http(s) URL with a host, or a usage error (exit 2)."""
    try:
        return checked_url(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Check that this machine can run Tradeterm: the Qt platform plugin (naming missing "
        "system libraries), fonts and themes, the keyring, the config/data/log folders and "
        "their permissions, the sandbox database, and the service with --url. Exits 1 when a "
        "check fails."
    )
    parser.add_argument(
        "--url",
        type=service_url,
        metavar="URL",
        help="also check that the trading service answers at URL (default: env "
        "TRADETERM_BASE_URL when set)",
    )
    parser.add_argument(
        "--sandbox-db",
        metavar="PATH",
        help="the sandbox database to check (default: sandbox.db in the user data folder)",
    )
    parser.add_argument(
        "--qt-probe",
        action="store_true",
        help="internal: start Qt in this process and print what it found (the doctor runs "
        "this in a child process)",
    )
