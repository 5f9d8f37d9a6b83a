"""The ``tradeterm algo`` grammar, declared as tables: every option once (``OPTIONS``), and per
algo which of them it requires and which it takes (``KINDS``). ``spec_of`` turns parsed
arguments into the engine's ``AlgoSpec`` and checks it before anything is sent, so a value no
algo could work is a usage error (exit 2), not a parent the engine refuses later.
"""

from __future__ import annotations

import argparse
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from app.cli import values
from app.cli.errors import UsageError
from app.cli.parser import Parser, global_options
from app.domain import ParseError, parse_decimal
from app.services.algos.specs import KINDS as SPEC_KINDS
from app.services.algos.specs import AlgoKind, AlgoSpec

HUNDRED = Decimal(100)
EPILOG = """\
Amounts are in the asset sold: the quote for a buy (--side buy --amount 1000 on BTC/USD spends
1,000 USD), the base for a sell. Prices are QUOTE per BASE. The login comes from the
environment as for `tradeterm api` (TRADETERM_BASE_URL, TRADETERM_USER, TRADETERM_PASSWORD,
TRADETERM_ACCOUNT); there is no password option on purpose.

Ctrl-C pauses the parent: no new child is sent, children already out are waited for (a second
Ctrl-C stops waiting; they cannot be cancelled) and what is filled and still out is printed.
The parent stays stored, paused: `tradeterm algo list`, `tradeterm algo resume ID`.

Exit codes: 0 filled; 1 the service or the engine refused, or failed; 2 usage error;
3 network error or timeout; 4 ended with part of the amount not filled (or stopped);
5 paused by the engine (a refusal, children that could not be sent, the kill switch);
130 paused by Ctrl-C.
"""


@dataclass(frozen=True)
class Option:
    """One option of an algo command: its flag, how its text is read, its help."""

    flag: str
    read: Callable[[str], Any] | None
    metavar: str | None
    help: str
    choices: tuple[str, ...] | None = None


def non_negative(text: str) -> Decimal:
    """A finite number, zero or more (a collar of 0 sends at the touch itself)."""
    try:
        if parse_decimal(text.strip()) == 0:
            return Decimal(0)
    except ParseError:
        pass  # positive_decimal says what is wrong with it
    return values.positive_decimal(text)


def duration(text: str) -> Decimal:
    """Seconds, or a number with ``s``, ``m`` or ``h`` (``90``, ``90s``, ``15m``, ``1.5h``)."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([smh]?)\s*", text.lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration like 90s, 15m or 1.5h: {text!r}")
    return non_negative(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600}[match[2]]


def percent(text: str) -> Decimal:
    """A share in per cent (``20`` is 20 %), returned as a fraction (0.2)."""
    return non_negative(text.strip().removesuffix("%")) / HUNDRED


#: Every option an algo can take, by the name ``spec_of`` reads it under.
OPTIONS: dict[str, Option] = {
    "slices": Option("--slices", values.positive_int, "N", "number of child orders"),
    "duration": Option(
        "--duration", duration, "TIME", "from the first slice to the last: 90s, 15m, 1.5h"
    ),
    "randomise": Option(
        "--randomise", percent, "PCT", "move each slice by up to PCT %% of its interval (0-50)"
    ),
    "participation": Option(
        "--participation", percent, "PCT", "a slice takes at most PCT %% of the size shown"
    ),
    "price_limit": Option(
        "--price-limit",
        values.positive_decimal,
        "PRICE",
        "never buy above / sell below this price (QUOTE per BASE)",
    ),
    "collar_bps": Option(
        "--collar-bps",
        non_negative,
        "BPS",
        "a marketable child's limit: the touch plus this many basis points (default 10)",
    ),
    "child_seconds": Option(
        "--child-seconds",
        values.positive_int,
        "SECONDS",
        "a marketable child ends this long after it leaves, filled or not (default 10)",
    ),
    "display": Option(
        "--display", values.positive_decimal, "N", "clip size, in the asset sold (one at a time)"
    ),
    "trigger": Option(
        "--trigger", values.positive_decimal, "PRICE", "the trigger price (QUOTE per BASE)"
    ),
    "trigger_ref": Option(
        "--trigger-ref",
        None,
        None,
        "the price the trigger watches: the touch the order would trade at, or the mid "
        "(default touch)",
        ("touch", "mid"),
    ),
    "trail_bps": Option(
        "--trail-bps", values.positive_decimal, "BPS", "the trail behind the best price seen"
    ),
    "limit": Option(
        "--limit", values.positive_decimal, "PRICE", "the resting order's limit (QUOTE per BASE)"
    ),
    "start_at": Option(
        "--start-at", values.timestamp, "TIME", "start at this time (ISO 8601, server time)"
    ),
}


@dataclass(frozen=True)
class Kind:
    """An algo command: the engine's kind, and the options it requires and accepts."""

    kind: AlgoKind
    required: tuple[str, ...]
    optional: tuple[str, ...]


