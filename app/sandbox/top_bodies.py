"""Top-of-book answers, encoded once per set of prices.

Why: a terminal polls top of book several times a second and the market moves once a tick, so most
answers repeat the last one byte for byte; building and encoding the body was the largest part of
the handler (the sandbox ran at 0.36 of its hello-JSON ceiling in ``tests/perf/bench_sandbox.py``).
An answer is kept per ``assetPairs`` text together with the quote objects it was made from, and
served again only while the market hands out those very objects: the market makes new ones whenever
a price changes (a tick, or anything that clears its quotes), so the cache can never serve a stale
price, whatever moved it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.sandbox.market import Market, MarketQuote
from app.sandbox.wire import encode, ok

#: Distinct ``assetPairs`` texts kept; a client cycling through more starts the cache over.
KEPT = 64


@dataclass
class _Answer:
    quotes: tuple[MarketQuote, ...]
    body: bytes


@dataclass
class TopOfBookBodies:
    """Encoded top-of-book bodies of one market, by the request's ``assetPairs`` text."""

    _answers: dict[str, _Answer] = field(default_factory=dict)

    def body(self, market: Market, raw: str, names: Callable[[str], list[str]]) -> bytes:
        """The success body for ``raw`` (``names`` parses and checks it, raising the 400 on
        bad input: it runs only for a text not seen yet)."""
        known = self._answers.get(raw)
        if known is not None:
            if market.unchanged(known.quotes):
                return known.body
            quotes = tuple(market.quote(quote.pair) for quote in known.quotes)
        else:
            quotes = tuple(market.quote(name) for name in names(raw))
        books = {
            quote.pair: {
                "spread": quote.spread,
                "ask": [quote.ask, quote.ask_size],
                "bid": [quote.bid, quote.bid_size],
            }
            for quote in quotes
        }
        if len(self._answers) >= KEPT:
            self._answers.clear()
        answer = _Answer(quotes, encode(ok({"topOfBooks": books})).encode())
        self._answers[raw] = answer
        return answer.body
