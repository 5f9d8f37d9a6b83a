"""What a trader asks an algo to do: one ``AlgoSpec`` per parent order, frozen, written to the
algo store as JSON and read back identical (Decimals as text, times in ISO form).

Amounts are in the asset the order sells — the base for a sell, the quote for a buy — because
that is what the service executes: an order's ``size`` is in its source asset, so a parent
whose target is in the asset sold can be held to it exactly, whatever the prices do. A buy
of "about 1 BTC" is entered as the quote it spends; the algo ticket shows the conversion at the
current ask before anything is sent.

Prices are QUOTE per BASE, as every screen shows them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, cast

from app.domain import AssetPair, format_timestamp, parse_timestamp
from app.domain.money import format_decimal
from app.domain.pair_terms import PairSide, Side

AlgoKind = Literal[
    "twap",
    "clip",
    "stop",
    "stop_limit",
    "take_profit",
    "trailing_stop",
    "bracket",
    "timed",
    "credit_retry",
]
#: Which price a trigger watches: the touch the order would trade at (bid for a sell, ask for
#: a buy) or the mid.
TriggerRef = Literal["touch", "mid"]


@dataclass(frozen=True)
class KindInfo:
    """How an algo kind is named and what it watches."""

    label: str
    armed: bool  # waits on the book for a trigger (armed in this terminal)
    summary: str


#: The algos, as the ticket lists them and the user guide (resources/manual) describes them.
KINDS: dict[str, KindInfo] = {
    "twap": KindInfo("TWAP", False, "slices spread evenly over a duration"),
    "clip": KindInfo("Clip", False, "slices of a display size at the touch, one at a time"),
    "stop": KindInfo("Stop", True, "a marketable order when the price crosses the stop"),
    "stop_limit": KindInfo("Stop-limit", True, "a resting limit when the price crosses the stop"),
    "take_profit": KindInfo("Take-profit", True, "a marketable order at a better price"),
    "trailing_stop": KindInfo("Trailing stop", True, "a stop that follows the best price"),
    "bracket": KindInfo("Bracket", False, "an entry, then a take-profit and a stop on its fill"),
    "timed": KindInfo("Timed", False, "one order sent at a time"),
    "credit_retry": KindInfo(
        "Retry at credit window", False, "an order refused for credit, sent when credit opens"
    ),
}


@dataclass(frozen=True)
class AlgoSpec:
    """A parent order: ``side`` of ``pair``, ``amount`` of the asset sold, worked by ``kind``.

    Every child is a limit order. A marketable child is priced at the touch plus ``collar_bps``
    (never beyond ``price_limit``) and ends ``child_seconds`` after it leaves: it fills at once
    or expires, since the service cannot cancel. The other fields belong to some kinds only
    (``terms`` says which); the rest keep their defaults.
    """

    kind: AlgoKind
    pair: str
    side: Side
    amount: Decimal
    price_limit: Decimal | None = None  # never buy above, never sell below (QUOTE per BASE)
    collar_bps: Decimal = Decimal(10)
    child_seconds: int = 10
    start_at: datetime | None = None  # server time; None: at once
    # TWAP
    duration_seconds: Decimal = Decimal(0)
    slices: int = 0
    randomise: Decimal = Decimal(0)  # share of each interval moved at random (0 – 0.5)
    participation: Decimal | None = None  # a child takes at most this share of the shown size
    seed: int = 0  # the randomisation's seed: the schedule is the same after a restart
    # clip
    display: Decimal | None = None  # clip size, asset sold
    # stop, stop-limit, take-profit, trailing stop
    trigger: Decimal | None = None
    trigger_ref: TriggerRef = "touch"
    trail_bps: Decimal | None = None
    limit_price: Decimal | None = None  # stop-limit's (and a timed or retried order's) limit
    rest_seconds: int = 3600  # end of a resting child (stop-limit, timed, retry with a limit)
    # bracket: the entry is this spec's amount; exits sell what it bought
    take_profit: Decimal | None = None
    stop_loss: Decimal | None = None
    # retry at the credit window
    deadline: datetime | None = None  # server time
    window: str = ""  # the credit hours as the service stated them, when it did
    retry_seconds: int = 300  # probe this often when the window is not known

    @property
    def pair_side(self) -> PairSide:
        return PairSide(AssetPair.parse(self.pair), self.side)

    @property
    def source(self) -> str:
        """The asset sold (the amount's asset)."""
        return self.pair_side.source

    @property
    def destination(self) -> str:
        return self.pair_side.destination

    @property
    def info(self) -> KindInfo:
        return KINDS[self.kind]

    def validate(self) -> None:
        """ValueError, in the trader's words, for a spec no algo could work."""
        if self.kind not in KINDS:
            raise ValueError(f"unknown algo {self.kind!r}")
        if self.side not in ("buy", "sell"):
            raise ValueError("side is Buy or Sell")
        AssetPair.parse(self.pair, "pair")
        if not self.amount.is_finite() or self.amount <= 0:
            raise ValueError(f"the amount must be greater than zero, not {self.amount}")
        if self.collar_bps < 0 or self.collar_bps > 1000:
            raise ValueError("the collar is between 0 and 1,000 basis points")
        if not 1 <= self.child_seconds <= 3600:
            raise ValueError("a marketable child ends within 1 to 3,600 seconds")
        for name in ("price_limit", "trigger", "limit_price", "take_profit", "stop_loss"):
            value = getattr(self, name)
            if value is not None and (not value.is_finite() or value <= 0):
                raise ValueError(f"{name.replace('_', ' ')} must be greater than zero")
        _KIND_RULES[self.kind](self)

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=_text, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> AlgoSpec:
        raw: dict[str, Any] = json.loads(text)
        values: dict[str, Any] = {}
        for spec_field in fields(cls):
            if spec_field.name not in raw:
                continue
            values[spec_field.name] = _read(spec_field.name, raw[spec_field.name])
        return cls(**values)

    def with_amount(self, amount: Decimal) -> AlgoSpec:
        return replace(self, amount=amount)


# -- rules per kind ------------------------------------------------------------------------------


def _twap(spec: AlgoSpec) -> None:
    if spec.slices < 1 or spec.slices > 10_000:
        raise ValueError("a TWAP has 1 to 10,000 slices")
    if spec.duration_seconds < 0:
        raise ValueError("a TWAP's duration cannot be negative")
    if not Decimal(0) <= spec.randomise <= Decimal("0.5"):
        raise ValueError("randomisation is between 0 and 50 % of a slice interval")
    if spec.participation is not None and not Decimal(0) < spec.participation <= 1:
        raise ValueError("the participation cap is above 0 and at most 100 % of the shown size")


def _clip(spec: AlgoSpec) -> None:
    if spec.display is None or spec.display <= 0:
        raise ValueError("a clip needs a display size greater than zero")


def _trigger(spec: AlgoSpec) -> None:
    if spec.kind == "trailing_stop":
        if spec.trail_bps is None or not Decimal(0) < spec.trail_bps < 5000:
            raise ValueError("a trailing stop needs a trail between 0 and 5,000 basis points")
    elif spec.trigger is None:
        raise ValueError(f"a {KINDS[spec.kind].label.lower()} needs a trigger price")
    if spec.kind == "stop_limit" and spec.limit_price is None:
        raise ValueError("a stop-limit needs a limit price")


def _bracket(spec: AlgoSpec) -> None:
    if spec.take_profit is None and spec.stop_loss is None:
        raise ValueError("a bracket needs a take-profit, a stop, or both")


def _timed(spec: AlgoSpec) -> None:
    if spec.start_at is None:
        raise ValueError("a timed order needs a start time")


def _credit_retry(spec: AlgoSpec) -> None:
    if spec.deadline is None:
        raise ValueError("a retry at the credit window needs a deadline")
    if spec.retry_seconds < 1:
        raise ValueError("retry at most every second")


_KIND_RULES: dict[str, Any] = {
    "twap": _twap,
    "clip": _clip,
    "stop": _trigger,
    "stop_limit": _trigger,
    "take_profit": _trigger,
    "trailing_stop": _trigger,
    "bracket": _bracket,
    "timed": _timed,
    "credit_retry": _credit_retry,
}

_DECIMALS = {
    "amount",
    "price_limit",
    "collar_bps",
    "duration_seconds",
    "randomise",
    "participation",
    "display",
    "trigger",
    "trail_bps",
    "limit_price",
    "take_profit",
    "stop_loss",
}
_TIMES = {"start_at", "deadline"}


def _text(value: object) -> str:
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return format_timestamp(value)
    raise TypeError(f"cannot write {type(value).__name__}")


def _read(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in _DECIMALS:
        return Decimal(str(value))
    if name in _TIMES:
        return parse_timestamp(str(value))
    return cast(Any, value)


__all__ = ["KINDS", "AlgoKind", "AlgoSpec", "KindInfo", "TriggerRef"]
