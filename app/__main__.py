"""``python -m app`` (= ``tradeterm``): the terminal, the embedded sandbox, or the command line.

Until the GUI lands (issue 4), ``--sandbox`` starts the embedded sandbox in this process and
says so. ``tradeterm api ...`` goes straight to app.cli without importing the sandbox, so a
script's every call starts fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import app


def build_parser() -> argparse.ArgumentParser:
    from app.sandbox import cli as sandbox_cli

    parser = argparse.ArgumentParser(
        prog="tradeterm", description="Tradeterm: desktop trading terminal with a sandbox"
    )
    parser.add_argument("--version", action="version", version=f"tradeterm {app.version()}")
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="run on the embedded sandbox (paper trading on this machine)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sandbox = commands.add_parser("sandbox", help="run the embedded sandbox server")
    sandbox_cli.add_arguments(sandbox)
    api = commands.add_parser(
        "api", help="run one service operation from the command line (tradeterm api --help)"
    )
    from app.cli import parser as api_parser

    api_parser.add_arguments(api)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["api"]:
        from app.cli import main as api_main

        return api_main.main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command == "api":
        from app.cli import runner

        return runner.run(args)
    if args.command == "sandbox":
        from app.sandbox import cli as sandbox_cli

        return sandbox_cli.run(args)
    if args.sandbox:
        from app.sandbox import cli as sandbox_cli

        print(
            "Tradeterm: the terminal window is not built yet (issue 4); starting the "
            "embedded sandbox on http://127.0.0.1:8000 — Ctrl-C to stop.",
            flush=True,
        )
        return sandbox_cli.run(parser.parse_args(["sandbox", "--port", "8000"]))
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
