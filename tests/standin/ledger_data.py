"""The stand-in's ledger: 300 entries of one account, oldest first, built so that the two legs
of a trade straddle every page boundary of 100 entries, counted from either end."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

ASSETS = ("USD", "BTC", "ETH")
PAIRS = ("BTC/USD", "ETH/USD")
#: Unit prices in USD the trades are made at (a few percent either way).
PRICES = {"BTC": Decimal(50000), "ETH": Decimal(3000)}
INITIAL = {"USD": Decimal(1_000_000), "BTC": Decimal(10), "ETH": Decimal(100)}
ENTRIES = 300
#: Entry positions (oldest first) where a trade must start so its legs sit at p and p + 1:
#: the boundaries of pages of 100 entries read from the oldest (99|100, 199|200), which are
#: also those read from the newest (300 entries).
STRADDLES = (99, 199)
FIRST_TIME = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Entry:
    ordering: int
    transaction_id: str
    asset: str
    amount: Decimal
    event_type: str
    sub_event_type: str  # "" when none
    event_time: datetime

    def key(self) -> tuple[int, str, str, str]:
        return (self.ordering, self.transaction_id, self.asset, self.sub_event_type)


def build_ledger(account: str, count: int = ENTRIES, seed: int = 7) -> list[Entry]:
    """``count`` entries, oldest first: initial balances, then trades (two legs at one ordering
    and time), deposits and withdrawals; orderings rise by 1 to 3 (the seed's "at least 1")."""
    rng = random.Random(seed)
    entries: list[Entry] = []
    ordering, moment = 1000, FIRST_TIME
    number = 0

    def tx() -> str:
        nonlocal number
        number += 1
        return f"{account}-tx-{number:04d}"

    for asset in ASSETS:
        entries.append(Entry(ordering, tx(), asset, INITIAL[asset], "initialBalances", "", moment))
        ordering += 1
    while len(entries) < count:
        at = len(entries)
        ordering += rng.randint(1, 3)
        moment += timedelta(seconds=rng.randint(5, 600), microseconds=rng.randint(0, 999_999))
        left = count - at
        must_trade = at in STRADDLES
        must_single = left == 1 or (at + 1) in STRADDLES
        if must_trade or (not must_single and rng.random() < 0.7):
            entries.extend(_trade(rng, tx(), ordering, moment))
        else:
            entries.append(_flow(rng, tx(), ordering, moment))
    assert len(entries) == count
    return entries


def _trade(rng: random.Random, transaction: str, ordering: int, moment: datetime) -> list[Entry]:
    asset = rng.choice(("BTC", "ETH"))
    size = Decimal(rng.randint(1, 500)) / 1000  # 0.001 to 0.5 of the asset
    price = PRICES[asset] * (1 + Decimal(rng.randint(-300, 300)) / 10_000)
    usd = (size * price).quantize(Decimal("0.01"))
    if rng.random() < 0.5:  # buy the asset with USD
        paid, got = ("USD", -usd), (asset, size)
    else:
        paid, got = (asset, -size), ("USD", usd)
    return [
        Entry(ordering, transaction, paid[0], paid[1], "trade", "source", moment),
        Entry(ordering, transaction, got[0], got[1], "trade", "destination", moment),
    ]


def _flow(rng: random.Random, transaction: str, ordering: int, moment: datetime) -> Entry:
    asset = rng.choice(ASSETS)
    amount = Decimal(rng.randint(1, 1000)) / (1 if asset == "USD" else 1000)
    if rng.random() < 0.6:
        return Entry(ordering, transaction, asset, amount, "deposit", "", moment)
    return Entry(ordering, transaction, asset, -amount / 2, "withdrawal", "", moment)


def holdings(entries: list[Entry]) -> dict[str, Decimal]:
    """Each asset's balance: the ledger's sum."""
    totals = dict.fromkeys(ASSETS, Decimal(0))
    for entry in entries:
        totals[entry.asset] += entry.amount
    return totals
