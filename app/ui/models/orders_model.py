"""The order list table: one row per order, newest first, in the trader's terms (design.md
§8): Pair, Side (Buy/Sell of the base), Amount of the base, Price, Notional in the quote,
Limit — prices in QUOTE per BASE at the pair's price increment, amounts exact at the asset's
precision, all through ``app.domain.display``.

The wire's own fields (``size``, ``source``, ``destination``, ``limit``, ``result.price``,
``result.invertedPrice``, ``result.total``, ``result.status``) are columns too, named as the
details dialog names them: hidden in the view (``WIRE_COLUMNS``), written to the CSV export and
Copy row with their exact text.

Statuses are shown in words (``submitted`` reads "resting"; a resting order with an end time
says how long it has left: "resting · 42 min left", refreshed by ``refresh_time_left`` — the
panel's timer — without a new poll). Statuses this version does not know are shown as sent,
in italics. Orders that appear on top after the first load, and known orders that just
filled, are highlighted for ``HIGHLIGHT_SECONDS``; one single-shot timer ends the highlights.

Per-trade economics: "Mid at fill" is the top-of-book mid the terminal stored nearest
to the fill's time (``app.services.fill_mids``: within 5 s, else "—" with the reason in its
tooltip, never an invented number), in QUOTE per BASE at the pair's price increment (one more
decimal when the mid falls between two increments: it is shown exactly); "vs mid (bps)" is the
fill's price against that mid, **positive a cost to the trader for a Buy and a Sell alike**
(``app.domain.fill_economics``): slippage for an order, the quote's markup for an RFQ fill.
Shown to 1 decimal, sorted by the exact figure, exported to 4 decimals; both come with the
order's row (computed once per fill by the feed), so a paint formats nothing. Both are frozen
facts: shown only once settled ("…" for the few seconds before), then read from the journal,
so they never change on a refresh or a restart. The Price column is the fill's average fill
price (``app.domain.fill_price``), the one price the ticket, the ledger, the notices and the
command line show.

Colours follow the theme (``app.ui.palette``): filled in the success colour, rejected in the
error colour, resting in the warning amber, canceled in the stale grey; the highlight is the
theme's amber bar colour, translucent so the row's text and status colours still read on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFont

from app.domain import utc_now
from app.domain.display import DASH, Precision, digits_of, format_number
from app.domain.fill_economics import BPS_EXPORTED, BPS_SHOWN
from app.domain.money import Amount, Price
from app.services.fill_mids import MID_TOLERANCE
from app.services.order_feed import OrderRow, OrdersSnapshot, status_word
from app.services.slices import Steps, run_now, sliced
from app.ui.column_widths import Fit
from app.ui.csv_export import export_value
from app.ui.models.columns import Column
from app.ui.models.record_cells import (
    Cell,
    amount_cell,
    pair_price_cell,
    plain_number,
    text_cell,
    time_cell,
)
from app.ui.models.record_view import (
    BACKGROUND_ROLE,
    BLOCK,
    FONT_ROLE,
    RecordTableModel,
    RecordView,
)
from app.ui.palette import TradePalette, named_colour

HIGHLIGHT_SECONDS = 3.0
#: Opacity (0–255) of the highlight: a quarter, so text and status colours read through it.
HIGHLIGHT_ALPHA = 64
#: The palette colour each known status is shown in (others: ordinary text).
STATUS_COLOURS = {
    "filled": "success",
    "submitted": "warning",  # amber: waiting, like a pending deposit (not a rise)
    "canceled": "stale",
    "rejected": "error",
}
STATUS_MEANING = {
    "filled": "Filled in full",
    "submitted": "Resting: a limit order waiting for its price; its size is locked. The "
    "service offers no cancel: it ends at its end time",
    "canceled": "Canceled: its end time passed; the locked size was released",
    "rejected": "Rejected by the service",
}
#: The wire's fields, exported (and copied) under these names, hidden in the view.
WIRE_COLUMNS = (
    "size",
    "source",
    "destination",
    "limit_wire",
    "price_wire",
    "inverted_price_wire",
    "total_wire",
    "status_wire",
)


def status_colour(status: str, palette: TradePalette) -> QColor | None:
    """The status column's colour for ``status`` in ``palette`` (None: ordinary text)."""
    return named_colour(palette, STATUS_COLOURS.get(status))


