"""The depth ladder's cells and colours: texts of prices and BASE amounts, the own orders'
text and tooltip, and the colours the ladder paints in a palette (``Looks``). Plain functions
of a ``DepthRow``; the model (``app.ui.models.depth_model``) decides which decimals an amount
column shows."""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtGui import QColor

from app.domain.display import Precision, format_number
from app.services.limit_prices import display_number
from app.ui.models.ladder_rows import ASK, BID, INSIDE, SIDES, DepthRow
from app.ui.models.record_cells import Cell
from app.ui.palette import TradePalette

#: Opacity (0–255) of the touch rows' background, of an own order's cell and of a size bar,
#: each over the table's background in the side's colour.
TOUCH_ALPHA = 40
OWN_ALPHA = 80
BAR_ALPHA = 110


def side_colour(side: str, palette: TradePalette) -> QColor:
    """The price text and size bar colour of ``side`` (the bars use it translucent); a row
    inside the spread is in the ordinary text colour."""
    if side == INSIDE:
        return palette.text
    return palette.ask if side == ASK else palette.bid


def own_colour(row: DepthRow, palette: TradePalette) -> QColor | None:
    """The text colour of a row's own orders: a buy's the bid colour, a sell's the ask colour
    (the trader's buy rests among the bids); both on one row: the ordinary text colour."""
    if row.own_buy and not row.own_sell:
        return palette.bid
    if row.own_sell and not row.own_buy:
        return palette.ask
    return None


def translucent(colour: QColor, alpha: int) -> QColor:
    tinted = QColor(colour)
    tinted.setAlpha(alpha)
    return tinted


#: Why a click on a held row inside the spread does nothing.
INSIDE_TIP = (
    "Inside the spread now: no bid or ask at this price. Click a bid to sell, an ask to buy."
)
OWN_TIP = (
    "Your resting orders at this price, in BASE: buys in the bid colour, sells in the ask "
    "colour (hover a cell for each order and its exact price)"
)


def price_cell(row: DepthRow, precision: Precision) -> Cell:
    return Cell(precision.price_text(row.price, row.pair), row.price, None)


def amount_text(amount: Decimal, places: int) -> str:
    """An amount of the column: "" for none (a held row without a level, no own order)."""
    return "" if amount == 0 else format_number(amount, places)


def own_text(row: DepthRow, places: int) -> str:
    """The own size of a row: one side's, or "buys / sells" when the row holds both."""
    if row.own_buy and row.own_sell:
        return f"{format_number(row.own_buy, places)} / {format_number(row.own_sell, places)}"
    return amount_text(row.own_size, places)


def own_tip(row: DepthRow, precision: Precision) -> str | None:
    """Each own order of the row: side, size, exact limit, end; and where it sits between
    rows."""
    if not row.own:
        return None
    base, _, quote = row.pair.partition("/")
    lines = ["Your resting orders shown on this row:"]
    for order in row.own:
        words = "Buy at least" if order.side == "buy" else "Sell"
        line = (
            f"{words} {display_number(order.size)} {base} at "
            f"{display_number(order.price)} {quote} per {base}"
        )
        if order.price != row.price:
            line += (
                " (between rows: shown on the row at or below its price)"
                if order.side == "buy"
                else " (between rows: shown on the row at or above its price)"
            )
        if order.end_at is not None:
            line += f", until {order.end_at:%Y-%m-%d %H:%M} UTC"
        lines.append(line + f" · order {order.order_id}")
    return "\n".join(lines)


def places_of(value: Decimal) -> int:
    """The decimals ``value`` needs to be shown exactly: 2.50 -> 1, 20 -> 0."""
    if not value.is_finite():
        return 0
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def base_cell(amount: Decimal, row: DepthRow, precision: Precision) -> Cell:
    """An amount at the base asset's decimals (what a column shows before it knows its rows)."""
    places = precision.asset(row.pair.partition("/")[0])
    return Cell(amount_text(amount, places), amount, None)


class Looks:
    """The colours the ladder paints in one palette, made once per palette (never per paint):
    side colours, the touch's and the own orders' backgrounds, the bars."""

    def __init__(self, palette: TradePalette) -> None:
        self.side = {ASK: palette.ask, BID: palette.bid, INSIDE: palette.text}
        self.touch = {side: translucent(self.side[side], TOUCH_ALPHA) for side in SIDES}
        self.touch_stale = translucent(palette.stale, TOUCH_ALPHA)
        self.own = {
            "buy": translucent(palette.bid, OWN_ALPHA),
            "sell": translucent(palette.ask, OWN_ALPHA),
            "both": translucent(palette.text, OWN_ALPHA // 2),
        }
        self.bar = {side: translucent(self.side[side], BAR_ALPHA) for side in SIDES}
        self.bar_stale = translucent(palette.stale, BAR_ALPHA)
        self.stale = palette.stale
