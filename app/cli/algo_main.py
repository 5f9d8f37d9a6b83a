"""``tradeterm algo ARGS``: parse first, then load the engine and run.

Parsing needs only the algo specs and app.domain, so a usage error (exit 2) is reported before
the HTTP client, the terminal and the engine are imported, as ``tradeterm api`` does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from app.cli import algo_args

        args = algo_args.build().parse_args(argv)  # exits 2 itself on a bad argument
        from app.cli import algo
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return INTERRUPTED
    return algo.run(args)