_MARKETABLE = ("price_limit", "collar_bps", "child_seconds")
_TRIGGERED = ("trigger_ref", *_MARKETABLE)

#: The algo commands, in the order ``--help`` lists them.
KINDS: dict[str, Kind] = {
    "twap": Kind(
        "twap",
        ("slices", "duration"),
        ("randomise", "participation", *_MARKETABLE, "start_at"),
    ),
    "clip": Kind("clip", ("display",), (*_MARKETABLE, "start_at")),
    "stop": Kind("stop", ("trigger",), _TRIGGERED),
    "take-profit": Kind("take_profit", ("trigger",), _TRIGGERED),
    "trailing-stop": Kind("trailing_stop", ("trail_bps",), _TRIGGERED),
    "stop-limit": Kind("stop_limit", ("trigger", "limit"), ("trigger_ref",)),
    "timed": Kind("timed", ("start_at",), ("limit", *_MARKETABLE)),
}

#: Option names whose value the spec holds under another name.
_SPEC_FIELD = {"duration": "duration_seconds", "limit": "limit_price"}


def build(prog: str = "tradeterm algo") -> Parser:
    parser = Parser(prog=prog)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Work one parent order in the foreground with the execution engine."
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    _shared(parser, suppress=False)
    sub = parser.add_subparsers(dest="algo_command", metavar="COMMAND", required=True)
    for name, kind in KINDS.items():
        summary = SPEC_KINDS[kind.kind].summary
        p = sub.add_parser(name, help=summary, description=f"{summary}.", epilog=EPILOG)
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        _shared(p, suppress=True)
        p.add_argument("--pair", type=values.pair, required=True, metavar="PAIR", help="BTC/USD")
        p.add_argument("--side", choices=("buy", "sell"), required=True, help="of the base")
        p.add_argument(
            "--amount",
            type=values.positive_decimal,
            required=True,
            metavar="N",
            help="of the asset sold: the quote for a buy, the base for a sell",
        )
        for key in kind.required:
            _add(p, key, required=True)
        for key in kind.optional:
            _add(p, key, required=False)
    p = sub.add_parser("list", help="the stored parents of the account, as a restart finds them")
    _shared(p, suppress=True)
    p = sub.add_parser("resume", help="resume (or re-arm) a stored parent in the foreground")
    _shared(p, suppress=True)
    p.add_argument("parent_id", metavar="ID", help="the parent's id, as `list` prints it")


def _shared(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``tradeterm api``'s options, and where the journal is (the algo store is beside it)."""
    global_options(parser, suppress=suppress)
    parser.add_argument(
        "--journal",
        type=Path,
        metavar="PATH",
        default=argparse.SUPPRESS if suppress else None,
        help="the order journal (default: the terminal's); the algo store is beside it",
    )


def _add(parser: argparse.ArgumentParser, key: str, *, required: bool) -> None:
    option = OPTIONS[key]
    extra: dict[str, Any] = {"choices": option.choices} if option.choices else {}
    if option.read is not None:
        extra["type"] = option.read
    if option.metavar is not None:
        extra["metavar"] = option.metavar
    parser.add_argument(option.flag, dest=key, required=required, help=option.help, **extra)


def spec_of(args: argparse.Namespace) -> AlgoSpec:
    """The parent the arguments describe, checked as the engine checks it (UsageError)."""
    kind = KINDS[args.algo_command]
    given: dict[str, Any] = {}
    for key in (*kind.required, *kind.optional):
        value = getattr(args, key, None)
        if value is not None:
            given[_SPEC_FIELD.get(key, key)] = value
    if kind.kind == "twap" and given.get("randomise"):
        given["seed"] = secrets.randbelow(2**31)  # stored with the spec: a restart keeps it
    spec = AlgoSpec(kind.kind, args.pair, args.side, args.amount, **given)
    try:
        spec.validate()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return spec
