"""``python -m app sandbox``: run the embedded sandbox until SIGTERM or Ctrl-C.

Prints exactly one line, ``Sandbox listening on http://HOST:PORT``, to stdout once it accepts
connections (``--port 0`` picks a free port), so a parent process can read the URL.

``python -m app sandbox rotate-key --db PATH`` writes the next signing key of that database and
exits (see :mod:`app.sandbox.keyfile`). The admin token is read from env
``TRADETERM_SANDBOX_ADMIN_TOKEN`` or ``--admin-token-file``, never from argv (``ps`` shows argv).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import math
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import platformdirs
import uvicorn
from starlette.types import ASGIApp

from app.sandbox.config import CreditHours, SandboxConfig
from app.sandbox.connections import HEADER_SECONDS, protocol_class
from app.sandbox.keyfile import private_folder_for, rotate_key
from app.sandbox.server import create_app
from app.sandbox.store import DatabaseInUse

ADMIN_ENV = "TRADETERM_SANDBOX_ADMIN_TOKEN"


def default_db_path() -> str:
    folder = Path(platformdirs.user_data_dir("tradeterm", appauthor=False))
    return str(folder / "sandbox.db")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite file, or :memory: (default: sandbox.db in the user data dir)",
    )
    parser.add_argument(
        "--token-ttl",
        type=float,
        default=86400.0,
        metavar="SECONDS",
        help="token lifetime (default 86400 = 24 h)",
    )
    parser.add_argument(
        "--quote-ttl",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="RFQ quote validity (default 10)",
    )
    parser.add_argument(
        "--credit-hours",
        default="always",
        metavar="always|never|SCHEDULE",
        help="when credit is granted, e.g. 'Mon-Fri 09:00-17:00 America/New_York'",
    )
    parser.add_argument("--seed", type=int, default=1, help="market simulation seed (default 1)")
    parser.add_argument(
        "--tick", type=float, default=0.25, metavar="SECONDS", help="market tick (default 0.25)"
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="a request body slower than this is cut with 408 (default 5)",
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="a connection slower than this to send its request headers is closed (default 10)",
    )
    add_admin_arguments(parser)


def add_admin_arguments(parser: argparse.ArgumentParser) -> None:
    """The admin token comes from the environment or a file, never the command line, where
    ``ps`` shows it to every user of the machine; the action word runs a maintenance task."""
    parser.add_argument(
        "action",
        nargs="?",
        choices=("serve", "rotate-key"),
        default="serve",
        help="serve (default), or rotate-key: write a new signing key for --db (every token "
        "issued so far stops working, in a running sandbox too)",
    )
    parser.add_argument(
        "--admin-token-file",
        metavar="PATH",
        help=f"enable the test-only admin routes with the token in this file (or env {ADMIN_ENV})",
    )
    # Refused with a pointer, so an old script is not parsed as --admin-token-file by prefix.
    parser.add_argument("--admin-token", help=argparse.SUPPRESS)


def admin_token_from(args: argparse.Namespace) -> str | None:
    """The admin token from ``--admin-token-file`` or env ``TRADETERM_SANDBOX_ADMIN_TOKEN``
    (taken out of the environment as it is read, so no child inherits it)."""
    if args.admin_token is not None:
        raise ValueError(
            f"--admin-token is gone (ps shows it to everyone); set {ADMIN_ENV} or use "
            "--admin-token-file PATH"
        )
    from_env = os.environ.pop(ADMIN_ENV, None)
    if args.admin_token_file:
        try:
            token = Path(args.admin_token_file).read_text().strip()
        except OSError as exc:
            raise ValueError(f"cannot read --admin-token-file: {exc.strerror}") from None
        if not token:
            raise ValueError("--admin-token-file is empty")
        return token
    return from_env or None


def rotate(args: argparse.Namespace) -> int:
    """``tradeterm sandbox rotate-key --db PATH``: the next key generation for that database."""
    db = args.db or default_db_path()
    try:
        key = rotate_key(db)
    except (ValueError, OSError) as exc:
        print(f"error: cannot rotate the key: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ValueError) else 1
    print(f"Signing key rotated to generation {key.generation}: every earlier token is void")
    return 0


def config_from(args: argparse.Namespace) -> SandboxConfig:
    for name in ("token_ttl", "quote_ttl", "tick", "body_timeout", "header_timeout"):
        value = getattr(args, name)
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be a positive number of seconds")
    if not 0 <= args.port <= 65535:
        raise ValueError("--port must be between 0 and 65535")
    admin_token = admin_token_from(args)
    db = args.db or default_db_path()
    private_folder_for(db, tighten=args.db is None)
    return SandboxConfig(
        db_path=db,
        token_ttl=args.token_ttl,
        quote_ttl=args.quote_ttl,
        credit_hours=CreditHours.parse(args.credit_hours),
        seed=args.seed,
        tick_seconds=args.tick,
        body_timeout=args.body_timeout,
        header_timeout=args.header_timeout,
        admin_token=admin_token,
    )


class _Server(uvicorn.Server):
    """uvicorn's server, but a SIGTERM/SIGINT ends it with exit code 0 instead of re-raising."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        originals = {sig: signal.signal(sig, self._stop) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    def _stop(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True


