"""What a parent does next, decided from its state, the book and the time: pure functions, no
I/O, so every algo's rule is tested on plain values.

``decide`` answers one of: send a child (``Send``), wait (``Wait``: a number of seconds, or
until something changes — a new book, a child's end, a resume), a trigger crossed (``Fire``),
a trailing stop's best price moved (``Track``), a TWAP slice with nothing to send
(``Skip``), or the parent is finished (``Finish``). The engine carries the decision out and
asks again.

Every child size passes through ``room`` (``app.services.algos.parents``): no decision can send
more than the target less what is filled, in flight or unknown.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, Decimal

from app.domain.records import TopOfBook
from app.services.algos.credit_window import CreditWindow, is_credit_refusal
from app.services.algos.parents import Parent
from app.services.algos.specs import AlgoSpec

BPS = Decimal(10_000)
#: Decimals of a child size when the service does not list the asset's.
DEFAULT_DECIMALS = 8


@dataclass(frozen=True)
class Send:
    size: Decimal  # asset sold
    limit: Decimal  # QUOTE per BASE
    seconds: int  # the child's end, from when it leaves
    slice: bool = False  # a TWAP slice (counted when sent)


@dataclass(frozen=True)
class Wait:
    seconds: float | None  # None: until something changes
    why: str


@dataclass(frozen=True)
class Fire:
    why: str


@dataclass(frozen=True)
class Track:
    best: Decimal


@dataclass(frozen=True)
class Skip:
    why: str


@dataclass(frozen=True)
class Finish:
    note: str


Decision = Send | Wait | Fire | Track | Skip | Finish


@dataclass(frozen=True)
class Moment:
    """What a decision reads besides the parent: the book of its pair, the server's time, the
    seconds since its last TWAP slice (monotonic; None before the first) and the decimals of
    the asset sold."""

    top: TopOfBook | None
    now: datetime
    since_slice: float | None = None
    decimals: int = DEFAULT_DECIMALS
    price_increment: Decimal | None = None


def decide(parent: Parent, moment: Moment) -> Decision:
    spec = parent.spec
    if parent.blocked:
        return Wait(None, "a child's answer was lost: nothing more is sent until it is settled")
    if spec.start_at is not None and moment.now < spec.start_at and not parent.children:
        return Wait((spec.start_at - moment.now).total_seconds(), "waiting for its start time")
    return _PLANS[spec.kind](parent, moment)


# -- prices --------------------------------------------------------------------------------------


def touch(spec: AlgoSpec, top: TopOfBook) -> Decimal:
    """The price the order would trade at now: the ask for a buy, the bid for a sell."""
    return top.ask if spec.side == "buy" else top.bid


def reference(spec: AlgoSpec, top: TopOfBook) -> Decimal:
    """The price a trigger watches (the touch, or the mid)."""
    return top.mid if spec.trigger_ref == "mid" else touch(spec, top)


def marketable_limit(spec: AlgoSpec, top: TopOfBook, increment: Decimal | None) -> Decimal | None:
    """The touch plus the collar, never beyond the price limit; None when the touch itself is
    beyond it (nothing may be sent at this price)."""
    price = touch(spec, top)
    if price <= 0:
        return None
    collar = spec.collar_bps / BPS
    if spec.side == "buy":
        if spec.price_limit is not None and price > spec.price_limit:
            return None
        limit = price * (1 + collar)
        if spec.price_limit is not None:
            limit = min(limit, spec.price_limit)
        return _round(limit, increment, ROUND_FLOOR)  # a lower buy limit is only tighter
    if spec.price_limit is not None and price < spec.price_limit:
        return None
    limit = price * (1 - collar)
    if spec.price_limit is not None:
        limit = max(limit, spec.price_limit)
    return _round(limit, increment, ROUND_CEILING)


def _round(price: Decimal, increment: Decimal | None, rounding: str) -> Decimal:
    if increment is None or increment <= 0:
        return price.quantize(Decimal("1e-12"), rounding=rounding).normalize()
    return ((price / increment).to_integral_value(rounding=rounding) * increment).normalize()


def size_down(size: Decimal, decimals: int) -> Decimal:
    """A child size the service takes: cut, never rounded up (it must fit the room)."""
    return size.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_DOWN).normalize()


def shown_size(spec: AlgoSpec, top: TopOfBook) -> Decimal:
    """The size shown at the touch, in the asset sold."""
    if spec.side == "buy":
        return top.ask_size * top.ask
    return top.bid_size


# -- the algos -----------------------------------------------------------------------------------


def _marketable(parent: Parent, moment: Moment, size: Decimal) -> Decision:
    """One marketable child of ``size`` (cut to the room), or a wait for a price."""
    spec = parent.spec
    if parent.busy:
        return Wait(None, "the last child is not known yet")
    room = parent.room
    if room <= 0:
        return Finish(_finished(parent))
    if moment.top is None:
        return Wait(None, f"no fresh price for {spec.pair}")
    limit = marketable_limit(spec, moment.top, moment.price_increment)
    if limit is None:
        return Wait(None, "the price is beyond the price limit")
    size = min(size, room)
    cut = size if size == room else size_down(size, moment.decimals)
    if cut <= 0:
        return Finish(_finished(parent))
    return Send(cut, limit, spec.child_seconds)


def _clip(parent: Parent, moment: Moment) -> Decision:
    display = parent.spec.display or parent.room
    return _marketable(parent, moment, display)


def _twap(parent: Parent, moment: Moment) -> Decision:
    spec = parent.spec
    if parent.slices_sent >= spec.slices:
        if parent.busy:
            return Wait(None, "the last slices are ending")
        return Finish(_finished(parent))
    if parent.room <= 0:
        if parent.busy:
            return Wait(None, "the target is in flight")
        return Finish(_finished(parent))
    due = slice_interval(spec, parent.slices_sent)
    if moment.since_slice is not None and moment.since_slice < due:
        return Wait(due - moment.since_slice, "until the next slice")
    if moment.top is None:
        if parent.slices_sent == 0:  # the schedule starts with the first price, not without it
            return Wait(None, f"no fresh price for {spec.pair}")
        return Skip(f"no fresh price for {spec.pair}: the slice is carried to the next")
    limit = marketable_limit(spec, moment.top, moment.price_increment)
    if limit is None:
        return Skip("the price is beyond the price limit: the slice is carried to the next")
    left = spec.slices - parent.slices_sent
    room = parent.room
    size = room if left == 1 else size_down(room / left, moment.decimals)
    if spec.participation is not None:
        cap = size_down(shown_size(spec, moment.top) * spec.participation, moment.decimals)
        size = min(size, cap)
    if size <= 0:
        return Skip("nothing to send in this slice")
    return Send(size, limit, spec.child_seconds, slice=True)


def slice_interval(spec: AlgoSpec, index: int) -> float:
    """Seconds from slice ``index - 1`` to slice ``index`` (the first goes at once); each
    interval is moved by up to ``randomise`` of itself, the same way on every run."""
    if index == 0 or spec.slices <= 1:
        return 0.0
    interval = float(spec.duration_seconds) / (spec.slices - 1)
    if not spec.randomise:
        return interval
    jitter = random.Random(spec.seed * 1_000_003 + index).uniform(-1, 1)
    return max(0.0, interval * (1 + float(spec.randomise) * jitter))


def crossed(spec: AlgoSpec, price: Decimal, best: Decimal | None) -> bool:
    """Whether ``price`` crosses the trigger (never before: equality fires, nothing short)."""
    if spec.kind == "trailing_stop":
        if best is None or spec.trail_bps is None:
            return False
        level = trail_trigger(spec, best)
        return price <= level if spec.side == "sell" else price >= level
    trigger = spec.trigger
    if trigger is None:
        return False
    falls = spec.kind in ("stop", "stop_limit")  # a sell stop fires on a fall, a buy on a rise
    if spec.side == "sell":
        return price <= trigger if falls else price >= trigger
    return price >= trigger if falls else price <= trigger


def trail_trigger(spec: AlgoSpec, best: Decimal) -> Decimal:
    trail = (spec.trail_bps or Decimal(0)) / BPS
    return best * (1 - trail) if spec.side == "sell" else best * (1 + trail)


def _armed(parent: Parent, moment: Moment) -> Decision | None:
    """A trigger's decision while not fired (None once it has)."""
    if parent.fired:
        return None
    spec = parent.spec
    if moment.top is None:
        return Wait(None, f"armed, no fresh price for {spec.pair}")
    price = reference(spec, moment.top)
    if spec.kind == "trailing_stop":
        best = parent.best
        better = best is None or (price > best if spec.side == "sell" else price < best)
        if better:
            return Track(price)
    if crossed(spec, price, parent.best):
        return Fire(f"the {spec.trigger_ref} {price} crossed the trigger")
    return Wait(None, "armed")


