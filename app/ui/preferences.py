"""The trader's preferences: typed values, their QSettings keys, and the rules that refuse a bad
value with a reason. Edit > Settings shows them; ``MainWindow.apply_preferences`` pushes them
into the running terminal at once (no restart).

Numbers are kept as text in the INI file and read back as Decimal, so a limit of 1,000,000.01
USD stays exactly that.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QSettings

from app.domain.errors import InputError
from app.domain.money import parse_decimal
from app.domain.positions import CostMethod
from app.services.log_events import NOTIFY_KINDS
from app.services.pretrade import CheckLimits
from app.services.risk import LIMITS, RiskLimits, parse_positions
from app.services.session import FeedIntervals

THEMES = ("dark", "light")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
#: Events a notification can be switched off for (app/ui/notifier.py uses the same names).
NOTIFY_EVENTS: tuple[str, ...] = tuple(str(kind) for kind in NOTIFY_KINDS)
#: Allowed poll intervals, seconds: fast enough to trade on, slow enough not to flood.
INTERVAL_RANGES = {
    "top_of_book": (Decimal("0.1"), Decimal(60)),
    "balances": (Decimal("0.5"), Decimal(600)),
    "order_book": (Decimal("0.2"), Decimal(60)),
    "orders": (Decimal("0.5"), Decimal(600)),
}


#: The longest default life of a resting limit order (30 days).
MAX_RESTING_HOURS = Decimal(720)
#: Size presets per asset, as Settings shows them: the amounts of one asset after its code,
#: assets apart by ";". The first amount of an asset is its default size (click-to-trade, the
#: hit-bid / lift-offer keys); all of them are quick buttons in the order ticket.
DEFAULT_SIZE_PRESETS = "BTC: 0.01 0.1 1; ETH: 0.1 1 10; USD: 1000 10000; USDT: 1000 10000"
#: Positions' cost methods as Settings names them.
COST_METHODS = {CostMethod.AVERAGE: "Average cost", CostMethod.FIFO: "FIFO"}


def parse_since(text: str) -> date | None:
    """The positions' "since" date, ``YYYY-MM-DD`` (empty: since the account began).
    ValueError in words."""
    if not text.strip():
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a date like 2026-01-31") from None


def parse_size_presets(text: str) -> dict[str, tuple[Decimal, ...]]:
    """``"BTC: 0.01 0.1 1; USD: 1,000 10,000"`` -> {"BTC": (0.01, 0.1, 1), "USD": (...)}.

    Amounts are apart by spaces or "/", commas are thousands separators; each amount must be
    greater than zero. ValueError says what is wrong, in words."""
    presets: dict[str, tuple[Decimal, ...]] = {}
    for entry in text.replace("\n", ";").split(";"):
        if not entry.strip():
            continue
        asset, colon, amounts = entry.partition(":")
        code = asset.strip().upper()
        if not colon or not code.isalnum():
            raise ValueError(f"{entry.strip()!r}: write an asset, a colon and its amounts")
        values: list[Decimal] = []
        for word in amounts.replace("/", " ").split():
            value = parse_decimal(word.replace(",", ""), "preset")
            if value <= 0:
                raise ValueError(f"{code}: a size preset is greater than zero, not {word}")
            values.append(value)
        if not values:
            raise ValueError(f"{code}: no amounts")
        presets[code] = tuple(values)
    return presets


#: The widest slippage collar the settings take (5 %): beyond, hit/lift is no longer "now".
MAX_SLIPPAGE_BPS = Decimal(500)


#: The risk limits as Preferences fields (``risk_`` + ``app.services.risk.LIMITS`` names); an
#: empty value is no limit. Max position is text (``BTC: 20; ETH: 300``), like size presets.
RISK_FIELDS = {f"risk_{spec.name}": spec for spec in LIMITS}


class PreferenceError(InputError):
    """A value the dialog refuses; ``field`` names it, the message says why."""


@dataclass(frozen=True)
class Preferences:
    top_of_book: Decimal = Decimal("0.5")
    balances: Decimal = Decimal(5)
    order_book: Decimal = Decimal(1)
    orders: Decimal = Decimal(2)
    valuation_currency: str = "USD"
    default_watchlist: tuple[str, ...] = ()
    confirm_orders: bool = True
    max_notional: Decimal = Decimal(1_000_000)
    max_distance_percent: Decimal = Decimal(5)
    #: Default end time of a limit order, hours from when the ticket is filled: the service
    #: cannot cancel an order, so one without an end would rest for ever.
    resting_hours: Decimal = Decimal(1)
    #: Hit bid / lift offer send a limit this far through the touch (basis points), ending
    #: within seconds: it fills at once or expires, never rests on the book.
    slippage_bps: Decimal = Decimal(10)
    auto_requote: bool = False
    theme: str = "dark"
    notify: tuple[str, ...] = NOTIFY_EVENTS  # events that notify
    notify_tray: bool = True
    notify_sound: bool = False
    remember_password_allowed: bool = True
    log_level: str = "INFO"
    size_presets: str = DEFAULT_SIZE_PRESETS
    #: Positions: the cost method, and the day "realised since" counts from.
    positions_method: str = CostMethod.AVERAGE.value
    positions_since: str = ""
    #: Risk limits (``app.services.risk``): None or empty is no limit; money in the valuation
    #: currency.
    risk_max_order_notional: Decimal | None = None
    risk_max_notional_per_day: Decimal | None = None
    risk_max_orders_per_minute: int | None = None
    risk_max_position: str = ""
    risk_max_open_parents: int | None = None

    # -- what the services take -------------------------------------------------------------

    def intervals(self) -> FeedIntervals:
        return FeedIntervals(float(self.top_of_book), float(self.balances), float(self.order_book))

    def check_limits(self) -> CheckLimits:
        return CheckLimits(
            self.max_notional, self.max_distance_percent / 100, self.valuation_currency
        )

    def risk_limits(self) -> RiskLimits:
        """The risk limits as the gate takes them (a position text that cannot be read is no
        position limit: ``validated`` refuses such a text before it is stored)."""
        try:
            positions = parse_positions(self.risk_max_position)
        except ValueError:
            positions = {}
        return RiskLimits(
            max_order_notional=self.risk_max_order_notional,
            max_notional_per_day=self.risk_max_notional_per_day,
            max_orders_per_minute=self.risk_max_orders_per_minute,
            max_position=positions or None,
            max_open_parents=self.risk_max_open_parents,
            currency=self.valuation_currency,
        )

    def presets(self) -> dict[str, tuple[Decimal, ...]]:
        """Size presets by asset (none when the text cannot be read: ``validated`` refuses
        such a text before it is stored)."""
        try:
            return parse_size_presets(self.size_presets)
        except ValueError:
            return {}

    def cost_method(self) -> CostMethod:
        return CostMethod(self.positions_method)

    def since(self) -> datetime | None:
        """The start (local midnight) of the positions' "since" day; None: ever."""
        try:
            day = parse_since(self.positions_since)
        except ValueError:
            return None
        return None if day is None else datetime(day.year, day.month, day.day).astimezone()

    def python_log_level(self) -> int:
        return int(logging.getLevelName(self.log_level))

    # -- validation -----------------------------------------------------------------------------

    def validated(self, known_pairs: Iterable[str] = (), known_assets: Iterable[str] = ()) -> None:
        """Raise PreferenceError for the first value that cannot be used."""
        for name, (low, high) in INTERVAL_RANGES.items():
            value: Decimal = getattr(self, name)
            if not low <= value <= high:
                raise PreferenceError(
                    name, f"poll interval must be between {low} and {high} seconds, not {value}"
                )
        assets = set(known_assets)
        if assets and self.valuation_currency not in assets:
            raise PreferenceError(
                "valuation_currency", f"{self.valuation_currency} is not an asset of this service"
            )
        pairs = set(known_pairs)
        unknown = [p for p in self.default_watchlist if pairs and p not in pairs]
        if unknown:
            raise PreferenceError(
                "default_watchlist", f"not traded on this service: {', '.join(unknown)}"
            )
        self._validate_trading()
        if self.theme not in THEMES:
            raise PreferenceError("theme", f"theme is one of {', '.join(THEMES)}")
        if self.log_level not in LOG_LEVELS:
            raise PreferenceError("log_level", f"log level is one of {', '.join(LOG_LEVELS)}")
        try:
            parse_size_presets(self.size_presets)
        except ValueError as exc:
            raise PreferenceError("size_presets", f"size presets: {exc}") from None
        self._validate_positions()
        self._validate_risk()
        strange = set(self.notify) - set(NOTIFY_EVENTS)
        if strange:
            raise PreferenceError("notify", f"unknown events: {', '.join(sorted(strange))}")

    def _validate_trading(self) -> None:
        if self.max_notional <= 0:
            raise PreferenceError("max_notional", "the size limit must be greater than zero")
        if not Decimal(0) < self.max_distance_percent <= Decimal(100):
            raise PreferenceError(
                "max_distance_percent", "the price-distance warning is between 0 and 100 %"
            )
        if not Decimal(0) < self.resting_hours <= MAX_RESTING_HOURS:
            raise PreferenceError(
                "resting_hours",
                f"limit orders rest between 0 and {MAX_RESTING_HOURS} hours, "
                f"not {self.resting_hours}",
            )
        if not Decimal(0) <= self.slippage_bps <= MAX_SLIPPAGE_BPS:
            raise PreferenceError(
                "slippage_bps",
                f"the slippage collar is between 0 and {MAX_SLIPPAGE_BPS} bps, "
                f"not {self.slippage_bps}",
            )

    def _validate_risk(self) -> None:
        for name, spec in RISK_FIELDS.items():
            value = getattr(self, name)
            if spec.kind == "positions":
                try:
                    parse_positions(value)
                except ValueError as exc:
                    raise PreferenceError(name, f"{spec.label}: {exc}") from None
            elif value is not None and (not Decimal(value).is_finite() or value <= 0):
                raise PreferenceError(
                    name,
                    f"{spec.label}: greater than zero, or empty for no limit, not {value}",
                )

    def _validate_positions(self) -> None:
        if self.positions_method not in {method.value for method in COST_METHODS}:
            raise PreferenceError("positions_method", "the cost method is FIFO or average cost")
        try:
            parse_since(self.positions_since)
        except ValueError as exc:
            raise PreferenceError("positions_since", f"positions since: {exc}") from None

    # -- storage ------------------------------------------------------------------------------

    @classmethod
    def load(cls, settings: QSettings) -> Preferences:
        """The stored preferences; a value that cannot be read falls back to its default."""
        default = cls()
        values: dict[str, Any] = {}
        for item in fields(cls):
            if item.name == "notify":
                values["notify"] = tuple(
                    kind
                    for kind in NOTIFY_EVENTS
                    if _read(settings.value(f"notify/{kind}", True), True)
                )
                continue
            key = KEYS[item.name]
            stored = settings.value(key)
            if stored is None:
                continue
            fallback = getattr(default, item.name)
            try:
                if item.name in RISK_FIELDS and RISK_FIELDS[item.name].kind != "positions":
                    values[item.name] = read_limit(str(stored), item.name)
                    continue
                values[item.name] = _read(stored, fallback)
            except (ValueError, TypeError):
                continue
        prefs = cls(**values)
        try:
            prefs.validated()
        except PreferenceError:
            return default
        return prefs

    def save(self, settings: QSettings) -> None:
        for kind in NOTIFY_EVENTS:  # one switch per kind, as app/ui/notifier.py reads them
            settings.setValue(f"notify/{kind}", kind in self.notify)
        for item in fields(self):
            if item.name == "notify":
                continue
            value = getattr(self, item.name)
            settings.setValue(KEYS[item.name], _write(value))
        settings.sync()