def http_protocol() -> str:
    """uvicorn's HTTP/1.1 implementation for the sandbox: ``httptools`` when it imports, else
    ``h11``.

    httptools (llhttp, in C) parses a request in a fraction of what the pure-Python h11 costs:
    h11 was a fifth of the sandbox's CPU on top of book, and httptools took it from 643–1,061
    to 1,326–1,388 requests/s (``tests/perf/bench_sandbox.py``). It is a dependency, so it is
    normally there; h11 is
    the fallback because it always is (uvicorn requires it) and speaks the same HTTP, only
    slower — a platform without an httptools wheel, or a bundle that missed its compiled
    modules, still gets a working sandbox. Named explicitly rather than left to uvicorn's
    ``"auto"`` (which makes the same choice) so the choice is ours and a test can see it.
    """
    try:
        importlib.import_module("httptools")
    except ImportError:
        return "h11"
    return "httptools"


#: Connections and requests the sandbox serves at once (uvicorn answers 503 beyond).
MAX_CONCURRENCY = 512


def uvicorn_config(
    application: ASGIApp, keep_alive: float, header_seconds: float = HEADER_SECONDS
) -> uvicorn.Config:
    """The sandbox's uvicorn settings (also the bench's hello-JSON ceiling's)."""
    return uvicorn.Config(
        application,
        # a deadline for headers and a cap on connections waiting for them (connections.py)
        http=protocol_class(http_protocol(), header_seconds=header_seconds),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=int(keep_alive),
        # X-Forwarded-For is a client's word: believed, it would make every login a new
        # address to the throttle. The sandbox is not run behind a proxy.
        proxy_headers=False,
        # Beyond this many connections and requests at once, new ones get 503 at once rather
        # than a descriptor each until the process runs out.
        limit_concurrency=MAX_CONCURRENCY,
    )


async def serve(config: SandboxConfig, host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    application = create_app(config)
    server = _Server(uvicorn_config(application, config.keep_alive, config.header_timeout))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    # uvicorn offers a flag, not an event, for "started"
    while not server.started and not task.done():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    if server.started:
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        url = f"http://{shown}:{bound_port}"
        application.state.sandbox.store.publish_url(url)
        print(f"Sandbox listening on {url}", flush=True)
    await task
    if not server.started:
        raise SystemExit("sandbox failed to start")


def run(args: argparse.Namespace) -> int:
    if args.action == "rotate-key":
        return rotate(args)
    try:
        config = config_from(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config, args.host, args.port))
    except DatabaseInUse as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    print("Sandbox stopped", file=sys.stderr)
    return 0
