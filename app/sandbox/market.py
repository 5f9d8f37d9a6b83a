"""Simulated prices: a reproducible random walk per asset, valued in USD, quoted on every pair.

Each asset's USD value takes one step per tick (``--tick`` seconds, 250 ms by default): a uniform
shock in millionths plus a pull back toward its anchor, so levels stay realistic for days. Pair
mids are ratios of asset values (so cross rates agree), rounded to the pair's tick; the quoted
spread and sizes come from the same seed. Given ``--seed``, the n-th tick is identical on every
run; what a client sees at a moment depends on how many ticks have elapsed since start.
All arithmetic is Decimal or integer; the random generator only produces integers.

Tests that need a price where they want it (a price alert crossing a level) pin a pair's mid
through the admin route (``pin``): the pair is then quoted around that mid, with its usual
spread and sizes, until unpinned; the walk of the assets goes on underneath, untouched.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

from app.domain.money import MONEY_CONTEXT
from app.sandbox.catalogue import ASSETS, PAIRS, PairSpec

_VALUE_QUANTUM = Decimal("1e-12")
_MAX_CATCH_UP = 20_000  # ticks replayed after a long pause before the walk jumps ahead
_BOOK_LEVEL_BPS = Decimal("0.8")
MAX_BOOK_LEVELS = 100


@dataclass(frozen=True)
class MarketQuote:
    """Top of book of one pair at one tick: prices in QUOTE per BASE, sizes in BASE."""

    pair: str
    bid: Decimal
    bid_size: Decimal
    ask: Decimal
    ask_size: Decimal

    @property
    def spread(self) -> Decimal:
        return self.ask - self.bid


@dataclass(frozen=True)
class Book:
    pair: str
    bids: list[tuple[Decimal, Decimal]]
    asks: list[tuple[Decimal, Decimal]]


class Market:
    """Prices of every pair, advanced lazily to the current tick whenever they are read."""

    def __init__(
        self, seed: int, tick_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._seed = seed
        self._rng = random.Random(seed)
        self._tick_seconds = tick_seconds
        self._clock = clock
        self._start = clock()
        self._tick = 0
        self._values = {code: spec.usd_anchor for code, spec in sorted(ASSETS.items())}
        self._quotes: dict[str, MarketQuote] = {}
        self._pinned: dict[str, Decimal] = {}

    @property
    def tick(self) -> int:
        self.advance()
        return self._tick

    def advance(self) -> None:
        target = int((self._clock() - self._start) / self._tick_seconds)
        if target <= self._tick:
            return
        steps = target - self._tick
        if steps > _MAX_CATCH_UP:
            self._tick = target - _MAX_CATCH_UP
            steps = _MAX_CATCH_UP
        for _ in range(steps):
            self._step()
        self._quotes.clear()

    def _step(self) -> None:
        self._tick += 1
        with localcontext(MONEY_CONTEXT):
            for code, value in self._values.items():
                spec = ASSETS[code]
                if spec.step_ppm == 0:
                    continue
                shock = self._rng.randint(-spec.step_ppm, spec.step_ppm)
                deviation_ppm = (value / spec.usd_anchor - 1) * 1_000_000
                pull = -deviation_ppm / 400
                factor = 1 + (Decimal(shock) + pull) / 1_000_000
                self._values[code] = (value * factor).quantize(_VALUE_QUANTUM)

    def quote(self, pair: str) -> MarketQuote:
        """Top of book of ``pair`` (a key of ``PAIRS``) at the current tick."""
        self.advance()
        cached = self._quotes.get(pair)
        if cached is None:
            cached = self._make_quote(PAIRS[pair])
            self._quotes[pair] = cached
        return cached

    def unchanged(self, quotes: Iterable[MarketQuote]) -> bool:
        """Whether each of ``quotes`` is still its pair's top of book: the market makes new
        quote objects whenever a price changes, so identity says it (one catch-up and a dict
        look-up per pair, where ``quote`` per pair caught up each time: top of book's cache)."""
        self.advance()
        current = self._quotes
        return all(current.get(quote.pair) is quote for quote in quotes)

    def pin(self, pair: str, mid: Decimal | None) -> MarketQuote:
        """Hold ``pair``'s mid at ``mid`` (a multiple of its tick; None: back to the walk) and
        return the pair's quote from now on. ValueError says why a mid cannot be used."""
        spec = PAIRS[pair]
        if mid is None:
            self._pinned.pop(pair, None)
        else:
            if mid <= 0 or mid % spec.tick != 0:
                raise ValueError(f"a {pair} mid is a positive multiple of {spec.tick}")
            if mid - _half_spread(mid, spec) <= 0:
                raise ValueError(f"a {pair} mid of {mid} leaves no positive bid")
            self._pinned[pair] = mid
        self._quotes.pop(pair, None)
        return self.quote(pair)

    def book(self, pair: str, levels: int) -> Book:
        """``levels`` price levels per side, starting at the top of book, sizes in BASE."""
        top = self.quote(pair)
        spec = PAIRS[pair]
        rng = random.Random(f"{self._seed}:{self._tick}:{pair}:book")
        step = max(spec.tick, to_tick(top.ask * _BOOK_LEVEL_BPS / 10_000, spec.tick, ROUND_FLOOR))
        bids = [(top.bid, top.bid_size)]
        asks = [(top.ask, top.ask_size)]
        for level in range(1, levels):
            bids.append((top.bid - step * level, _size(rng, spec, 1 + level // 3)))
            asks.append((top.ask + step * level, _size(rng, spec, 1 + level // 3)))
        bids = [(price, size) for price, size in bids[:levels] if price > 0]
        return Book(pair, bids, asks[:levels])

    def _make_quote(self, spec: PairSpec) -> MarketQuote:
        mid = self._pinned.get(spec.name)
        if mid is None:
            with localcontext(MONEY_CONTEXT):
                raw_mid = self._values[spec.pair.base] / self._values[spec.pair.quote]
                mid = to_tick(raw_mid, spec.tick, ROUND_FLOOR)
        half = _half_spread(mid, spec)
        rng = random.Random(f"{self._seed}:{self._tick}:{spec.name}:top")
        return MarketQuote(
            spec.name, mid - half, _size(rng, spec, 1), mid + half, _size(rng, spec, 1)
        )


def _half_spread(mid: Decimal, spec: PairSpec) -> Decimal:
    """Half the quoted spread around ``mid``: at least one tick."""
    with localcontext(MONEY_CONTEXT):
        return max(spec.tick, to_tick(mid * spec.spread_bps / 20_000, spec.tick, ROUND_CEILING))


def to_tick(value: Decimal, tick: Decimal, rounding: str) -> Decimal:
    return (value / tick).to_integral_value(rounding=rounding) * tick


def _size(rng: random.Random, spec: PairSpec, scale: int) -> Decimal:
    decimals = ASSETS[spec.pair.base].decimals
    raw = spec.typical_size * scale * Decimal(rng.randint(20, 200)) / 100
    return raw.quantize(Decimal(1).scaleb(-min(decimals, 4)), rounding=ROUND_FLOOR)
