"""Money in and out of the account: deposit (and withdrawal) records, and where to send funds.

The deposits query returns at most ``max`` records in ``ordering`` order, newest first unless
``asc`` is set; flipping ``asc`` therefore changes *which* records come back, not only their
order, so the direction is part of the query sent to the server. ``TransferFeed`` polls that
query on a slow interval (a pending deposit completes by itself) and re-asks at once when the
query changes; an answer to a query that is no longer current is dropped, never shown.

Instructions (deposit and withdraw) are read together; each list may fail on its own (a service
without withdraw instructions still shows where to deposit). asyncio only, no Qt.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from app.api import NotFound, ServiceClient, ServiceError, Unauthorized
from app.domain import utc_now
from app.domain.records import (
    BlockchainInstruction,
    DepositRecord,
    FiatInstruction,
    Instruction,
    OtherInstruction,
)
from app.services.events import Topic
from app.services.poller import Poller
from app.services.tasks import Tasks

TransferKind = Literal["deposit", "withdrawal"]
Direction = Literal["deposit", "withdraw"]

#: The service's default and bounds for ``max`` on the deposits query.
DEFAULT_MAX = 100
MAX_RECORDS = 1000
#: Deposits change rarely; pending ones complete within minutes.
DEFAULT_INTERVAL = 15.0


class TransferError(Exception):
    """A transfer query failed; ``str()`` is one line a trader can act on."""


# -- transfer records -------------------------------------------------------------------------


@dataclass(frozen=True)
class TransferQuery:
    """What is asked of the server: deposits or withdrawals, how many, which end first."""

    kind: TransferKind = "deposit"
    ascending: bool = False
    max_records: int = DEFAULT_MAX

    def __post_init__(self) -> None:
        if not 1 <= self.max_records <= MAX_RECORDS:
            raise ValueError(f"between 1 and {MAX_RECORDS} records can be asked for")


@dataclass(frozen=True)
class TransferPage:
    """The server's answer to one query, in the server's order."""

    query: TransferQuery
    records: tuple[DepositRecord, ...]
    fetched_at: datetime = field(default_factory=utc_now)


def _plural(kind: TransferKind) -> str:
    return "deposits" if kind == "deposit" else "withdrawals"


def explain(exc: ServiceError, what: str) -> str:
    """A failed read in words: what could not be read and why."""
    if isinstance(exc, Unauthorized):
        return f"Cannot read {what}: the login has expired or was refused ({exc})"
    return f"Cannot read {what}: {exc}"


def transfer_failure(exc: ServiceError, kind: TransferKind) -> str:
    """Why a transfer query failed, in words."""
    if kind == "withdrawal" and isinstance(exc, NotFound) and exc.status == 404:
        return "This service does not list withdrawal requests"
    return explain(exc, _plural(kind))


async def _read_transfers(client: ServiceClient, query: TransferQuery) -> TransferPage:
    """One query; ServiceError when the server does not answer it."""
    read = client.deposits if query.kind == "deposit" else client.withdrawals
    records = await read(query.max_records, ascending=query.ascending)
    return TransferPage(query, tuple(records))


async def fetch_transfers(client: ServiceClient, query: TransferQuery) -> TransferPage:
    """One query; raises TransferError with the reason when the server does not answer it."""
    try:
        return await _read_transfers(client, query)
    except ServiceError as exc:
        raise TransferError(transfer_failure(exc, query.kind)) from exc


class TransferFeed:
    """Transfer records polled every ``interval`` seconds for the current query, by a
    ``Poller`` (never overlapping; after a failure it backs off, jittered, up to 30 s).

    ``pages`` gets every answer to the current query; ``failures`` the message of every failed
    poll. ``set_query`` and ``refresh`` ask at once.
    """

    def __init__(
        self,
        client: ServiceClient,
        query: TransferQuery | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
        rng: random.Random | None = None,
        tasks: Tasks | None = None,
    ) -> None:
        self._client = client
        self._query = query or TransferQuery()
        self.latest: TransferPage | None = None
        self.pages: Topic[TransferPage] = Topic("transfers.pages")
        self.failures: Topic[str] = Topic("transfers.failures")
        self.poller: Poller[TransferPage] = Poller(
            "transfers", self._fetch, interval, rng=rng, tasks=tasks
        )
        self.poller.data.subscribe(self._answered)

    @property
    def query(self) -> TransferQuery:
        return self._query

    def set_query(self, query: TransferQuery) -> None:
        if query != self._query:
            self._query = query
            self.poller.refresh()

    def set_ascending(self, ascending: bool) -> None:
        self.set_query(replace(self._query, ascending=ascending))

    def refresh(self) -> None:
        self.poller.refresh()

    @property
    def running(self) -> bool:
        return self.poller.running

    def start(self) -> None:
        self.poller.start()

    async def stop(self) -> None:
        await self.poller.stop()

    async def _fetch(self) -> TransferPage:
        query = self._query
        try:
            return await _read_transfers(self._client, query)
        except ServiceError as exc:
            self.failures.publish(transfer_failure(exc, query.kind))
            raise  # the poller counts it and backs off

    def _answered(self, page: TransferPage) -> None:
        if page.query != self._query:
            return  # the trader changed the question meanwhile; the poller asks again at once
        self.latest = page
        self.pages.publish(page)


# -- instructions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class InstructionBook:
    """Deposit and withdraw instructions, each with the reason it could not be read (or "")."""

    deposit: tuple[Instruction, ...] = ()
    withdraw: tuple[Instruction, ...] = ()
    deposit_error: str = ""
    withdraw_error: str = ""

    def of(self, direction: Direction) -> tuple[Instruction, ...]:
        return self.deposit if direction == "deposit" else self.withdraw

    def error(self, direction: Direction) -> str:
        return self.deposit_error if direction == "deposit" else self.withdraw_error

    def assets(self) -> list[str]:
        """Every asset of either list, in the server's order (deposits first)."""
        return list(dict.fromkeys(asset_of(i) for i in (*self.deposit, *self.withdraw)))

    def for_asset(self, direction: Direction, asset: str) -> list[Instruction]:
        return [i for i in self.of(direction) if asset_of(i) == asset]

    def networks(self, direction: Direction, asset: str) -> list[str]:
        """The blockchain networks ``asset`` can move on in ``direction``, in server order."""
        return [
            i.network_type
            for i in self.for_asset(direction, asset)
            if isinstance(i, BlockchainInstruction)
        ]