KEYS = {
    "top_of_book": "feeds/topOfBook",
    "balances": "feeds/balances",
    "order_book": "feeds/orderBook",
    "orders": "feeds/orders",
    "valuation_currency": "valuation_currency",
    "default_watchlist": "watchlist/default",
    "confirm_orders": "orders/confirm",
    "max_notional": "orders/maxNotional",
    "max_distance_percent": "orders/maxDistancePercent",
    "resting_hours": "orders/restingHours",
    "slippage_bps": "orders/slippageBps",
    "auto_requote": "rfq/autoRequote",
    "theme": "appearance/theme",  # app/ui/theme.py THEME_KEY
    "notify_tray": "notify/tray",
    "notify_sound": "notify/sound",
    "remember_password_allowed": "login/rememberAllowed",
    "log_level": "log/level",
    "size_presets": "orders/sizePresets",
    "positions_method": "positions/costMethod",
    "positions_since": "positions/since",
    **{name: f"risk/{spec.name}" for name, spec in RISK_FIELDS.items()},
}


def read_limit(text: str, name: str) -> Decimal | int | None:
    """A risk limit as typed or stored: empty is no limit, a count is a whole number, money a
    decimal (thousands separators allowed). PreferenceError in the trader's words."""
    spec = RISK_FIELDS[name]
    cleaned = text.replace(",", "").replace("_", "").strip()
    if not cleaned:
        return None
    unit = spec.unit if spec.kind == "count" else "money"
    try:
        value = parse_decimal(cleaned, name)
    except ValueError:
        raise PreferenceError(name, f"{spec.label}: {text.strip()!r} is not a number") from None
    if spec.kind == "count":
        if value != value.to_integral_value():
            raise PreferenceError(
                name, f"{spec.label}: a whole number of {unit}, not {text.strip()}"
            )
        return int(value)
    return value


def _read(stored: object, fallback: object) -> object:
    if isinstance(fallback, bool):
        if isinstance(stored, bool):
            return stored
        return str(stored).lower() in ("true", "1", "yes")
    if isinstance(fallback, Decimal):
        return parse_decimal(str(stored), "setting")
    if isinstance(fallback, tuple):
        if isinstance(stored, str):  # INI gives a one-element list back as a string
            return tuple(part for part in stored.split(",") if part)
        if isinstance(stored, list):
            return tuple(str(part) for part in stored)
        raise TypeError("not a list")
    return str(stored)


def _write(value: object) -> object:
    if value is None:
        return ""  # no limit
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, tuple):
        return ",".join(value)  # a plain string: INI files lose empty and one-item lists
    return value