def _stop(parent: Parent, moment: Moment) -> Decision:
    armed = _armed(parent, moment)
    if armed is not None:
        return armed
    return _marketable(parent, moment, parent.room)


def _resting_once(parent: Parent, moment: Moment, limit: Decimal | None) -> Decision:
    """One resting limit child of the whole amount; finished when it has ended."""
    spec = parent.spec
    if limit is None:
        return _marketable(parent, moment, parent.room)
    if parent.busy:
        return Wait(None, "resting until its end time")
    if parent.children:
        return Finish(_finished(parent))
    return Send(parent.room, limit, spec.rest_seconds)


def _stop_limit(parent: Parent, moment: Moment) -> Decision:
    armed = _armed(parent, moment)
    if armed is not None:
        return armed
    return _resting_once(parent, moment, parent.spec.limit_price)


def _timed(parent: Parent, moment: Moment) -> Decision:
    return _resting_once(parent, moment, parent.spec.limit_price)


def _credit_retry(parent: Parent, moment: Moment) -> Decision:
    spec = parent.spec
    if parent.busy:
        return Wait(None, "the order is not known yet")
    last = parent.children[-1] if parent.children else None
    if last is not None and not (last.status == "empty" and is_credit_refusal(last.detail)):
        return Finish(_finished(parent))  # the order went through (or was refused otherwise)
    if spec.deadline is not None and moment.now >= spec.deadline:
        return Finish("deadline passed: credit did not open in time")
    if last is not None:
        due = next_try(spec, last.detail, last.sent_at)
        if moment.now < due:
            return Wait((due - moment.now).total_seconds(), "waiting for the credit window")
    if spec.limit_price is not None:
        return Send(parent.room, spec.limit_price, spec.rest_seconds)
    return _marketable(parent, moment, parent.room)


