"""Order books the tests build themselves (a few levels, or a ladder of them round a mid), and
pinning the sandbox's mid so a live book sits where a test expects it."""

from __future__ import annotations

from decimal import Decimal

from app.domain.money import AssetPair
from app.domain.records import OrderBook
from tests.harness import SandboxProcess


def book(pair: str, bids: list[tuple[str, str]], asks: list[tuple[str, str]]) -> OrderBook:
    return OrderBook(
        AssetPair.parse(pair),
        tuple((Decimal(p), Decimal(s)) for p, s in bids),
        tuple((Decimal(p), Decimal(s)) for p, s in asks),
    )


def ladder_book(asks: int, bids: int, mid: int = 1000) -> OrderBook:
    """A book of ``asks`` and ``bids`` levels one unit apart around ``mid``."""
    return book(
        "BTC/USD",
        [(str(mid - 2 - n), "1") for n in range(bids)],
        [(str(mid + 1 + n), "1") for n in range(asks)],
    )


def pin(sandbox: SandboxProcess, mid: Decimal | None) -> None:
    """Hold the BTC/USD mid at ``mid`` (None: let it walk again)."""
    with sandbox.admin() as admin:
        response = admin.post(
            "/api/v1/sandbox/admin/price",
            json={"assetPair": PAIR, "mid": None if mid is None else str(mid)},
        )
        assert response.status_code == 200, response.text


def book_mid(book: OrderBook | None) -> Decimal | None:
    if book is None or not book.asks or not book.bids:
        return None
    return (min(p for p, _ in book.asks) + max(p for p, _ in book.bids)) / 2


PAIR = "BTC/USD"
