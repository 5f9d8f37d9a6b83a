"""Price alerts as plain values: what the trader asked to be told, and when it is due.

An alert watches one price of one pair — the bid, the ask or the mid, in QUOTE per BASE — against
a level. The rule (``PriceAlert.observe``), chosen where the requirements are silent:

- *above* is due when the price is at or above the level, *below* when at or below it. An alert
  made (or re-armed) while its condition already holds is due at the next price: the trader
  asked to know when the price is there, and it is.
- *crossing* is due when the price passes from one side of the level to the other. A price
  exactly at the level is on neither side and changes nothing; the first price seen only
  tells the side.
- *every time* stays armed: it is due again only after the price has gone back across the
  level (an above alert fires again once the price was below, then at or above again).
  *once* disarms itself when it fires, and stays silent until the trader re-arms it.
- Where the price last was (``side``) is kept with the alert, so a restart while the price
  is still above an above alert that already fired does not fire it again.

Prices are ``Decimal`` throughout; ``parse_level`` reads what the trader types and refuses a
price that is not a number, not positive, or finer than the pair's price increment.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from app.domain.display import decimals_of, digits_of
from app.domain.errors import ParseError
from app.domain.money import MAX_EXPONENT, AssetPair, parse_decimal
from app.domain.records import TopOfBook
from app.domain.timefmt import format_timestamp, parse_timestamp


class PriceSource(StrEnum):
    """Which price of the top of book an alert watches."""

    BID = "bid"
    ASK = "ask"
    MID = "mid"

    def of(self, book: TopOfBook) -> Decimal:
        if self is PriceSource.BID:
            return book.bid
        if self is PriceSource.ASK:
            return book.ask
        return book.mid


class Condition(StrEnum):
    ABOVE = "above"
    BELOW = "below"
    CROSSING = "crossing"


class Repeat(StrEnum):
    ONCE = "once"
    EVERY_TIME = "every_time"


class Side(StrEnum):
    """Where the watched price was, relative to the level."""

    ABOVE = "above"
    BELOW = "below"


#: What the trader reads for each choice (dialogs, the alerts table, notices).
SOURCE_WORDS = {PriceSource.BID: "Bid", PriceSource.ASK: "Ask", PriceSource.MID: "Mid"}
CONDITION_WORDS = {
    Condition.ABOVE: "At or above",
    Condition.BELOW: "At or below",
    Condition.CROSSING: "Crossing",
}
REPEAT_WORDS = {Repeat.ONCE: "Once", Repeat.EVERY_TIME: "Every time"}


class AlertInputError(ValueError):
    """A value of the alert dialog that cannot be used: ``field`` names it, the message says
    why in the trader's terms."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def price_unit(pair: str) -> str:
    """``USD per BTC`` for BTC/USD: how a price of the pair reads."""
    parsed = AssetPair.parse(pair)
    return f"{parsed.quote} per {parsed.base}"


def parse_level(text: str, pair: str, increment: Decimal | None, decimals: int) -> Decimal:
    """The level the trader typed, in QUOTE per BASE. Commas are thousands separators.
    ``increment``: the pair's price increment when the service gives one (a level is a multiple
    of it); ``decimals``: the pair's price decimals otherwise."""
    unit = price_unit(pair)
    written = text.strip().replace(",", "")
    if not written:
        raise AlertInputError("price", f"Enter a price in {unit}.")
    try:
        level = parse_decimal(written, "price")
    except ParseError:
        raise AlertInputError(
            "price", f"{text.strip()!r} is not a price: write a number such as 1234.5 ({unit})."
        ) from None
    if level <= 0:
        raise AlertInputError("price", f"A price is greater than zero, not {text.strip()}.")
    if level.adjusted() > MAX_EXPONENT // 2:
        raise AlertInputError("price", f"{text.strip()} {unit} is not a price this pair trades at.")
    places = decimals if increment is None else decimals_of(increment)
    if digits_of(level.normalize()) > places:
        allowed = "no decimals" if places == 0 else f"at most {places} decimals"
        raise AlertInputError(
            "price", f"{pair} prices have {allowed}; {text.strip()} has more ({unit})."
        )
    if increment is not None and increment > 0 and level % increment != 0:
        raise AlertInputError(
            "price", f"{pair} prices go in steps of {increment} {AssetPair.parse(pair).quote}."
        )
    return level