def highlight_colour(palette: TradePalette) -> QColor:
    """The background of an order that just appeared or filled: the theme's amber, translucent."""
    colour = QColor(palette.bar_warn)
    colour.setAlpha(HIGHLIGHT_ALPHA)
    return colour


def time_left_text(end: datetime, now: datetime) -> str:
    """How long a resting order has left: ``42 s left``, ``42 min left``, ``3 h 05 min left``,
    ``2 d 4 h left``; ``end time passed`` once it has (until the service says canceled)."""
    seconds = int((end - now).total_seconds())
    if seconds <= 0:
        return "end time passed"
    if seconds < 60:
        return f"{seconds} s left"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min left"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes:02d} min left"
    days, hours = divmod(hours, 24)
    return f"{days:,} d {hours} h left"


def status_cell(row: OrderRow, now: datetime | None = None) -> Cell:
    """The status in words; a resting order with an end time adds its time left (``now``)."""
    word = status_word(row.order.result.status)
    end = row.order.end_at
    if row.resting and end is not None and now is not None:
        return Cell(f"{word} · {time_left_text(end, now)}", word, word)
    return Cell(word, word or None, word)


def status_tip(row: OrderRow, _: Precision) -> str:
    meaning = STATUS_MEANING.get(
        row.order.result.status, "Not a status this version knows: shown as the server sent it"
    )
    end = row.order.end_at
    if row.resting and end is not None:
        meaning += f"\nEnds at {export_value(end)} (UTC)"
    error = row.order.result.error
    return f"{meaning}\n{error}" if error else meaning


def utc_tip(
    moment: Callable[[OrderRow], datetime | None],
) -> Callable[[OrderRow, Precision], str | None]:
    def tip(row: OrderRow, _: Precision) -> str | None:
        text = export_value(moment(row))
        return f"{text} (UTC)" if text else None

    return tip


def submitted(row: OrderRow) -> datetime | None:
    return row.order.submitted_at


def executed(row: OrderRow) -> datetime | None:
    result = row.order.result
    return result.executed_at or result.updated_at


def ends(row: OrderRow) -> datetime | None:
    return row.order.end_at


def pair_name(row: OrderRow) -> str:
    return str(row.terms.pair_side.pair)


def base_cell(row: OrderRow, precision: Precision) -> Cell:
    return amount_cell(row.terms.base, row.terms.pair_side.pair.base, precision)


def notional_cell(row: OrderRow, precision: Precision) -> Cell:
    return amount_cell(row.terms.quote, row.terms.pair_side.pair.quote, precision)


def price_cell(row: OrderRow, precision: Precision) -> Cell:
    """The fill's price as every screen shows it (``app.domain.fill_price``): sorted and
    exported as shown."""
    fill = row.terms.fill
    if fill is None:
        return Cell(DASH, None, "")
    shown = fill.rounded(precision)
    return Cell(fill.text(precision), shown, export_value(shown))


def price_tip(row: OrderRow, precision: Precision) -> str | None:
    """``Average fill price: 9,099.54 USD received for 0.1 BTC = 90,995.40 USD per BTC``."""
    fill, terms = row.terms.fill, row.terms
    if fill is None:
        return None
    pair = fill.pair
    per = f"{fill.words(precision)} per {pair.base}"
    if not fill.average or terms.base is None or terms.quote is None:
        return f"Price: {per}, the service's rate (it sent no total to average)"
    verb = "spent" if terms.pair_side.side == "buy" else "received"
    return (
        f"Average fill price: {precision.exact(terms.quote, pair.quote)} {pair.quote} {verb} "
        f"for {precision.exact(terms.base, pair.base)} {pair.base} = {per}"
    )


def limit_cell(row: OrderRow, precision: Precision) -> Cell:
    return pair_price_cell(row.terms.limit, pair_name(row), precision)


