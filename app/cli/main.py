"""``tradeterm api ARGS``: parse first, then load the HTTP client and run.

Parsing needs only app.domain, so a usage error (exit 2) is reported before httpx is even
imported: a script that got its arguments wrong hears so at once.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from app.cli import parser

        args = parser.build().parse_args(argv)  # exits 2 itself on a bad argument
        from app.cli import runner
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    return runner.run(args)