def asset_of(instruction: Instruction) -> str:
    """The asset of any instruction ("?" for an unknown type that names none)."""
    return instruction.asset or "?"


def kind_of(instruction: Instruction) -> str:
    if isinstance(instruction, BlockchainInstruction):
        return "blockchain"
    if isinstance(instruction, FiatInstruction):
        return "fiat"
    assert isinstance(instruction, OtherInstruction)
    return instruction.asset_type or "unknown"


async def _read(client: ServiceClient, direction: Direction) -> tuple[list[Instruction], str]:
    read = client.deposit_instructions if direction == "deposit" else client.withdraw_instructions
    try:
        return await read(), ""
    except NotFound as exc:
        if exc.status == 404:
            return [], f"This service gives no {direction} instructions"
        return [], explain(exc, f"{direction} instructions")
    except ServiceError as exc:
        return [], explain(exc, f"{direction} instructions")


async def fetch_instructions(client: ServiceClient) -> InstructionBook:
    """Both lists at once; raises TransferError only when neither could be read."""
    (deposit, deposit_error), (withdraw, withdraw_error) = await asyncio.gather(
        _read(client, "deposit"), _read(client, "withdraw")
    )
    if deposit_error and withdraw_error:
        same = deposit_error == withdraw_error
        raise TransferError(deposit_error if same else f"{deposit_error}; {withdraw_error}")
    return InstructionBook(tuple(deposit), tuple(withdraw), deposit_error, withdraw_error)
