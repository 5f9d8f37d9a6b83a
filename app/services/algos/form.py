"""The algo ticket's fields as the trader typed them, turned into one ``AlgoSpec``. No Qt.

Which fields a kind needs is a table (``KIND_FIELDS``): the ticket shows only those. Every
field is text until ``AlgoForm.build``, which either returns the spec the confirmation shows
and Send submits, or raises ``TicketError`` naming the field to fix (the text stays on
screen). Times are typed as minutes (a duration, or from now) because that is how a trader
sets a TWAP or a start; the spec carries seconds and server times.

The amount is in the asset sold (``specs``): a switch of side would make the same digits mean
another asset, so ``switch_side`` converts it at the ask (what a buy pays for the base) and says
so, or clears it when there is no price to convert at.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Literal, cast

from app.domain import AssetPair
from app.domain.pair_terms import PairSide, Side
from app.domain.records import TopOfBook
from app.services.algos.specs import KINDS, AlgoKind, AlgoSpec, TriggerRef
from app.services.ticket import TicketError, parse_number

FieldKind = Literal["price", "amount", "bps", "percent", "count", "minutes", "seconds", "ref"]


@dataclass(frozen=True)
class FieldInfo:
    """One input of the ticket: its label, what it holds, whether it may stay empty, and the
    text a new ticket starts with."""

    key: str
    label: str
    kind: FieldKind
    optional: bool = False
    default: str = ""
    tip: str = ""


FIELDS: dict[str, FieldInfo] = {
    info.key: info
    for info in (
        FieldInfo("duration", "Duration (min)", "minutes", default="10",
                  tip="Minutes from the first slice to the last"),
        FieldInfo("slices", "Slices", "count", default="10", tip="How many children"),
        FieldInfo("randomise", "Randomise (%)", "percent", optional=True, default="0",
                  tip="Share of each interval moved at random, 0 to 50 %"),
        FieldInfo("participation", "Max of shown size (%)", "percent", optional=True,
                  tip="A slice takes at most this share of the size shown at the touch"),
        FieldInfo("display", "Clip size", "amount", tip="Each child's size, in the asset sold"),
        FieldInfo("trigger", "Trigger price", "price", tip="QUOTE per BASE"),
        FieldInfo("trail_bps", "Trail (bps)", "bps", default="50",
                  tip="Distance from the best price, basis points"),
        FieldInfo("trigger_ref", "Watches", "ref", default="touch",
                  tip="The touch the order trades at (bid for a sell, ask for a buy), or the mid"),
        FieldInfo("limit_price", "Limit price", "price", tip="QUOTE per BASE"),
        FieldInfo("entry_limit", "Entry limit", "price", optional=True,
                  tip="Empty: the entry is marketable"),
        FieldInfo("take_profit", "Take-profit", "price", optional=True, tip="QUOTE per BASE"),
        FieldInfo("stop_loss", "Stop-loss", "price", optional=True, tip="QUOTE per BASE"),
        FieldInfo("start", "Start in (min)", "minutes", tip="Minutes from now"),
        FieldInfo("deadline", "Give up after (min)", "minutes", default="480",
                  tip="Minutes from now"),
        FieldInfo("retry_seconds", "Retry every (s)", "seconds", default="300",
                  tip="When the service does not name its credit window"),
        FieldInfo("price_limit", "Price limit", "price", optional=True,
                  tip="Never buy above, never sell below (QUOTE per BASE)"),
        FieldInfo("collar_bps", "Collar (bps)", "bps", default="10",
                  tip="A marketable child is priced this far through the touch"),
        FieldInfo("child_seconds", "Child lasts (s)", "seconds", default="10",
                  tip="A marketable child expires this long after it leaves: no cancel exists"),
    )
}  # fmt: skip

_MARKETABLE = ("price_limit", "collar_bps", "child_seconds")
#: The fields each kind shows, in order (the common ones last).
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "twap": ("duration", "slices", "randomise", "participation", *_MARKETABLE),
    "clip": ("display", *_MARKETABLE),
    "stop": ("trigger", "trigger_ref", *_MARKETABLE),
    "take_profit": ("trigger", "trigger_ref", *_MARKETABLE),
    "trailing_stop": ("trail_bps", "trigger_ref", *_MARKETABLE),
    "stop_limit": ("trigger", "limit_price", "trigger_ref"),
    "bracket": ("entry_limit", "take_profit", "stop_loss", "collar_bps", "child_seconds"),
    "timed": ("start", "entry_limit"),
    "credit_retry": ("deadline", "entry_limit", "retry_seconds"),
}
assert set(KIND_FIELDS) == set(KINDS)

TRIGGER_REFS: dict[str, TriggerRef] = {"touch": "touch", "mid": "mid"}


def amount_words(pair: str, side: Side) -> str:
    """What the amount field holds: ``USD to spend`` for a buy, ``BTC to sell`` for a sell."""
    pair_side = PairSide(AssetPair.parse(pair), side)
    return f"{pair_side.source} to {'spend' if side == 'buy' else 'sell'}"


@dataclass(frozen=True)
class AlgoForm:
    """The ticket as typed: kind, pair, side, the amount (asset sold) and the kind's fields."""

    kind: str
    pair: str
    side: Side
    amount: str
    values: Mapping[str, str] = field(default_factory=dict)

    def text(self, key: str) -> str:
        return self.values.get(key, FIELDS[key].default).strip()

    def build(self, now: datetime) -> AlgoSpec:
        """The spec, or TicketError naming the first field to fix. ``now``: server time, for
        the fields typed as minutes from now."""
        if self.kind not in KINDS:
            raise TicketError("kind", "choose an algo")
        if not self.pair:
            raise TicketError("pair", "choose a pair")
        amount = parse_number(self.amount, "amount", "an amount")
        values: dict[str, object] = {}
        for key in KIND_FIELDS[self.kind]:
            self._read(key, now, values)
        spec = AlgoSpec(
            cast(AlgoKind, self.kind),
            self.pair,
            self.side,
            amount,
            **values,  # type: ignore[arg-type]
        )
        try:
            spec.validate()
        except ValueError as exc:
            raise TicketError(_field_of(str(exc)), str(exc)) from None
        return spec

    def _read(self, key: str, now: datetime, values: dict[str, object]) -> None:
        info = FIELDS[key]
        text = self.text(key)
        if not text:
            if info.optional:
                return
            raise TicketError(key, f"enter the {info.label.split(' (')[0].lower()}")
        if info.kind == "ref":
            if text not in TRIGGER_REFS:
                raise TicketError(key, "a trigger watches the touch or the mid")
            values["trigger_ref"] = TRIGGER_REFS[text]
            return
        number = parse_number(text, key, f"a {info.label.split(' (')[0].lower()}")
        whole = info.kind in ("count", "seconds")
        if whole and number != number.to_integral_value():
            raise TicketError(key, f"{info.label.lower()} is a whole number")
        name, convert = _CONVERT.get(key, (key, _same))
        values[name] = convert(number, now)


