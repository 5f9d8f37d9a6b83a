"""The session's quote history as a table: requested, accepted (with the milliseconds that were
left), expired, refused and unknown quotes, newest first (the desk's order, not sortable).

In pair terms (design.md §8): the side as ``Buy BTC`` / ``Sell BTC``, prices QUOTE per BASE with
the pair's increment (a request shows its sell / buy prices, a side's row that side's price),
the size of a side's row as the BASE amount it buys or sells (exact), a request's as typed.

Declared as a column spec on the generic keyed table: rows only ever arrive (one insert at the
top per event) and a row's texts are computed once when it arrives, not on every paint. The
event column's colour comes from the palette in force (accepted in its up blue, refused and
unknown in its down orange, expired grey) and follows a theme switch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableView, QWidget

from app.domain.display import DASH, Precision
from app.services.rfq_desk import QuoteEvent, side_name, size_text
from app.ui.models.columns import ALIGN_NUMBER, Column
from app.ui.models.keyed_table import KeyedTableModel
from app.ui.models.record_cells import Cell, text_cell
from app.ui.palette import TradePalette, named_colour
from app.ui.widgets.read_only_table import read_only_rows

#: What each event kind is called in the table.
KIND_TEXT = {
    "requested": "requested",
    "accepted": "accepted",
    "expired": "expired",
    "refused": "refused",
    "unknown": "outcome unknown",
}
#: Which palette colour each event kind is shown in (others: ordinary text).
KIND_COLOUR = {"accepted": "up", "refused": "down", "unknown": "down", "expired": "stale"}
#: Shown quote ids are cut to this many characters (the tooltip has the whole id).
SHORT_ID = 8


def _time_text(event: QuoteEvent) -> str:
    local = event.at.astimezone()
    return local.strftime("%H:%M:%S.") + f"{local.microsecond // 1000:03d}"


def _text(text: Callable[[QuoteEvent], str]) -> Callable[[QuoteEvent, Precision], Cell]:
    """A cell that is only text (the history is shown in the desk's order, never sorted)."""
    return lambda event, _: text_cell(text(event))


def _price_text(event: QuoteEvent, precision: Precision) -> str:
    """QUOTE per BASE: ``sell / buy`` for a request, the side's price for a side's event."""
    if event.side is not None:
        price = event.prices.get(event.side)
        return DASH if price is None else precision.price_text(price, event.pair)
    if "sell" in event.prices and "buy" in event.prices:
        sell = precision.price_text(event.prices["sell"], event.pair)
        return f"{sell} / {precision.price_text(event.prices['buy'], event.pair)}"
    return DASH


def _size_text(event: QuoteEvent, precision: Precision) -> str:
    """A side's BASE amount (exact), or the size requested as typed."""
    if event.side is not None and event.base is not None:
        base = event.pair.split("/")[0]
        return f"{precision.exact(event.base, base)} {base}"
    return size_text(event.size)


#: The table, declared as data (app.ui.models.columns).
COLUMNS: list[Column[QuoteEvent]] = [
    Column("time", "Time", _text(_time_text)),
    Column(
        "event",
        "Event",
        _text(lambda event: KIND_TEXT.get(event.kind, event.kind)),
        colour=lambda event, palette: kind_colour(event.kind, palette),
    ),
    Column(
        "side",
        "Side",
        _text(lambda event: DASH if event.side is None else side_name(event.pair, event.side)),
    ),
    Column("pair", "Pair", _text(lambda event: event.pair)),
    Column(
        "price",
        "Price",
        lambda event, precision: text_cell(_price_text(event, precision)),
        tip=lambda event, _: f"{event.pair.split('/')[1]} per {event.pair.split('/')[0]}",
        alignment=ALIGN_NUMBER,
    ),
    Column(
        "size",
        "Size",
        lambda event, precision: text_cell(_size_text(event, precision)),
        alignment=ALIGN_NUMBER,
    ),
    Column(
        "ms_left",
        "Left (ms)",
        _text(lambda event: DASH if event.ms_left is None else f"{event.ms_left:,}"),
        alignment=ALIGN_NUMBER,
    ),
    Column(
        "quote",
        "Quote",
        _text(lambda event: event.quote_id[:SHORT_ID]),
        tip=lambda event, _: event.quote_id,
    ),
    Column(
        "details",
        "Details",
        _text(lambda event: event.message),
        tip=lambda event, _: event.message or None,
    ),
]
#: The widest text each column usually holds: the column widths are set once, from these.
SAMPLES = {
    "time": "00:00:00.000",
    "event": "outcome unknown",
    "side": "Sell USDT",
    "pair": "USDT/USD",
    "price": "00,000.00 / 00,000.00",
    "size": "0.00000000 BTC",
    "ms_left": "00,000",
    "quote": "00000000",
}
CELL_PADDING = 16


def kind_colour(kind: str, palette: TradePalette) -> QColor | None:
    """The event column's colour for ``kind`` in ``palette`` (None: ordinary text)."""
    return named_colour(palette, KIND_COLOUR.get(kind))


class QuoteHistoryModel(KeyedTableModel[QuoteEvent]):
    """Newest first; each event is a row keyed by its place in the session, so a new one is
    one insert at the top and the rows below keep their cells."""

    def __init__(
        self, parent: QObject | None = None, *, precision: Precision | None = None
    ) -> None:
        super().__init__(COLUMNS, precision or Precision(), parent)
        self._events: list[QuoteEvent] = []  # oldest first, as the desk records them

    def add(self, event: QuoteEvent) -> None:
        self.extend([event])

    def extend(self, events: Iterable[QuoteEvent]) -> None:
        self._events.extend(events)
        self.apply([(number, e) for number, e in reversed(list(enumerate(self._events)))])

    def event_at(self, row: int) -> QuoteEvent:
        return self.record(row)

    def events(self) -> list[QuoteEvent]:
        """Oldest first, as the desk records them."""
        return list(self._events)


class QuoteHistoryView(QTableView):
    """Read-only rows, fixed-height lines, columns sized once for their usual content."""

    def __init__(self, model: QuoteHistoryModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Quote history")
        self.setModel(model)
        header = read_only_rows(self)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        metrics = self.fontMetrics()
        for key, sample in SAMPLES.items():
            column = model.column(key)
            text = metrics.horizontalAdvance(sample) + CELL_PADDING
            self.setColumnWidth(column, max(header.sectionSizeFromContents(column).width(), text))
