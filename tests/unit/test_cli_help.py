"""Every option of every command says what it does in ``--help``.

Walks the whole command line — the terminal's options, ``sandbox`` (with its own options
declared), ``doctor`` and every ``api`` command — and fails on the first argument without help.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import app.__main__ as entry
from app.cli import parser as api_parser

#: Options kept hidden on purpose: they exist only to be refused with a pointer to their
#: replacement (an old script must not be parsed as another option by prefix).
RETIRED = {"tradeterm sandbox: --admin-token"}


def parsers(
    parser: argparse.ArgumentParser, path: str = "tradeterm"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, f"{path} {name}")


def arguments(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """The arguments a user types (not ``--help``, not the subcommand slot itself)."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        yield action


def test_every_option_of_every_command_has_help() -> None:
    walked = dict(parsers(entry.build_parser(sandbox_options=True)))
    assert {"tradeterm sandbox", "tradeterm doctor", "tradeterm api ledger"} <= set(walked)
    missing = {
        f"{path}: {'/'.join(action.option_strings) or action.dest}"
        for path, parser in walked.items()
        for action in arguments(parser)
        if not (action.help or "").strip() or action.help == argparse.SUPPRESS
    }
    assert missing == RETIRED, "arguments without help:\n" + "\n".join(sorted(missing - RETIRED))


def test_every_listing_defaults_max_alike() -> None:
    """``ledger`` required --max while ``orders`` and ``deposits`` left it to the service."""
    built = api_parser.build()
    for command in ("ledger", "deposits", "orders"):
        args = built.parse_args([command])
        assert args.max == api_parser.DEFAULT_MAX == 100, command
        assert built.parse_args([command, "--max", "7"]).max == 7


def test_estimate_needs_no_quote_and_limit_takes_one_price() -> None:
    built = api_parser.build()
    trade = ["--source", "USD", "--destination", "BTC", "--size", "10"]
    assert built.parse_args(["estimate", *trade]).quote is None
    assert built.parse_args(["limit", *trade, "--price", "90000"]).price == 90000