def unit_tip(
    value: Callable[[OrderRow], Decimal | None], what: str
) -> Callable[[OrderRow, Precision], str | None]:
    """A cell's tooltip naming its unit: ``90,893.91 USD per BTC``, ``0.11 BTC``."""

    def tip(row: OrderRow, precision: Precision) -> str | None:
        number = value(row)
        if number is None:
            return None
        pair = row.terms.pair_side.pair
        if what == "price":
            return f"{precision.price_text(number, str(pair))} {pair.quote} per {pair.base}"
        asset = pair.base if what == "base" else pair.quote
        return f"{precision.exact(number, asset)} {asset}"

    return tip


def amount_tip(row: OrderRow, precision: Precision) -> str | None:
    if row.terms.base is None:
        return "Known once it fills: a buy is sent as the quote amount it spends"
    return unit_tip(lambda r: r.terms.base, "base")(row, precision)


# -- per-trade economics --------------------------------------------------------------------------

MID_TOOLTIP = (
    "The top-of-book mid, (bid + ask) / 2 in QUOTE per BASE, that this terminal stored nearest "
    f"to the fill's time (within {MID_TOLERANCE:g} s); — when it stored none then"
)
BPS_TOOLTIP = (
    "The fill's price against the mid at fill, in basis points. Positive is a cost to you: a "
    "Buy paid above the mid, a Sell received below it; negative, a price better than the mid. "
    "For an RFQ fill, the quote's markup against the mid; for an order, its slippage"
)
_BPS_QUANTUM = Decimal(1).scaleb(-BPS_EXPORTED)


#: A fill of the last seconds whose mid at fill is not settled yet: no figure is shown that
#: could still change.
SETTLING = "…"
SETTLING_TIP = (
    "Settling: the mid at fill is fixed once no nearer stored mid can arrive (a few seconds "
    "after the fill); from then on it is kept in the journal and never changes"
)


def settling(row: OrderRow) -> bool:
    """Whether the row's economics may still change (then neither figure is shown)."""
    return row.economics is not None and not row.economics.final


def mid_cell(row: OrderRow, precision: Precision) -> Cell:
    """The mid at fill at the pair's price increment, or exactly when it has a half increment;
    ``…`` while it settles."""
    economics = row.economics
    if settling(row):
        return Cell(SETTLING, None, "")
    mid = None if economics is None else economics.mid
    if mid is None:
        return Cell(DASH, None, "")
    places = max(precision.price(pair_name(row)), digits_of(mid))
    return Cell(format_number(mid, places), mid, plain_number(mid, places))


def bps_cell(row: OrderRow, _: Precision) -> Cell:
    """Signed basis points (+ a cost), shown to 1 decimal, sorted exactly, exported to 4;
    ``…`` while the mid settles."""
    economics = row.economics
    if settling(row):
        return Cell(SETTLING, None, "")
    bps = None if economics is None else economics.bps
    if bps is None:
        return Cell(DASH, None, "")
    exported = export_value(bps.quantize(_BPS_QUANTUM))
    return Cell(format_number(bps, BPS_SHOWN, signed=True), bps, exported)


def no_mid_reason(row: OrderRow) -> str | None:
    """Why a row has no mid at fill, in words (None when it has one)."""
    economics = row.economics
    if settling(row):
        return SETTLING_TIP
    if economics is None:
        if row.order.result.status != "filled":
            return "Not filled: there is no fill to compare with the mid"
        return "No mid known: this list has no stored mids to look the fill up in"
    if economics.sample is None:
        return f"No mid known for this fill: {economics.missing}"
    if economics.price is None:
        return "No execution price: nothing to compare with the mid"
    return None


def _when(offset: float) -> str:
    if abs(offset) < 0.05:
        return "at the fill's time"
    return f"{abs(offset):.1f} s {'before' if offset < 0 else 'after'} the fill"


