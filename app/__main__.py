"""``python -m app`` (= ``tradeterm``): the terminal, the embedded sandbox, or the command line.

Without a command it opens the terminal (login dialog, or ``--sandbox``, or the
``TRADETERM_*`` environment). ``tradeterm api ...`` goes straight to app.cli without importing
the sandbox or Qt, so a script's every call starts fast; ``tradeterm doctor`` checks the
machine (app.doctor).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import app


def build_parser(*, sandbox_options: bool = False) -> argparse.ArgumentParser:
    """The command line. ``sandbox_options``: declare the sandbox's own options, which imports
    the sandbox server (uvicorn, Starlette: 0.1–0.4 s) — only when the sandbox is what runs,
    never on the terminal's way to its first price."""
    parser = argparse.ArgumentParser(
        prog="tradeterm", description="Tradeterm: desktop trading terminal with a sandbox"
    )
    parser.add_argument("--version", action="version", version=f"tradeterm {app.version()}")
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="start the embedded sandbox as a child process and log in as demo",
    )
    parser.add_argument(
        "--smoke-test",
        action="store_true",
        help="open the window, wait for balances and top of book, exit 0 (1 after 30 s)",
    )
    parser.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        type=str.upper,
        help="log file detail for this run (default: the Settings' level, INFO)",
    )
    parser.add_argument(
        "--screenshot", metavar="PATH", help="with --smoke-test: save a PNG of the window"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sandbox = commands.add_parser("sandbox", help="run the embedded sandbox server")
    if sandbox_options:
        from app.sandbox import cli as sandbox_cli

        sandbox_cli.add_arguments(sandbox)
    doctor = commands.add_parser(
        "doctor", help="check this machine: Qt, fonts, keyring, folders, sandbox, service"
    )
    from app.doctor import options as doctor_options

    doctor_options.add_arguments(doctor)
    api = commands.add_parser(
        "api", help="run one service operation from the command line (tradeterm api --help)"
    )
    from app.cli import parser as api_parser

    api_parser.add_arguments(api)
    commands.add_parser(
        "algo",
        help="work one parent order (TWAP, clip, stop, ...) in the foreground "
        "(tradeterm algo --help)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from app.private import harden_process

    harden_process()  # private files from here on, no core dumps
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["api"]:
        from app.cli import main as api_main

        return api_main.main(arguments[1:])
    if arguments[:1] == ["algo"]:
        from app.cli import algo_main

        return algo_main.main(arguments[1:])
    parser = build_parser(sandbox_options="sandbox" in arguments)
    args = parser.parse_args(arguments)
    if args.command == "api":
        from app.cli import runner

        return runner.run(args)
    if args.command == "doctor":
        return _doctor(args)
    if args.command == "sandbox":
        from app.sandbox import cli as sandbox_cli

        return sandbox_cli.run(args)
    if args.screenshot and not args.smoke_test:
        parser.error("--screenshot needs --smoke-test")
    from pathlib import Path

    from app.ui.launch import LaunchOptions, run

    return run(
        LaunchOptions(
            sandbox=args.sandbox,
            smoke_test=args.smoke_test,
            log_level=args.log_level,
            screenshot=Path(args.screenshot) if args.screenshot else None,
        )
    )


def _doctor(args: argparse.Namespace) -> int:
    """``tradeterm doctor``; with ``--qt-probe``, its Qt child. Only this module may hand the
    doctor the terminal's own helpers (app.ui), which it reaches without starting Qt."""
    from app.ui import doctor_probe

    if args.qt_probe:
        return doctor_probe.main()
    from app.doctor import report
    from app.doctor.checks import Terminal
    from app.ui.settings import config_dir

    return report.run(args, Terminal(config_dir, doctor_probe.keyring_state))


if __name__ == "__main__":
    sys.exit(main())