def next_try(spec: AlgoSpec, refusal: str, refused_at: datetime) -> datetime:
    """When to send again after a credit refusal: the window's next opening when the service
    named it (or the spec carries it), else ``retry_seconds`` later."""
    window = CreditWindow.find(refusal) or CreditWindow.find(spec.window)
    if window is not None:
        return window.next_open(refused_at + _SECOND)
    return refused_at + timedelta(seconds=spec.retry_seconds)


def _bracket(parent: Parent, moment: Moment) -> Decision:
    """The entry: a resting limit when it has a price, else marketable (its exits are armed by
    the engine once it has finished, for what it filled)."""
    return _resting_once(parent, moment, parent.spec.limit_price)


def _finished(parent: Parent) -> str:
    if parent.filled >= parent.target:
        return "filled"
    source = parent.spec.source
    return f"ended with {parent.target - parent.filled} {source} not filled"


_SECOND = timedelta(seconds=1)

_PLANS: dict[str, Callable[[Parent, Moment], Decision]] = {
    "twap": _twap,
    "clip": _clip,
    "stop": _stop,
    "take_profit": _stop,
    "trailing_stop": _stop,
    "stop_limit": _stop_limit,
    "bracket": _bracket,
    "timed": _timed,
    "credit_retry": _credit_retry,
}
