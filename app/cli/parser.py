"""The ``tradeterm api`` grammar: global options, then one subcommand per service operation.

Handlers are looked up by command name (app.cli.commands), so building this parser stays
cheap: ``tradeterm --help`` and ``tradeterm sandbox`` do not import the HTTP client.
Every value is checked here (types in app.cli.values), so a typo is a usage error (exit 2)
before anything is sent. The options of the whole command line (``--json``, ``--base-url``,
``--timeout``, ``--verbose``) are accepted before or after the subcommand.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from app.cli import values

SERVICES = ("routing", "accounting", "identity")
#: Records a listing returns unless ``--max`` says otherwise (ledger, deposits, orders alike).
DEFAULT_MAX = 100
EPILOG = """\
The service URL and the login come from the environment: TRADETERM_BASE_URL (or --base-url),
TRADETERM_USER, TRADETERM_PASSWORD and TRADETERM_ACCOUNT; at a terminal, whatever is missing is
asked for (the password without echo). There is no password option on purpose.

Exit codes: 0 done; 1 the service refused or failed; 2 usage error (bad value, missing login);
3 network error or timeout, or an order whose outcome is unknown (check `orders`).
"""


class Parser(argparse.ArgumentParser):
    """argparse with errors written as ``error: ...`` followed by the usage line."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message}\n")
        self.print_usage(sys.stderr)
        sys.exit(2)