def mid_tip(row: OrderRow, precision: Precision) -> str | None:
    """How the mid was found: the stored bid and ask, and when they came."""
    reason = no_mid_reason(row)
    economics = row.economics
    if reason is not None or economics is None or economics.sample is None:
        return reason
    pair = row.terms.pair_side.pair
    sample, name = economics.sample, str(pair)
    text = (
        f"{export_value(sample.mid)} {pair.quote} per {pair.base} = (bid "
        f"{precision.price_text(sample.bid, name)} + ask {precision.price_text(sample.ask, name)})"
        f" / 2, the top of book received {_when(economics.sample_offset or 0.0)}"
    )
    return text


def bps_tip(row: OrderRow, precision: Precision) -> str | None:
    """The figure exactly, what it is (slippage or markup), and its sign in words."""
    reason = no_mid_reason(row)
    economics = row.economics
    bps, mid = (None, None) if economics is None else (economics.bps, economics.mid)
    if reason is not None or economics is None or bps is None or mid is None:
        return reason
    name = pair_name(row)
    price = precision.price_text(economics.price, name)
    what = "Markup of the RFQ price" if economics.rfq else "Slippage"
    verb = "Bought" if economics.side == "buy" else "Sold"
    sense = "a cost" if bps > 0 else "better than the mid" if bps < 0 else "at the mid"
    return (
        f"{what} against the mid: {format_number(bps, BPS_EXPORTED, signed=True)} bp, {sense}\n"
        f"{verb} at {price} against a mid of {export_value(mid)}; positive is a cost for a Buy "
        "and a Sell alike"
    )


def economics_fields(row: OrderRow) -> list[tuple[str, str]]:
    """The details' lines for a fill's economics (none for an order that did not fill)."""
    economics = row.economics
    if economics is None:
        return []
    if not economics.final:
        return [("mid at fill (computed)", ""), ("mid at fill: none because", SETTLING_TIP)]
    sample = economics.sample
    if sample is None:
        return [("mid at fill (computed)", ""), ("mid at fill: none because", economics.missing)]
    bps = economics.bps
    return [
        ("mid at fill (computed)", export_value(sample.mid)),
        ("mid at fill: bid", export_value(sample.bid)),
        ("mid at fill: ask", export_value(sample.ask)),
        ("mid at fill: received at", export_value(sample.at)),
        (
            f"vs mid, bps, + a cost ({economics.kind})",
            "" if bps is None else export_value(bps.quantize(_BPS_QUANTUM)),
        ),
    ]


def wire_cell(value: Amount | Price | None) -> Cell:
    """A wire value exactly as sent: ``0.5 BTC``, ``0.0000110018 USD/BTC``."""
    text = export_value(value)
    return Cell(text or DASH, text or None, text)


def time_column(
    key: str, header: str, moment: Callable[[OrderRow], datetime | None], tooltip: str
) -> Column[OrderRow]:
    """A local-time column: its cell and its UTC tooltip read the one ``moment``; always whole."""
    return Column(
        key,
        header,
        lambda r, _: time_cell(moment(r)),
        tooltip,
        tip=utc_tip(moment),
        fit=Fit.WHOLE,
    )