def new_alert_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class PriceAlert:
    """One alert and what it has seen. ``side``: where the price last was relative to the level
    (None: not seen since it was made, edited or re-armed)."""

    id: str
    pair: str
    source: PriceSource
    condition: Condition
    level: Decimal
    repeat: Repeat
    armed: bool = True
    side: Side | None = None
    fired: int = 0
    last_fired_at: datetime | None = None
    last_fired_price: Decimal | None = None

    # -- the rule ---------------------------------------------------------------------------

    def side_of(self, price: Decimal) -> Side | None:
        level = self.level
        if self.condition is Condition.ABOVE:
            return Side.ABOVE if price >= level else Side.BELOW
        if self.condition is Condition.BELOW:
            return Side.BELOW if price <= level else Side.ABOVE
        if price > level:
            return Side.ABOVE
        if price < level:
            return Side.BELOW
        return self.side  # at the level: on neither side

    def _due(self, before: Side | None, now: Side | None) -> bool:
        if now is None:
            return False
        if self.condition is Condition.ABOVE:
            return now is Side.ABOVE and before is not Side.ABOVE
        if self.condition is Condition.BELOW:
            return now is Side.BELOW and before is not Side.BELOW
        return before is not None and now is not before

    def observe(self, price: Decimal, at: datetime) -> tuple[PriceAlert, bool]:
        """The alert after seeing ``price`` at ``at``, and whether it fired (see the module
        docstring). A disarmed alert only notes the side."""
        side = self.side_of(price)
        due = self.armed and self._due(self.side, side)
        seen = self if side is self.side else replace(self, side=side)
        if not due:
            return seen, False
        fired = replace(
            seen,
            fired=self.fired + 1,
            last_fired_at=at,
            last_fired_price=price,
            armed=self.repeat is Repeat.EVERY_TIME,
        )
        return fired, True

    def rearmed(self) -> PriceAlert:
        """Armed again, with no memory of where the price was."""
        return replace(self, armed=True, side=None)

    def edited(
        self, pair: str, source: PriceSource, condition: Condition, level: Decimal, repeat: Repeat
    ) -> PriceAlert:
        """New terms: armed, and the side seen again from the next price."""
        return replace(
            self,
            pair=pair,
            source=source,
            condition=condition,
            level=level,
            repeat=repeat,
            armed=True,
            side=None,
        )

    def price_of(self, book: TopOfBook) -> Decimal:
        return self.source.of(book)

    # -- words ------------------------------------------------------------------------------

    def terms(self, level_text: str) -> str:
        """``BTC/USD bid at or above 90,000.00 USD per BTC``."""
        words = CONDITION_WORDS[self.condition].lower()
        return f"{self.pair} {self.source} {words} {level_text} {price_unit(self.pair)}"

    def fired_message(self, level_text: str, price_text: str) -> str:
        """What the notice says when the alert fires (``side`` is the side just seen)."""
        if self.condition is Condition.CROSSING:
            what = f"crossed {self.side or 'through'} {level_text}"
        else:
            what = f"is {CONDITION_WORDS[self.condition].lower()} {level_text}"
        tail = "" if self.repeat is Repeat.EVERY_TIME else " (once: re-arm it in Alerts)"
        return (
            f"Price alert: {self.pair} {self.source} {what}, now {price_text} "
            f"{price_unit(self.pair)}{tail}"
        )

    # -- storage ----------------------------------------------------------------------------

    def to_fields(self) -> dict[str, str]:
        """Every value as text (Decimals exact), for the settings file."""
        return {
            "id": self.id,
            "pair": self.pair,
            "source": str(self.source),
            "condition": str(self.condition),
            "level": format(self.level, "f"),
            "repeat": str(self.repeat),
            "armed": "true" if self.armed else "false",
            "side": str(self.side or ""),
            "fired": str(self.fired),
            "lastFiredAt": format_timestamp(self.last_fired_at) if self.last_fired_at else "",
            "lastFiredPrice": "" if self.last_fired_price is None else str(self.last_fired_price),
        }

    @classmethod
    def from_fields(cls, fields: Mapping[str, object]) -> PriceAlert:
        """Back from ``to_fields``; ParseError (or ValueError) for a value that is not one."""

        def text(name: str) -> str:
            value = fields.get(name, "")
            return value if isinstance(value, str) else str(value)

        pair = str(AssetPair.parse(text("pair"), "pair"))
        level = parse_decimal(text("level"), "level")
        if level <= 0:
            raise ParseError("level", "a level is greater than zero")
        fired_at, fired_price = text("lastFiredAt"), text("lastFiredPrice")
        return cls(
            id=text("id") or new_alert_id(),
            pair=pair,
            source=PriceSource(text("source")),
            condition=Condition(text("condition")),
            level=level,
            repeat=Repeat(text("repeat")),
            armed=text("armed").lower() in ("true", "1"),
            side=Side(text("side")) if text("side") else None,
            fired=int(text("fired") or 0),
            last_fired_at=parse_timestamp(fired_at, "lastFiredAt") if fired_at else None,
            last_fired_price=parse_decimal(fired_price, "lastFiredPrice") if fired_price else None,
        )
