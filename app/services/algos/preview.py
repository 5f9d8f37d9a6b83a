"""What an algo will do, before it is sent, and when a working parent's next child is due. No
Qt: read-only arithmetic over a spec, a book and the balances, tested without a screen.

- ``twap_slices`` / ``clip_slices``: the children as the engine would size them if each filled
  in full (``plans`` sizes each slice from what is left; a slice cut by the participation cap,
  or one skipped for want of a price, moves the rest later), and when a TWAP's are due;
- ``trigger_words``: the trigger and what fires, in the trader's words;
- ``preview``: all of it plus the amount received at the current touch and the what-if and
  checks of the whole parent as one order (``pretrade``): the balances it would leave, the
  refusal the service would likely send for the whole amount;
- ``next_child_at``: the next child's time of a working parent, when the engine's schedule
  makes it known.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, Decimal

from app.domain import Amount, Price
from app.domain.records import Balances, Estimate, TopOfBook
from app.services.algos.parents import ARMED_HERE, Parent
from app.services.algos.plans import (
    BPS,
    DEFAULT_DECIMALS,
    next_try,
    size_down,
    slice_interval,
    trail_trigger,
)
from app.services.algos.specs import AlgoSpec
from app.services.pretrade import Check, CheckLimits, WhatIf, checks, what_if
from app.services.ticket import TicketInput

#: Slices listed one by one; a longer schedule shows its first and last few.
LISTED = 6


@dataclass(frozen=True)
class SlicePlan:
    """One child as planned: its number (1-based), its size (asset sold) and when it is due
    (server time; None when it goes as soon as the one before it is known)."""

    number: int
    size: Decimal
    at: datetime | None


def twap_slices(spec: AlgoSpec, now: datetime, decimals: int = DEFAULT_DECIMALS) -> list[SlicePlan]:
    """Each slice of a TWAP: sized as ``plans`` sizes it (what is left over the slices left, cut
    to the asset's decimals; the last takes the rest), due one interval after the one before."""
    slices: list[SlicePlan] = []
    left_amount = spec.amount
    at = spec.start_at if spec.start_at is not None and spec.start_at > now else now
    for index in range(spec.slices):
        at = at + timedelta(seconds=slice_interval(spec, index))
        left = spec.slices - index
        size = left_amount if left == 1 else size_down(left_amount / left, decimals)
        slices.append(SlicePlan(index + 1, size, at))
        left_amount -= size
    return slices


def clip_slices(spec: AlgoSpec) -> list[SlicePlan]:
    """A clip's children: the display size each, the rest last; each goes when the one before
    it has filled, so none has a time."""
    display = spec.display
    if display is None or display <= 0:
        return []
    count = int((spec.amount / display).to_integral_value(rounding=ROUND_CEILING))
    sizes = [display] * (count - 1) + [spec.amount - display * (count - 1)]
    return [SlicePlan(number + 1, size, None) for number, size in enumerate(sizes)]


def touch_name(spec: AlgoSpec) -> str:
    """The price the order trades at: the ask for a buy, the bid for a sell."""
    return "ask" if spec.side == "buy" else "bid"


def trigger_words(spec: AlgoSpec, top: TopOfBook | None) -> str | None:
    """The trigger and what fires when it is crossed (None for a kind without one)."""
    verb = "buys" if spec.side == "buy" else "sells"
    watched = "mid" if spec.trigger_ref == "mid" else touch_name(spec)
    now_at = ""
    if top is not None:
        price = (
            top.mid if spec.trigger_ref == "mid" else (top.ask if spec.side == "buy" else top.bid)
        )
        now_at = f" (now {price})"
    sends = f"{verb} {spec.amount} {spec.source} marketable at the {touch_name(spec)}"
    if spec.kind in ("stop", "take_profit", "stop_limit") and spec.trigger is not None:
        falls = spec.kind in ("stop", "stop_limit")
        down = falls if spec.side == "sell" else not falls
        move = "falls to" if down else "rises to"
        where = "or below" if down else "or above"
        if spec.kind == "stop_limit":
            sends = f"{verb} {spec.amount} {spec.source} with a limit at {spec.limit_price}"
        return f"when the {watched} {move} {spec.trigger} {where}{now_at}, it {sends}; {ARMED_HERE}"
    if spec.kind == "trailing_stop" and spec.trail_bps is not None:
        level = ""
        if top is not None:
            best = (
                top.mid
                if spec.trigger_ref == "mid"
                else (top.ask if spec.side == "buy" else top.bid)
            )
            level = f" (from now: fires at {trail_trigger(spec, best).quantize(Decimal('0.01'))})"
        direction = "falls" if spec.side == "sell" else "rises"
        return (
            f"when the {watched} {direction} {spec.trail_bps} bps from its best{level}, it "
            f"{sends}; {ARMED_HERE}"
        )
    if spec.kind == "bracket":
        exits = [
            f"{name} at {price}"
            for name, price in (("a take-profit", spec.take_profit), ("a stop", spec.stop_loss))
            if price is not None
        ]
        did = "bought" if spec.side == "buy" else "sold"
        return (
            f"after the entry, {' and '.join(exits)} for what it {did}"
            f" (one cancels the other); {ARMED_HERE}"
        )
    return None


@dataclass(frozen=True)
class AlgoPreview:
    """What the ticket shows before Send (module docstring)."""

    spec: AlgoSpec
    slices: tuple[SlicePlan, ...]
    trigger: str | None
    touch: Decimal | None  # the price the order would trade at now, QUOTE per BASE
    received: Amount | None  # at the touch, for the whole amount
    received_at_limit: Amount | None  # at the first child's collar limit: the least expected
    what_if: WhatIf | None
    checks: tuple[Check, ...]

    def listed_slices(self) -> list[SlicePlan | None]:
        """The slices to list: all of a short schedule; else the first and last few with a
        None where the others are left out."""
        slices = list(self.slices)
        if len(slices) <= LISTED:
            return list(slices)
        half = LISTED // 2
        return [*slices[:half], None, *slices[-half:]]


def received_at(spec: AlgoSpec, price: Decimal) -> Amount:
    """What the whole amount buys (or fetches) at ``price``, QUOTE per BASE."""
    if spec.side == "buy":
        return Amount(spec.amount / price, spec.destination)
    return Amount(spec.amount * price, spec.destination)


def preview(
    spec: AlgoSpec,
    top: TopOfBook | None,
    balances: Balances | None,
    *,
    now: datetime,
    tops: dict[str, TopOfBook] | None = None,
    limits: CheckLimits | None = None,
    decimals: int = DEFAULT_DECIMALS,
) -> AlgoPreview:
    """The preview of ``spec`` on this book and these balances (``tops``: every book the
    checks may value the amount with; by default the pair's)."""
    if spec.kind == "twap":
        slices = tuple(twap_slices(spec, now, decimals))
    elif spec.kind == "clip":
        slices = tuple(clip_slices(spec))
    else:
        slices = ()
    touch = None
    received = least = None
    estimate = None
    if top is not None:
        touch = top.ask if spec.side == "buy" else top.bid
        if touch > 0:
            received = received_at(spec, touch)
            collar = spec.collar_bps / BPS
            limit = touch * (1 + collar) if spec.side == "buy" else touch * (1 - collar)
            if spec.price_limit is not None:
                limit = (
                    min(limit, spec.price_limit)
                    if spec.side == "buy"
                    else max(limit, spec.price_limit)
                )
            least = received_at(spec, limit)
            pair = spec.pair_side.pair
            estimate = Estimate(
                Amount(spec.amount, spec.source), received, Price(touch, pair.base, pair.quote)
            )
        else:
            touch = None
    whole = TicketInput(spec.source, spec.destination, spec.amount)
    book = dict(tops or ({} if top is None else {spec.pair: top}))
    found: tuple[Check, ...] = ()
    after = None
    if balances is not None:
        after = what_if(whole, balances, estimate)
    found = tuple(checks(whole, balances, book, limits, override=True))
    return AlgoPreview(spec, slices, trigger_words(spec, top), touch, received, least, after, found)


def next_child_at(parent: Parent) -> datetime | None:
    """When the next child of a working parent is due (server time), where the engine's
    schedule makes it known: a start time not reached, a TWAP's next slice, a retry at the
    credit window. None otherwise (it goes when a price or a child's end allows)."""
    if not parent.live:
        return None
    spec = parent.spec
    if spec.start_at is not None and not parent.children:
        return spec.start_at
    if spec.kind == "twap":
        if parent.slices_sent >= spec.slices:
            return None
        if parent.slices_sent == 0 or parent.last_slice_at is None:
            return None  # the first goes at once (or, restored, at once when resumed)
        return parent.last_slice_at + timedelta(seconds=slice_interval(spec, parent.slices_sent))
    if spec.kind == "credit_retry" and parent.children and not parent.busy:
        refused = parent.children[-1]
        return next_try(spec, refused.detail, refused.sent_at)
    return None


__all__ = [
    "AlgoPreview",
    "SlicePlan",
    "clip_slices",
    "next_child_at",
    "preview",
    "received_at",
    "touch_name",
    "trigger_words",
    "twap_slices",
]