def _same(number: Decimal, _: datetime) -> object:
    return number


def _minutes_from(number: Decimal, now: datetime) -> object:
    return now + timedelta(minutes=float(number))


#: Field -> (the spec's field, the typed number as the spec holds it).
_CONVERT: dict[str, tuple[str, Callable[[Decimal, datetime], object]]] = {
    "duration": ("duration_seconds", lambda n, _: n * 60),
    "slices": ("slices", lambda n, _: int(n)),
    "randomise": ("randomise", lambda n, _: n / 100),
    "participation": ("participation", lambda n, _: n / 100),
    "start": ("start_at", _minutes_from),
    "deadline": ("deadline", _minutes_from),
    "entry_limit": ("limit_price", _same),
    "retry_seconds": ("retry_seconds", lambda n, _: int(n)),
    "child_seconds": ("child_seconds", lambda n, _: int(n)),
}


def _field_of(message: str) -> str:
    """The field a spec's refusal is about, when its words name one (else the amount)."""
    for words, key in (
        ("slices", "slices"),
        ("duration", "duration"),
        ("randomis", "randomise"),
        ("participation", "participation"),
        ("display", "display"),
        ("trail", "trail_bps"),
        ("trigger", "trigger"),
        ("limit price", "limit_price"),
        ("collar", "collar_bps"),
        ("child ends", "child_seconds"),
        ("take-profit", "take_profit"),
        ("deadline", "deadline"),
        ("start time", "start"),
        ("retry", "retry_seconds"),
    ):
        if words in message:
            return key
    return "amount"


@dataclass(frozen=True)
class Switched:
    """The amount after a side switch: ``text`` for the field (empty: cleared) and ``words``
    saying what happened, shown beside it."""

    text: str
    words: str


def switch_side(
    amount_text: str,
    pair: str,
    new_side: Side,
    top: TopOfBook | None,
    decimals: Mapping[str, int],
) -> Switched:
    """Convert the typed amount of the old side into the new side's asset at the ask (the same
    quantity of base), cut to the asset's decimals; cleared when it is empty, not a number or
    there is no price."""
    text = amount_text.strip()
    if not text:
        return Switched("", "")
    assets = AssetPair.parse(pair)
    old_side: Side = "sell" if new_side == "buy" else "buy"
    old_asset = PairSide(assets, old_side).source
    try:
        amount = parse_number(text, "amount", "an amount")
    except TicketError:
        return Switched("", f"{text!r} cleared: it was not a number of {old_asset}")
    if top is None or top.ask <= 0:
        return Switched("", f"{text} {old_asset} cleared: no price to convert it at")
    if new_side == "sell":  # the quote a buy spent becomes the base it buys
        converted = _cut(amount / top.ask, decimals.get(assets.base, 8))
        asset = assets.base
    else:
        converted = _cut(amount * top.ask, decimals.get(assets.quote, 2))
        asset = assets.quote
    shown = format(converted, "f")
    return Switched(
        shown, f"{text} {old_asset} converted at the ask {top.ask}: now {shown} {asset}"
    )


def _cut(value: Decimal, places: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_DOWN).normalize()


__all__ = [
    "FIELDS",
    "KIND_FIELDS",
    "AlgoForm",
    "FieldInfo",
    "Switched",
    "amount_words",
    "switch_side",
]
