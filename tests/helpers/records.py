"""Records the record-view tests fill tables with: plain items and ledger entries, made the same way
each run."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from app.domain.records import LedgerEntry


def items(count: int, seed: int = 3) -> list[Item]:
    rng = random.Random(seed)
    notes = ("Alpha", "beta", "GAMMA", "delta", "")
    return [
        Item(
            f"item-{number:05d}",
            None if number % 17 == 0 else Decimal(rng.randint(-500, 500)) / 4,
            rng.choice(notes),
        )
        for number in range(count)
    ]


def ledger_entries(count: int) -> list[LedgerEntry]:
    """Newest first: trades (two legs, one ordering) and deposits."""
    rng = random.Random(9)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    entries: list[LedgerEntry] = []
    ordering = 0
    while len(entries) < count:
        ordering += 1
        moment = start + timedelta(seconds=ordering)
        amount = Decimal(rng.randint(1, 50)) / 10  # many ties between transactions
        if ordering % 5 == 0:
            entries.append(
                LedgerEntry(ordering, "a", f"d{ordering}", "BTC", amount, "deposit", "", moment)
            )
            continue
        txid = f"t{ordering}"
        entries.append(
            LedgerEntry(ordering, "a", txid, "USD", -amount * 100, "trade", "source", moment)
        )
        entries.append(
            LedgerEntry(ordering, "a", txid, "BTC", amount, "trade", "destination", moment)
        )
    entries.reverse()
    return entries


@dataclass(frozen=True)
class Item:
    name: str
    size: Decimal | None
    note: str
