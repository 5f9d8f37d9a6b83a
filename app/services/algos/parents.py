"""A parent order and its children, and the one rule that keeps a parent from overfilling.

Every child is counted in the asset sold. What a parent may still send is

    room = target − filled − in flight − unknown

where *in flight* is every child sent whose end is not yet known (leaving, or resting on the
book) and *unknown* is every child whose answer was lost and that the server has not shown
since. A parent with an unknown child sends nothing at all until it is settled: a lost answer
may be a fill, and the next child is never sized on the hope that it was not.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Literal

from app.domain.fill_price import average_price
from app.services.algos.specs import AlgoSpec

ChildStatus = Literal["sending", "resting", "unknown", "filled", "empty"]
#: Children whose end is not known yet: counted against the target until it is.
OPEN_CHILD = ("sending", "resting", "unknown")

ParentState = Literal["waiting", "armed", "working", "paused", "disarmed", "done", "stopped"]
#: States in which the engine may send children or fire triggers.
LIVE = ("waiting", "armed", "working")
#: States a parent never leaves.
ENDED = ("done", "stopped")

ARMED_HERE = "armed in this terminal — fires only while it runs"


def child_prefix(parent_id: str) -> str:
    """What every child's clientOrderId of ``parent_id`` begins with: the journal, written
    and synced before each send, then names the parent of every child it holds, so a restart
    finds them all even if the algo store lost its last write."""
    return f"tt-{parent_id}-"


def child_order_id(parent_id: str) -> str:
    return f"{child_prefix(parent_id)}{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class Child:
    """One limit order of a parent, as far as the server has shown it."""

    client_order_id: str
    parent_id: str
    size: Decimal  # asset sold
    limit: Decimal  # QUOTE per BASE, as the trader reads it
    sent_at: datetime  # server time, when it was decided
    end_at: datetime | None  # server time
    status: ChildStatus = "sending"
    order_id: str = ""
    filled: Decimal = Decimal(0)  # asset sold that traded
    received: Decimal = Decimal(0)  # asset bought
    detail: str = ""
    filled_at: datetime | None = None  # server time, when the service says it executed

    @property
    def open(self) -> bool:
        return self.status in OPEN_CHILD

    def ended(
        self,
        status: ChildStatus,
        *,
        filled: Decimal = Decimal(0),
        received: Decimal = Decimal(0),
        order_id: str = "",
        detail: str = "",
        filled_at: datetime | None = None,
    ) -> Child:
        return replace(
            self,
            status=status,
            filled=filled,
            received=received,
            order_id=order_id or self.order_id,
            detail=detail,
            filled_at=filled_at,
        )


class _Sums:
    """A parent's children summed: sizes and numbers by status, filled and received."""

    def __init__(self) -> None:
        statuses: tuple[ChildStatus, ...] = ("sending", "resting", "unknown", "filled", "empty")
        self.size: dict[str, Decimal] = dict.fromkeys(statuses, Decimal(0))
        self.number: dict[str, int] = dict.fromkeys(statuses, 0)
        self.filled = Decimal(0)
        self.received = Decimal(0)

    def count(self, child: Child, sign: int) -> None:
        self.size[child.status] += sign * child.size
        self.number[child.status] += sign
        self.filled += sign * child.filled
        self.received += sign * child.received


