"""What a feed is given instead of the whole session: the few things it reads, as ``Protocol``s.

A feed that took the ``TerminalSession`` could reach anything in it (and did: one wrote the
session's pairs list from outside), and the session had to import every feed to hand them out,
which closed an import circle. Each feed now names what it uses — the part of the client it
calls, the account id, a ``pairs()`` function, the fills topic — and the composition root
(``app.services.terminal``) wires them. A test can give any object of the right shape; the
real ``ServiceClient`` and ``Topic`` fit these protocols as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from app.api import ServerClock
from app.domain.records import Account, LedgerEntry, Order, PairInfo, TopOfBook

T_co = TypeVar("T_co", covariant=True)


class Subscribable(Protocol[T_co]):
    """A topic to follow (``app.services.events.Topic`` is one)."""

    def subscribe(self, callback: Callable[[T_co], None]) -> Callable[[], None]: ...


class PairNames(Protocol):
    """The service's pairs ("BTC/USD", ...) as known now: they decide each order's base."""

    def __call__(self) -> Sequence[str]: ...


class OrderReader(Protocol):
    """The order query and a single order's read, and the server clock (fills' times)."""

    clock: ServerClock

    async def orders(
        self,
        max_orders: int | None = None,
        *,
        submitted_start: datetime | None = None,
        submitted_end: datetime | None = None,
        source: str | None = None,
        destination: str | None = None,
        order_type: str | None = None,
        status: str | None = None,
        start_at_ordering: int | None = None,
    ) -> list[Order]: ...

    async def order(self, order_id: str) -> Order: ...


class LedgerReader(Protocol):
    """The ledger query and the account's balances (a running balance needs both)."""

    async def ledger(
        self,
        max_entries: int,
        *,
        asset: str | None = None,
        event_type: str | None = None,
        transaction_id: str | None = None,
        start_at_ordering: int | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> list[LedgerEntry]: ...

    async def account(self, *, poll: bool = False) -> Account: ...


class MarketReader(LedgerReader, Protocol):
    """The ledger and the account, and the prices of every pair (the positions' first
    marks)."""

    async def pairs(self) -> list[PairInfo]: ...

    async def top_of_book(
        self, pairs: list[str] | None = None, *, poll: bool = False
    ) -> dict[str, TopOfBook]: ...
