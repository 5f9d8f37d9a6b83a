"""The trader's fills on the chart: where each fill of the shown pair goes (time, price, side)
and how big its marker is.

Sources: the session's own fills (``bridge.own_fills``: every order this terminal saw filled —
hand orders, ladder clicks, RFQ accepts, algo children) and the execution engine's children
(``bridge.algos``), which also holds the fills of parents restored from an earlier run; a fill in
both is marked once. A fill's marker is a triangle up for a buy, down for a sell, at its
average price in QUOTE per BASE and the time the service says it executed (else the time it was
sent).

Size: the marker grows with the fill's size in BASE, relative to the largest fill shown: from
``MARKER_MIN`` pixels across (a fill of next to nothing) to ``MARKER_MAX`` (the largest), by
the square root of the size ratio, so a fill twice as big looks about twice as heavy rather
than twice as wide. Bounded both ways: a dust fill stays visible and a block never covers the
candles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from app.services.algos.engine import ExecutionEngine
from app.services.own_fills import OwnFills

#: Marker sizes, pixels across: the smallest and the largest fill shown.
MARKER_MIN = 7.0
MARKER_MAX = 19.0


@dataclass(frozen=True)
class FillMark:
    """One fill as the chart draws it; floats, because pixels are not money."""

    at: float  # epoch seconds, this machine's clock
    price: float  # QUOTE per BASE
    side: str  # "buy" or "sell"
    base: float  # BASE bought or sold


def fill_marks(
    own: OwnFills, engine: ExecutionEngine | None, pair: str | None, offset: timedelta
) -> list[FillMark]:
    """The trader's fills on ``pair``: the session's own, then the engine's children not among
    them; ``offset`` is the server clock's lead over this machine's (``bridge.clock_offset``)."""
    if pair is None:
        return []
    marks = [
        FillMark(
            (fill.at - offset).timestamp() if fill.at is not None else math.nan,
            float(fill.trade.price),
            fill.trade.pair_side.side,
            float(fill.trade.base),
        )
        for fill in own.of_pair(pair)
    ]
    marks = [mark for mark in marks if math.isfinite(mark.at)]
    return marks + algo_fill_marks(engine, pair, offset, skip=own)


def algo_fill_marks(
    engine: ExecutionEngine | None,
    pair: str | None,
    offset: timedelta,
    skip: OwnFills | None = None,
) -> list[FillMark]:
    """The filled children of the engine's parents on ``pair`` (those ``skip`` holds left
    out); ``offset`` is the server clock's lead over this machine's."""
    marks: list[FillMark] = []
    if engine is None or pair is None:
        return marks
    for parent in engine.parents.values():
        spec = parent.spec
        if spec.pair != pair:
            continue
        for child in parent.children:
            if child.status != "filled" or not child.filled or not child.received:
                continue
            if skip is not None and child.client_order_id in skip:
                continue
            # a buy sells QUOTE for BASE, a sell BASE for QUOTE
            if spec.side == "buy":
                base, quote = child.received, child.filled
            else:
                base, quote = child.filled, child.received
            price: Decimal = quote / base
            at = ((child.filled_at or child.sent_at) - offset).timestamp()
            marks.append(FillMark(at, float(price), spec.side, float(base)))
    return marks


def marker_sizes(bases: Sequence[float]) -> list[float]:
    """Pixels across for each fill of ``bases`` (see the module's rule)."""
    largest = max((b for b in bases if math.isfinite(b) and b > 0), default=0.0)
    if largest <= 0:
        return [MARKER_MIN for _ in bases]
    span = MARKER_MAX - MARKER_MIN
    return [
        MARKER_MIN + span * math.sqrt(min(1.0, max(0.0, b / largest)))
        if math.isfinite(b)
        else MARKER_MIN
        for b in bases
    ]