@dataclass
class Parent:
    """A parent order: its spec, its state, its children; the figures are derived from the
    children every time they are read, so there is no second count to drift."""

    id: str
    spec: AlgoSpec
    account: str
    created_at: datetime  # server time
    state: ParentState = "waiting"
    note: str = ""  # why it is paused, done or stopped, in the trader's words
    arrival_mid: Decimal | None = None  # the mid when it started working
    best: Decimal | None = None  # a trailing stop's best price so far
    fired: bool = False  # a trigger was crossed (its children may go)
    linked: str = ""  # a bracket's exits: the entry's id; the entry: ""
    slices_sent: int = 0  # TWAP slices decided (a slice with nothing to send counts)
    #: When the last TWAP slice was decided, server time (to show the next one's; the engine
    #: times slices on the monotonic clock).
    last_slice_at: datetime | None = None
    #: Worked by another terminal process on this machine: shown, never worked here.
    elsewhere: bool = False
    # The children, by clientOrderId, and their sums kept as they change: every decision
    # reads the figures, and a long parent has thousands of children.
    _children: dict[str, Child] = field(default_factory=dict, repr=False)
    _sums: _Sums = field(default_factory=lambda: _Sums(), repr=False)

    @property
    def children(self) -> tuple[Child, ...]:
        """In the order they were decided."""
        return tuple(self._children.values())

    @children.setter
    def children(self, children: list[Child] | tuple[Child, ...]) -> None:
        self._children = {}
        self._sums = _Sums()
        for child in children:
            self.add_child(child)

    def add_child(self, child: Child) -> None:
        if child.client_order_id in self._children:
            raise ValueError(f"child {child.client_order_id} is already there")
        self._children[child.client_order_id] = child
        self._sums.count(child, 1)

    def replace_child(self, updated: Child) -> None:
        """The same child (by clientOrderId) as now known."""
        old = self._children[updated.client_order_id]
        self._sums.count(old, -1)
        self._children[updated.client_order_id] = updated
        self._sums.count(updated, 1)

    def child(self, client_order_id: str) -> Child | None:
        return self._children.get(client_order_id)

    # -- the rule ---------------------------------------------------------------------------

    @property
    def target(self) -> Decimal:
        return self.spec.amount

    @property
    def filled(self) -> Decimal:
        return self._sums.filled

    @property
    def received(self) -> Decimal:
        return self._sums.received

    @property
    def in_flight(self) -> Decimal:
        return self._sums.size["sending"] + self._sums.size["resting"]

    @property
    def unknown(self) -> Decimal:
        return self._sums.size["unknown"]

    @property
    def room(self) -> Decimal:
        """What may still be sent: never negative, never more than the target allows."""
        return max(Decimal(0), self.target - self.filled - self.in_flight - self.unknown)

    @property
    def blocked(self) -> bool:
        """An unknown child blocks every further child of its parent until it is settled."""
        return self._sums.number["unknown"] > 0

    @property
    def busy(self) -> bool:
        """A child is still open (leaving, resting or unknown)."""
        return any(self._sums.number[status] for status in OPEN_CHILD)

    # -- what the trader reads --------------------------------------------------------------

    @property
    def live(self) -> bool:
        return self.state in LIVE

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def progress(self) -> Decimal:
        """Filled share of the target, 0 – 1."""
        return self.filled / self.target if self.target else Decimal(0)

    def average_price(self) -> Decimal | None:
        """Average fill price, QUOTE per BASE (None before a fill)."""
        if not self.filled or not self.received:
            return None
        if self.spec.side == "sell":
            return average_price(self.filled, self.received)
        return average_price(self.received, self.filled)

    def slippage_bps(self) -> Decimal | None:
        """Average price against the arrival mid, basis points; positive is worse for the
        trader (paid more on a buy, received less on a sell)."""
        price, mid = self.average_price(), self.arrival_mid
        if price is None or mid is None or not mid:
            return None
        move = (price - mid) / mid * 10_000
        return move if self.spec.side == "buy" else -move

    def in_flight_words(self) -> str:
        """What is still out, for a stop or a pause: the service has no cancel."""
        open_children = [child for child in self.children if child.open]
        if not open_children:
            return "nothing in flight"
        resting = sum(1 for child in open_children if child.status == "resting")
        unknown = sum(1 for child in open_children if child.status == "unknown")
        sending = len(open_children) - resting - unknown
        parts = [
            f"{count} {word}"
            for count, word in (
                (sending, "being sent"),
                (resting, "resting until its end time"),
                (unknown, "with its answer lost (looked up until the server shows it)"),
            )
            if count
        ]
        return (
            f"{self.in_flight + self.unknown} {self.spec.source} still out: "
            + ", ".join(parts)
            + " — it cannot be cancelled and may still fill"
        )
