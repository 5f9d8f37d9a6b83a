"""The price alerts table: one row per alert, in the order they were made.

A ``KeyedTableModel`` over ``COLUMNS``. Levels and the price an alert last fired at are shown in
QUOTE per BASE at the pair's price increment (``pair_price_cell``); the state says whether the
alert will fire: *Armed*, or *Fired — re-arm* for a once alert that has fired (in the theme's
warning colour).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor

from app.domain.alerts import CONDITION_WORDS, REPEAT_WORDS, SOURCE_WORDS, PriceAlert, price_unit
from app.domain.display import Precision
from app.ui.models.columns import Column
from app.ui.models.keyed_table import KeyedTableModel
from app.ui.models.record_cells import Cell, pair_price_cell, text_cell, time_cell
from app.ui.palette import TradePalette

ARMED = "Armed"
DISARMED = "Fired — re-arm"


def state_text(alert: PriceAlert) -> str:
    return ARMED if alert.armed else DISARMED


def state_colour(alert: PriceAlert, palette: TradePalette) -> QColor | None:
    colour: QColor = palette.warning
    return None if alert.armed else colour


def _level(alert: PriceAlert, precision: Precision) -> Cell:
    return pair_price_cell(alert.level, alert.pair, precision)


def _last_price(alert: PriceAlert, precision: Precision) -> Cell:
    return pair_price_cell(alert.last_fired_price, alert.pair, precision)


def _unit_tip(alert: PriceAlert, _: Precision) -> str:
    return price_unit(alert.pair)


COLUMNS: tuple[Column[PriceAlert], ...] = (
    Column("pair", "Pair", lambda a, _: text_cell(a.pair)),
    Column("source", "Price", lambda a, _: text_cell(SOURCE_WORDS[a.source])),
    Column("condition", "When", lambda a, _: text_cell(CONDITION_WORDS[a.condition])),
    Column("level", "Level", _level, "QUOTE per BASE", numeric=True, tip=_unit_tip),
    Column("repeat", "Fires", lambda a, _: text_cell(REPEAT_WORDS[a.repeat])),
    Column("state", "State", lambda a, _: text_cell(state_text(a)), colour=state_colour),
    Column(
        "fired",
        "Fired",
        lambda a, _: Cell(str(a.fired), Decimal(a.fired), str(a.fired)),
        "How many times it fired",
        numeric=True,
    ),
    Column("last_fired_at", "Last fired", lambda a, _: time_cell(a.last_fired_at)),
    Column(
        "last_price",
        "At price",
        _last_price,
        "The price it last fired at",
        numeric=True,
        tip=_unit_tip,
    ),
)


class AlertsModel(KeyedTableModel[PriceAlert]):
    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, precision, parent)

    def set_alerts(self, alerts: Sequence[PriceAlert]) -> None:
        self.apply([(alert.id, alert) for alert in alerts])

    def alert_at(self, row: int) -> PriceAlert:
        return self.record(row)
