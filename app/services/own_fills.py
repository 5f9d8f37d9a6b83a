"""The trader's own fills this session: every order this terminal saw filled — a hand order, a
click on the ladder, an RFQ accept, an algo's child, an order settled after its answer was lost
or found filled while resting — kept so a chart can mark them.

Why a list of its own: each desk knows its fill when it happens and tells the session
(``TerminalSession.after_fill``); without one record of them, a view would need its own order
poller (a second copy of the orders feed per chart). Bounded: the newest ``LIMIT`` fills.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.domain.pair_terms import Trade
from app.domain.records import Order

#: Fills kept (the oldest go first).
LIMIT = 2000


@dataclass(frozen=True)
class OwnFill:
    """One fill in pair terms, with the service's time of execution (else of submission)."""

    key: str  # the clientOrderId, else the order id
    trade: Trade
    at: datetime | None


class OwnFills:
    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._fills: OrderedDict[str, OwnFill] = OrderedDict()

    def add(self, order: Order, known_pairs: Iterable[str] = ()) -> OwnFill | None:
        """Keep ``order`` if it filled (once per order, however often it is told)."""
        trade = Trade.of(order, known_pairs)
        if trade is None:
            return None
        key = order.client_order_id or order.order_id
        fill = OwnFill(key, trade, order.result.executed_at or order.submitted_at)
        self._fills[key] = fill
        self._fills.move_to_end(key)
        while len(self._fills) > self._limit:
            self._fills.popitem(last=False)
        return fill

    def of_pair(self, pair: str) -> list[OwnFill]:
        """The fills of ``pair`` (as ``BASE/QUOTE``), oldest first."""
        return [f for f in self._fills.values() if str(f.trade.pair_side.pair) == pair]

    def __contains__(self, key: object) -> bool:
        return key in self._fills

    def __len__(self) -> int:
        return len(self._fills)
