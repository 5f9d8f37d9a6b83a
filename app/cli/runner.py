"""Run parsed arguments end to end and turn every outcome into an exit code and a clean message.

0 done; 1 the service refused or failed; 2 usage error; 3 network error, timeout or an order
whose outcome is unknown. Nothing escapes as a traceback: a script gets a code and one
``error:`` line on stderr, a trader gets a sentence.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from app.api import ClientSettings, NetworkError, OutcomeUnknown, ServiceClient, ServiceError
from app.cli import commands, credentials
from app.cli.errors import UsageError
from app.cli.output import to_json

OK, FAILED, USAGE, NETWORK = 0, 1, 2, 3
INTERRUPTED = 130
CONNECT_TIMEOUT = 5.0


def run(args: argparse.Namespace, source: credentials.Source | None = None) -> int:
    """Run parsed arguments (from app.cli.main or the ``tradeterm api`` subparser)."""
    quiet_logging(args.verbose)
    try:
        commands.check(args)
        output = asyncio.run(_execute(args, source or credentials.Source()))
        if output.note:
            sys.stderr.write(output.note + "\n")
        _print(to_json(output.data) if args.json else output.text)
        return OK
    except UsageError as exc:
        return fail(USAGE, str(exc))
    except OutcomeUnknown as exc:
        note = f" (clientOrderId {exc.client_order_id})" if exc.client_order_id else ""
        return fail(NETWORK, f"outcome unknown: {exc}{note}")
    except NetworkError as exc:
        return fail(NETWORK, str(exc))
    except ServiceError as exc:
        return fail(FAILED, str(exc))
    except KeyboardInterrupt:
        return fail(INTERRUPTED, "interrupted")
    except BrokenPipeError:
        silence_stdout()
        return OK
    except Exception as exc:  # the promise: no traceback ever reaches the user
        return fail(FAILED, f"internal error: {type(exc).__name__}: {exc}")


async def _execute(args: argparse.Namespace, source: credentials.Source) -> commands.Output:
    """Credentials are gathered before connecting, so a missing one costs no round trip."""
    url = credentials.base_url(args.base_url, source)
    login = credentials.login(source) if args.login else None
    settings = ClientSettings(
        url, connect_timeout=min(CONNECT_TIMEOUT, args.timeout), read_timeout=args.timeout
    )
    async with ServiceClient(settings) as client:
        if login is not None:
            await client.login(login.user, login.password, login.account)
        return await commands.handler(args.api_command)(client, args)


def _print(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def fail(code: int, message: str) -> int:
    one_line = " ".join(message.split())
    try:
        sys.stderr.write(f"error: {one_line}\n")
        sys.stderr.flush()
    except OSError:
        pass
    return code


def silence_stdout() -> None:
    """After the reader of a pipe left (``| head``), keep Python from complaining at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = " ".join(record.getMessage().split())
        return f"note: {text}"


def quiet_logging(verbose: int) -> None:
    """The client logs through ``tradeterm.api``; show its warnings as one-line notes (and,
    with -v, its retries) instead of Python's default handler, never with a traceback."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    logger = logging.getLogger("tradeterm")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(
        logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG
    )