COLUMNS: tuple[Column[OrderRow], ...] = (
    time_column(
        "submitted",
        "Submitted",
        submitted,
        "When the order was submitted (local time; exported as UTC)",
    ),
    Column("pair", "Pair", lambda r, _: text_cell(pair_name(r)), "The pair, BASE/QUOTE"),
    Column(
        "side",
        "Side",
        lambda r, _: text_cell(r.terms.pair_side.verb),
        "Buy or Sell of the pair's base",
    ),
    Column(
        "amount",
        "Amount",
        base_cell,
        "Amount of the base bought or sold (a buy's is known once it fills)",
        numeric=True,
        tip=amount_tip,
    ),
    Column(
        "price",
        "Avg fill price",
        price_cell,
        "Average fill price in QUOTE per BASE (the notional over the amount), at the pair's "
        "price increment: the price the ticket, the ledger and the notices show",
        numeric=True,
        tip=price_tip,
    ),
    Column("mid", "Mid at fill", mid_cell, MID_TOOLTIP, numeric=True, tip=mid_tip),
    Column("vs_mid", "vs mid (bps)", bps_cell, BPS_TOOLTIP, numeric=True, tip=bps_tip),
    Column(
        "notional",
        "Notional",
        notional_cell,
        "Amount of the quote spent (buy) or received (sell)",
        numeric=True,
        tip=unit_tip(lambda r: r.terms.quote, "quote"),
    ),
    Column(
        "status",
        "Status",
        lambda r, _: status_cell(r),
        "Filled, resting (with the time left before its end time), canceled, rejected",
        colour=lambda r, palette: status_colour(r.order.result.status, palette),
        tip=status_tip,
    ),
    Column(
        "limit",
        "Limit",
        limit_cell,
        "Limit price in QUOTE per BASE: the most paid (buy) or the least received (sell)",
        numeric=True,
        tip=unit_tip(lambda r: r.terms.limit, "price"),
    ),
    time_column(
        "end",
        "End",
        ends,
        "When a resting order ends (the service offers no cancel); local time, exported as UTC",
    ),
    Column("type", "Type", lambda r, _: text_cell(r.order.type)),
    time_column(
        "executed",
        "Executed / updated",
        executed,
        "When it executed; for orders not executed, when it last changed",
    ),
    Column("order_id", "Order id", lambda r, _: text_cell(r.order.order_id), fit=Fit.YIELD),
    Column(
        "client_order_id",
        "Client order id",
        lambda r, _: text_cell(r.client_order_id),
        "The clientOrderId the order was sent with, when known",
        fit=Fit.YIELD,
    ),
    # The wire's own fields, exactly as sent (hidden in the view; in the export and Copy row).
    Column("size", "size", lambda r, _: wire_cell(r.order.size), fixed_pitch=True),
    Column("source", "source", lambda r, _: text_cell(r.order.source)),
    Column("destination", "destination", lambda r, _: text_cell(r.order.destination)),
    Column("limit_wire", "limit", lambda r, _: wire_cell(r.order.limit), fixed_pitch=True),
    Column(
        "price_wire", "result.price", lambda r, _: wire_cell(r.order.result.price), fixed_pitch=True
    ),
    Column(
        "inverted_price_wire",
        "result.invertedPrice",
        lambda r, _: wire_cell(r.order.result.inverted_price),
        fixed_pitch=True,
    ),
    Column(
        "total_wire", "result.total", lambda r, _: wire_cell(r.order.result.total), fixed_pitch=True
    ),
    Column("status_wire", "result.status", lambda r, _: text_cell(r.order.result.status)),
)