def global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Added to the top parser with defaults, and to each subcommand without (so a value
    given after the subcommand wins and one given before is not reset)."""

    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--base-url",
        metavar="URL",
        default=default(None),
        help="service URL (default: env TRADETERM_BASE_URL)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print the answer as JSON with the service's field names and exact decimal strings",
    )
    parser.add_argument(
        "--timeout",
        type=values.seconds,
        metavar="SECONDS",
        default=default(15.0),
        help="read timeout per request (default 15; connect timeout min(5, SECONDS))",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default(0),
        help="log the client's retries (-v) and every request (-vv) to stderr",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The whole grammar, on ``parser`` (the ``api`` subparser of ``tradeterm``, or its own)."""
    parser.description = "Run one operation of the trading service and print the answer."
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    global_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="api_command", metavar="COMMAND", required=True)

    def command(name: str, help_text: str, *, login: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(login=login)
        global_options(p, suppress=True)
        return p

    p = command("info", "service information (no login)", login=False)
    p.add_argument(
        "service",
        nargs="?",
        default="routing",
        choices=SERVICES,
        help="which service to ask (default routing)",
    )
    command("time", "the service's clock (no login)", login=False)
    command("account", "balances: free, locked, available, credit limit, used and available credit")
    command("portfolio", "funds and credit per asset")

    p = command("ledger", "ledger entries, newest first (--asc: oldest first)")
    _max(p, "entries")
    p.add_argument(
        "--asc", action="store_true", help="print oldest first (whichever way the service answers)"
    )
    p.add_argument("--asset", type=values.asset, metavar="ASSET", help="only this asset's entries")
    p.add_argument("--type", metavar="EVENT_TYPE", help="e.g. trade, deposit, initialBalances")
    p.add_argument("--transaction-id", metavar="ID", help="only this transaction's entries")
    _start_at_ordering(p)
    _time_range(p)

    p = command("deposits", "deposit records, newest first")
    _max(p, "records")
    p.add_argument("--asc", action="store_true", help="oldest first")

    command("deposit-instructions", "where to send deposits")
    command("withdraw-instructions", "whitelisted withdraw addresses")

    p = command("tob", "top of book: best bid and ask (all pairs when none given)")
    p.add_argument("pairs", nargs="*", type=values.pair, metavar="PAIR", help="e.g. BTC/USD")
    p = command("book", "order book levels of one pair")
    p.add_argument("pair", type=values.pair, metavar="PAIR", help="e.g. BTC/USD")
    p.add_argument("--levels", type=values.positive_int, metavar="N", help="price levels per side")
    command("pairs", "tradable pairs with increments and precisions")

    p = command("estimate", "indicative price for selling SIZE of SOURCE")
    _trade_assets(p)
    p.add_argument(
        "--quote",
        type=values.asset,
        metavar="ASSET",
        help="the asset the service prices in, SOURCE or DESTINATION (default: the pair's "
        "quote); only --json shows it: the text reads QUOTE per BASE either way",
    )

    p = command("limit", "sell SIZE of SOURCE for DESTINATION (limit order)")
    _trade_assets(p)
    price = p.add_mutually_exclusive_group()
    price.add_argument(
        "--price",
        type=values.positive_decimal,
        metavar="PRICE",
        help="limit price in QUOTE per BASE of the pair, as the terminal's ticket takes it "
        "(e.g. 90000 on BTC/USD, buying or selling): the most paid when buying the base, the "
        "least received when selling it",
    )
    price.add_argument(
        "--limit",
        type=values.positive_decimal,
        metavar="PRICE",
        help="the wire's limit instead: least DESTINATION per SOURCE (SOURCE/DESTINATION)",
    )
    p.add_argument("--end-at", type=values.timestamp, metavar="TIME", help="cancel at (ISO 8601)")
    _client_order_id(p)

    p = command("market", "sell SIZE of SOURCE for DESTINATION at market")
    _trade_assets(p)
    _client_order_id(p)

    p = command("rfq", "request a quote, e.g. rfq BTC/USD '0.5 BTC'")
    p.add_argument("pair", type=values.pair, metavar="PAIR", help="e.g. BTC/USD")
    p.add_argument(
        "size",
        nargs="+",
        action=_AmountAction,
        metavar="SIZE",
        help="amount with its asset, e.g. '0.5 BTC'",
    )
    p = command("accept", "take one side of a quote")
    p.add_argument("order_id", metavar="ORDER_ID", help="the quote's id, as rfq printed it")
    p.add_argument(
        "--side",
        choices=("buy", "sell"),
        required=True,
        help="buy or sell the pair's base at the quoted price",
    )

    p = command("orders", "orders, newest first")
    _max(p, "orders")
    p.add_argument("--source", type=values.asset, metavar="ASSET", help="only orders selling ASSET")
    p.add_argument(
        "--destination", type=values.asset, metavar="ASSET", help="only orders buying ASSET"
    )
    p.add_argument("--type", metavar="TYPE", help="limit, market or rfq")
    p.add_argument("--status", metavar="STATUS", help="e.g. filled")
    _start_at_ordering(p)
    p.add_argument("--asc", action="store_true", help="oldest first")
    p.add_argument("--client-order-id", metavar="ID", help="only the order with this client id")
    _time_range(p)
    p = command("order", "one order")
    p.add_argument("order_id", metavar="ORDER_ID", help="the service's order id")


def _trade_assets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", type=values.asset, required=True, metavar="ASSET", help="sold")
    p.add_argument(
        "--destination", type=values.asset, required=True, metavar="ASSET", help="bought"
    )
    p.add_argument(
        "--size", type=values.positive_decimal, required=True, metavar="X", help="SOURCE amount"
    )


def _max(p: argparse.ArgumentParser, what: str) -> None:
    """The one rule for every listing: at most N, 100 unless told (sent on every request, so a
    listing does not depend on each service's own default)."""
    p.add_argument(
        "--max",
        type=values.positive_int,
        default=DEFAULT_MAX,
        metavar="N",
        help=f"at most N {what} (default {DEFAULT_MAX})",
    )


def _start_at_ordering(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--start-at-ordering",
        type=values.non_negative_int,
        metavar="N",
        help="begin at this ordering (the ORDERING column; to page through)",
    )


def _client_order_id(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--client-order-id",
        metavar="ID",
        help="your id for the order, to find it again (default: a new one)",
    )


def _time_range(p: argparse.ArgumentParser) -> None:
    p.add_argument("--start", type=values.timestamp, metavar="TIME", help="from (ISO 8601)")
    p.add_argument("--end", type=values.timestamp, metavar="TIME", help="until (ISO 8601)")


def build(prog: str = "tradeterm api") -> Parser:
    parser = Parser(prog=prog)
    add_arguments(parser)
    return parser


class _AmountAction(argparse.Action):
    """SIZE of rfq, as one word (``'0.5 BTC'``) or two (``0.5 BTC``), checked as an amount."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        given: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        words = [given] if isinstance(given, str) else [str(word) for word in given or ()]
        try:
            setattr(namespace, self.dest, values.amount(" ".join(words)))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument SIZE: {exc}")