class OrdersModel(RecordTableModel[OrderRow]):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)

    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        """``clock``: monotonic seconds (highlights); ``now``: server time (time left)."""
        super().__init__(COLUMNS, precision, parent)
        self._clock = clock
        self._now = now
        self._highlight_until: dict[Hashable, float] = {}
        self._counting: tuple[str, ...] = ()  # resting orders with an end time, by id
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._end_highlights)
        self._highlight = highlight_colour(self.palette)
        self._status = self.column("status")

    @property
    def highlight(self) -> QColor:
        """The background of a highlighted row in the palette in force."""
        return self._highlight

    def set_palette(self, palette: TradePalette) -> None:
        self._highlight = highlight_colour(palette)
        super().set_palette(palette)

    def set_snapshot(self, snapshot: OrdersSnapshot) -> None:
        if snapshot.reset:
            self._highlight_until.clear()
        self.apply([(row.order_id, row) for row in snapshot.rows], reset=snapshot.reset)
        self._counting = run_now(_counting(snapshot.rows))
        self._highlight_fresh(snapshot)

    async def show_snapshot(
        self, snapshot: OrdersSnapshot, wanted: Callable[[], bool] = lambda: True
    ) -> bool:
        """``set_snapshot`` that takes a big list as sliced jobs (a poll of 100,000 orders
        must not freeze the loop); False when ``wanted()`` turned false (nothing changed)."""
        counting = await sliced(_counting(snapshot.rows))
        if not await self.apply_async(
            snapshot.rows, _order_id, reset=snapshot.reset, wanted=wanted
        ):
            return False
        if snapshot.reset:
            self._highlight_until.clear()
        self._counting = counting
        self._highlight_fresh(snapshot)
        return True

    def _highlight_fresh(self, snapshot: OrdersSnapshot) -> None:
        fresh = snapshot.new_ids | snapshot.filled_ids
        if fresh:
            until = self._clock() + HIGHLIGHT_SECONDS
            for order_id in fresh:
                self._highlight_until[order_id] = until
            self._signal_highlights(fresh)
            self._arm()

    def cells_of(self, record: OrderRow) -> tuple[Cell, ...]:
        """Every cell; a resting order's status with its time left as of now."""
        cells = super().cells_of(record)
        if not self._counts_down(record):
            return cells
        column = self._status
        return (*cells[:column], status_cell(record, self._now()), *cells[column + 1 :])

    @staticmethod
    def _counts_down(record: OrderRow) -> bool:
        return record.resting and record.order.end_at is not None

    def counting_down(self) -> bool:
        """Whether a shown row is a resting order with an end time (its time left changes)."""
        return bool(self._counting)

    def refresh_time_left(self) -> int:
        """Recompute the time left of resting orders (only theirs: a tick must stay cheap with
        thousands of rows); repaint only the status cells whose text changed. Returns how
        many changed."""
        now = self._now()
        column = self._status
        changed = 0
        for key in self._counting:
            row = self.position(key)
            if row is None:
                continue
            record = self.record(row)
            cell = status_cell(record, now)
            if cell != self.cell(row, column):
                self.set_cell(row, column, cell)
                self.signal_cells(row, [column])
                changed += 1
        return changed

    def reuse_cells(self, old: OrderRow, new: OrderRow) -> bool:
        """Cells of an unchanged order are not formatted again."""
        return old == new

    def row_of(self, order_id: str) -> int:
        """The row of an order that is shown (KeyError for one that is not)."""
        row = self.position(order_id)
        if row is None:
            raise KeyError(order_id)
        return row

    def order_row(self, row: int) -> OrderRow:
        return self.record(row)

    def highlighted(self) -> set[str]:
        now = self._clock()
        return {str(key) for key, until in self._highlight_until.items() if until > now}

    def _arm(self) -> None:
        if not self._highlight_until:
            return
        wait = max(0.0, min(self._highlight_until.values()) - self._clock())
        self._timer.start(int(wait * 1000) + 1)

    def _end_highlights(self) -> None:
        now = self._clock()
        ended = [key for key, until in self._highlight_until.items() if until <= now]
        for key in ended:
            del self._highlight_until[key]
        self._signal_highlights(ended)
        self._arm()

    def _signal_highlights(self, keys: Iterable[Hashable]) -> None:
        """Repaint the backgrounds of the rows of ``keys`` that are shown."""
        rows = [self.position(key) for key in keys]
        self.signal_rows([row for row in rows if row is not None], [Qt.ItemDataRole.BackgroundRole])

    def row_background(self, row: int) -> QColor | None:
        until = self._highlight_until.get(self.order_row(row).order_id)
        return self._highlight if until is not None and until > self._clock() else None

    def extra_data(self, row: int, column: int, role: int) -> Any:
        if role == BACKGROUND_ROLE:
            return self.row_background(row)
        if role == FONT_ROLE and column == self._status and not self.order_row(row).known_status:
            italic = QFont()
            italic.setItalic(True)
            return italic
        return None


def _order_id(row: OrderRow) -> Hashable:
    return row.order_id


def _counting(rows: Sequence[OrderRow]) -> Steps[tuple[str, ...]]:
    """The ids of resting orders with an end time (their time left changes)."""
    found: list[str] = []
    for start in range(0, len(rows), BLOCK):
        found.extend(
            row.order_id
            for row in rows[start : start + BLOCK]
            if row.resting and row.order.end_at is not None
        )
        yield
    return tuple(found)


class OrdersProxy(RecordView):
    """Orders sort as numbers and times; free text filters what is shown (at 100,000 rows
    on the records worker thread: ``app.ui.models.record_view``)."""
