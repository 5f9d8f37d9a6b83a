"""The ladder as a trader's tool: the trader's own resting orders on their price rows (placed
through the real client and the order desk on the live sandbox, gone once filled or
cancelled), sizes at the base asset's precision without trailing-zero noise, the touch
marked, and the bid and ask colours the watchlist's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.domain.money import Price, format_trimmed
from app.domain.records import OrderBook
from app.services.own_orders import OwnOrder
from app.services.ticket import TicketInput
from app.ui import palette
from app.ui.models.depth_model import ASK, BID, DepthModel, DepthRole, DepthRow
from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.palette import DEFAULT_PALETTE, TradePalette
from app.ui.panels.base import PanelContext
from app.ui.panels.depth import DepthPanel
from app.ui.panels.ladder_painter import TOUCH_LINE
from app.ui.preferences import Preferences
from app.ui.theme import trade_palette
from tests.harness import SandboxProcess
from tests.helpers.live import Live, OfflineContext
from tests.helpers.order_books import book, book_mid, pin
from tests.helpers.qt import run

D = Decimal
PAIR = "BTC/USD"
WAIT_MS = 15_000
#: The pinned BTC/USD mid: bids 90,555.47, 90,548.23, 90,540.99, 90,533.75, ... and asks
#: 90,564.53, 90,571.77, 90,579.01, 90,586.25, ... (7.24 USD apart).
MID = D("90560.00")


def own_cell(panel: DepthPanel, price: Decimal) -> str:
    """The Own column's text on the row priced ``price`` (the row must be shown)."""
    row = panel.model.row_of_price(price)
    assert row is not None, price
    text = panel.model.index(row, panel.model.column("own")).data()
    assert isinstance(text, str)
    return text


def row_at(panel: DepthPanel, price: Decimal) -> DepthRow:
    row = panel.model.row_of_price(price)
    assert row is not None, price
    return panel.model.row(row)


def own_tip(panel: DepthPanel, price: Decimal) -> str:
    row = panel.model.row_of_price(price)
    assert row is not None, price
    tip = panel.model.index(row, panel.model.column("own")).data(Qt.ItemDataRole.ToolTipRole)
    assert isinstance(tip, str)
    return tip


def own_ids(panel: DepthPanel) -> set[str]:
    return {order.order_id for order in panel.model.own_orders}


@pytest.fixture
def pinned(live: Live, sandbox: SandboxProcess) -> Iterator[Live]:
    """The live session with BTC/USD held at ``MID`` and the own orders read twice a second."""
    Preferences(orders=D("0.5")).save(live.context.settings)
    pin(sandbox, MID)
    yield live
    pin(sandbox, None)


def open_ladder(qtbot: QtBot, live: Live) -> DepthPanel:
    live.bridge.select_pair(PAIR)
    panel = DepthPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(460, 720)  # every row from the third ask to the fourth bid in view
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: book_mid(panel.model.book) == MID, timeout=WAIT_MS)
    panel.recentre()  # rows from the pinned book
    return panel


@pytest.mark.slow
def test_own_resting_orders_show_on_their_rows_and_leave_when_filled_or_cancelled(
    qtbot: QtBot, pinned: Live, sandbox: SandboxProcess
) -> None:
    live = pinned
    client = live.session.client
    panel = open_ladder(qtbot, live)
    assert panel.model.own_orders == ()
    assert all(own_cell(panel, row.price) == "" for row in panel.model.rows)

    # A sell between the third and fourth asks (on the fourth: at or above its price), a sell
    # at the second ask that ends in a few seconds, and a buy through the order desk between
    # the third and fourth bids (on the fourth: at or below), spending 9,053.70 USD at
    # 90,537.00 at most: at least 0.1 BTC.
    between = run(qtbot, client.limit_order("BTC", "USD", D("0.25"), limit=D("90582.00")))
    end = client.clock.server_now() + timedelta(seconds=4)
    expiring = run(
        qtbot, client.limit_order("BTC", "USD", D("0.5"), limit=D("90571.77"), end_at=end)
    )
    qtbot.waitUntil(lambda: live.desks.orders.top_of_book != {}, timeout=WAIT_MS)
    ticket = TicketInput(
        "USD", "BTC", D("9053.70"), order_type="limit", limit=Price(D("90537.00"), "BTC", "USD")
    )
    result = run(qtbot, live.desks.orders.submit(ticket))
    assert result.status == "submitted" and result.order is not None, result.message
    buy = result.order
    assert {between.result.status, expiring.result.status} == {"submitted"}

    placed = {between.order_id, expiring.order_id, buy.order_id}
    qtbot.waitUntil(lambda: own_ids(panel) == placed, timeout=WAIT_MS)
    # Sizes in BTC with the column's fewest decimals: 0.25 needs two, so every row has two.
    assert own_cell(panel, D("90586.25")) == "0.25"
    assert own_cell(panel, D("90571.77")) == "0.50"
    assert own_cell(panel, D("90533.75")) == "0.10"
    shown = {row.price for row in panel.model.rows if row.own}
    assert shown == {D("90586.25"), D("90571.77"), D("90533.75")}
    assert row_at(panel, D("90586.25")).own_sell == D("0.25")
    assert row_at(panel, D("90533.75")).own_buy == D("0.1")
    # The exact prices in the tooltips, and where an order between rows is shown.
    tip = own_tip(panel, D("90586.25"))
    assert "Sell 0.25 BTC at 90,582 USD per BTC" in tip and "at or above its price" in tip
    assert between.order_id in tip
    tip = own_tip(panel, D("90533.75"))
    assert "Buy at least 0.1 BTC at 90,537 USD per BTC" in tip and "at or below" in tip
    assert "between rows" not in own_tip(panel, D("90571.77"))  # exactly at its row
    # Colours: a sell in the ask colour, a buy in the bid colour.
    own = panel.model.column("own")
    for price, wanted in ((D("90533.75"), panel.model.palette.bid), (D("90586.25"), None)):
        row = panel.model.row_of_price(price)
        assert row is not None
        colour = panel.model.index(row, own).data(Qt.ItemDataRole.ForegroundRole)
        assert colour == (wanted or panel.model.palette.ask)

    # The one with an end expires (the service cancels it): it leaves its row.
    qtbot.waitUntil(lambda: expiring.order_id not in own_ids(panel), timeout=WAIT_MS)
    assert own_cell(panel, D("90571.77")) == ""
    assert own_cell(panel, D("90586.25")) == "0.25"

    # The market runs up through the other sell: it fills, and leaves the ladder.
    pin(sandbox, D("90600.00"))
    qtbot.waitUntil(lambda: own_ids(panel) == {buy.order_id}, timeout=WAIT_MS)
    order = run(qtbot, client.order(between.order_id))
    assert order.result.status == "filled"
    panel.recentre()
    assert [row.price for row in panel.model.rows if row.own_sell] == []
    (level,) = [level for level in panel.model.rows if level.own]
    assert level.own_buy == D("0.1") and level.price <= D("90537.00")
    assert own_cell(panel, level.price) == "0.1"  # new rows: the fewest decimals again


# -- sizes, rows and colours, fed by hand ------------------------------------------------------


def test_sizes_show_the_fewest_decimals_of_their_column_and_keep_them_while_held() -> None:
    """Each amount column has one number of decimals for every row: the fewest that show each
    value exactly (never trailing zeros beyond them, never past the base asset's 8); held
    rows keep it while a later book needs fewer, new rows start afresh."""
    model = DepthModel(Precision())
    model.set_held(True)
    size, cumulative = model.column("size"), model.column("cumulative")
    model.set_book(
        book("BTC/USD", [("100.0", "20"), ("99.5", "1.5")], [("100.5", "0.125"), ("101.0", "3")])
    )

    def texts(column: int) -> list[str]:
        return [model.index(row, column).data() for row in range(model.rowCount())]

    assert texts(size) == ["3.000", "0.125", "20.000", "1.500"]
    assert texts(cumulative) == ["3.125", "0.125", "20.000", "21.500"]
    # Whole sizes at the same prices: held, the columns keep their decimals (no sideways jump).
    model.set_book(
        book("BTC/USD", [("100.0", "2"), ("99.5", "1")], [("100.5", "4"), ("101.0", "3")])
    )
    assert texts(size) == ["3.000", "4.000", "2.000", "1.000"]
    assert texts(cumulative) == ["7.000", "4.000", "2.000", "3.000"]
    model.regrid()  # a recentre: the fewest again
    assert texts(size) == ["3", "4", "2", "1"]
    assert texts(cumulative) == ["7", "4", "2", "3"]
    # Never more than the asset's decimals; thousands grouped.
    model.set_book(book("ETH/BTC", [("0.031", "1234.5678901234")], [("0.032", "0.5")]))
    assert texts(size) == ["0.500000", "1,234.567890"]  # ETH: 6 decimals
    assert model.decimals(size) == 6


def order(side: str, price: str, size: str, order_id: str = "") -> OwnOrder:
    return OwnOrder(order_id or f"{side}-{price}", side, D(price), D(size))


def test_own_orders_between_rows_sit_where_the_books_levels_would() -> None:
    """A buy on the highest row at or below its price, a sell on the lowest at or above it;
    sums per side; both sides on one row; orders beyond the rows counted apart."""
    model = DepthModel(Precision())
    model.set_held(True)
    bids = [("100.0", "1"), ("99.5", "2"), ("99.0", "3")]
    asks = [("100.5", "5"), ("101.0", "5"), ("101.5", "5")]
    model.set_book(book("BTC/USD", bids, asks))
    own = model.column("own")
    model.set_own(
        "BTC/USD",
        (
            order("sell", "100.7", "0.25"),  # -> 101.0
            order("sell", "101.0", "0.5"),  # -> 101.0 (exactly)
            order("buy", "99.9", "0.125"),  # -> 99.5
            order("buy", "99.5", "0.375"),  # -> 99.5
            order("buy", "100.2", "0.1"),  # inside the spread -> 100.0 (the best bid)
            order("sell", "100.2", "0.2"),  # inside the spread -> 100.5 (the best ask)
            order("buy", "98.0", "1"),  # below the deepest bid row: beyond
            order("sell", "102.0", "1"),  # above the highest ask row: beyond
        ),
    )
    by_price = {row.price: row for row in model.rows}
    assert by_price[D("101.0")].own_sell == D("0.75")
    assert by_price[D("99.5")].own_buy == D("0.5")
    assert by_price[D("100.0")].own_buy == D("0.1")
    assert by_price[D("100.5")].own_sell == D("0.2")
    assert {o.order_id for o in model.own_beyond} == {"buy-98.0", "sell-102.0"}
    texts = [model.index(row, own).data() for row in range(model.rowCount())]
    assert texts == ["", "0.75", "0.20", "0.10", "0.50", ""]  # sums per row: two decimals

    # Both sides on one row (a held row inside the spread after the market moved): both sizes.
    model.set_own("BTC/USD", (order("buy", "100.7", "0.1"), order("sell", "100.4", "0.2")))
    moved = book("BTC/USD", [("100.25", "1")], [("101.25", "1")])
    model.set_book(moved)
    row = model.row_of_price(D("100.5"))
    assert row is not None and model.row(row).side == "inside"
    assert model.index(row, own).data() == "0.10 / 0.20"  # buys / sells (rows held: 2 places)
    assert model.index(row, own).data(Qt.ItemDataRole.ForegroundRole) is None  # plain text

    # Another pair's orders are never laid on this pair's rows.
    model.set_own("ETH/USD", (order("buy", "100.0", "1"),))
    assert all(not r.own for r in model.rows)


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    return offline_context("BTC/USD")


def shown_ladder(qtbot: QtBot, context: PanelContext, ladder: OrderBook) -> DepthPanel:
    panel = DepthPanel(context)
    qtbot.addWidget(panel)
    panel.resize(480, 400)
    panel.show()
    qtbot.waitExposed(panel)
    context.bridge.orderBook.emit(ladder)
    return panel


def watchlist_colours(chosen: TradePalette) -> tuple[QColor, QColor]:
    """The watchlist's Bid and Ask header colours in ``chosen``."""
    watchlist = TopOfBookModel(Precision(), palette=chosen)
    fg = Qt.ItemDataRole.ForegroundRole
    bid = watchlist.headerData(watchlist.column("bid"), Qt.Orientation.Horizontal, fg)
    ask = watchlist.headerData(watchlist.column("ask"), Qt.Orientation.Horizontal, fg)
    assert isinstance(bid, QColor) and isinstance(ask, QColor)
    return bid, ask


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_touch_is_marked_and_the_sides_wear_the_watchlists_colours(
    qtbot: QtBot, offline: PanelContext, theme: str
) -> None:
    chosen = trade_palette(theme)
    palette.set_palette(chosen)
    try:
        bids = [("100.0", "1"), ("99.5", "2"), ("99.0", "3")]
        asks = [("100.5", "5"), ("101.0", "5"), ("101.5", "5")]
        panel = shown_ladder(qtbot, offline, book("BTC/USD", bids, asks))
        model, view = panel.model, panel.view
        price = model.column("price")
        bid_colour, ask_colour = watchlist_colours(chosen)
        assert model.index(0, price).data(Qt.ItemDataRole.ForegroundRole) == ask_colour
        assert model.index(5, price).data(Qt.ItemDataRole.ForegroundRole) == bid_colour
        assert model.index(0, price).data(DepthRole.SIDE_COLOUR) == ask_colour
        model.set_own("BTC/USD", (order("buy", "99.0", "1"), order("sell", "101.5", "1")))
        own = model.column("own")
        assert model.index(5, own).data(Qt.ItemDataRole.ForegroundRole) == bid_colour
        assert model.index(0, own).data(Qt.ItemDataRole.ForegroundRole) == ask_colour

        # The touch: the best ask's and the best bid's rows, and only they.
        touch = [model.index(row, 0).data(DepthRole.TOUCH) for row in range(6)]
        assert touch == [None, None, ASK, BID, None, None]
        background = Qt.ItemDataRole.BackgroundRole
        tints = [model.index(row, price).data(background) for row in range(6)]
        assert tints[:2] == [None, None] and tints[4:] == [None, None]
        assert isinstance(tints[2], QColor) and tints[2].rgb() == ask_colour.rgb()
        assert isinstance(tints[3], QColor) and tints[3].rgb() == bid_colour.rgb()
        assert 0 < tints[2].alpha() < 255  # a tint of the row, the text still reads
        # Painted: a line of the side's colour on each touch row's edge facing the spread, the
        # rows tinted apart from the others.
        image = view.viewport().grab().toImage()
        ask_rect = view.visualRect(model.index(2, price))
        bid_rect = view.visualRect(model.index(3, price))
        x = ask_rect.left() + 3
        assert image.pixelColor(x, ask_rect.bottom()).rgb() == ask_colour.rgb()
        assert image.pixelColor(x, ask_rect.bottom() - TOUCH_LINE).rgb() != ask_colour.rgb()
        assert image.pixelColor(x, bid_rect.top()).rgb() == bid_colour.rgb()
        plain = image.pixelColor(x, view.visualRect(model.index(4, price)).center().y())
        assert image.pixelColor(x, ask_rect.center().y()) != plain
        assert image.pixelColor(x, bid_rect.center().y()) != plain

        # The market moves up a level: the touch follows to its new rows.
        panel.model.set_book(book("BTC/USD", [("100.5", "1")], [("101.0", "1"), ("101.5", "1")]))
        touch = [model.index(row, 0).data(DepthRole.TOUCH) for row in range(6)]
        assert touch == [None, ASK, BID, None, None, None]
    finally:
        palette.set_palette(DEFAULT_PALETTE)


def test_live_sizes_read_at_their_columns_precision(qtbot: QtBot, pinned: Live) -> None:
    """Against the sandbox's book: every size and cumulative size is the exact value with the
    column's decimals, and the column has no more decimals than its values need."""
    panel = open_ladder(qtbot, pinned)
    model = panel.model
    for key in ("size", "cumulative"):
        column = model.column(key)
        values = [model.index(row, column).data(DepthRole.VALUE) for row in range(model.rowCount())]
        needed = max(len(format_trimmed(value).partition(".")[2]) for value in values)
        assert 0 < needed <= 8
        texts = [model.index(row, column).data() for row in range(model.rowCount())]
        for value, text in zip(values, texts, strict=True):
            assert text == ("" if value == 0 else f"{value:,.{needed}f}"), (key, value, text)
            assert D(text.replace(",", "") or "0") == value  # exact: nothing rounded away
        # no column of zeros: some value uses the last decimal shown
        assert any(text and not text.endswith("0") for text in texts)


@pytest.mark.slow
def test_columns_fit_a_narrow_dock_and_share_a_wide_one(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """The Own column is as wide as its header or its longest size; in a narrow dock the
    Cumulative column keeps the width its header needs (it was clipped to "umulative"), in a
    wide one it shares the room with the price and size columns."""
    bids = [("90555.47", "1234.125"), ("90548.23", "2")]
    asks = [("90564.53", "5"), ("90571.77", "5")]
    panel = shown_ladder(qtbot, offline, book("BTC/USD", bids, asks))
    model, header = panel.model, panel.view.horizontalHeader()
    own, size, cumulative = (model.column(key) for key in ("own", "size", "cumulative"))
    panel.resize(250, 400)  # or its minimum, if that is wider (fitting columns may widen it)
    qtbot.waitUntil(lambda: panel.width() == max(250, panel.minimumSizeHint().width()))
    assert header.sectionSize(cumulative) >= header.sectionSizeHint(cumulative)
    assert header.sectionSize(own) == header.sectionSizeHint(own)  # no orders: its header
    model.set_own("BTC/USD", (order("buy", "90550", "0.04017872"),))
    panel.recentre()  # (a read of the orders fits the columns too; the feed here reads none)
    text = model.index(model.row_of_price(D("90548.23")) or 0, own).data()
    assert text == "0.04017872"
    bold = QFont(panel.view.font())
    bold.setBold(True)  # as an own size is shown
    assert header.sectionSize(own) >= QFontMetrics(bold).horizontalAdvance(text)
    assert header.sectionSize(own) > header.sectionSizeHint(own)
    assert header.sectionSize(cumulative) >= header.sectionSizeHint(cumulative)
    panel.resize(700, 400)
    # stretched with the others (Qt hands the odd pixels out one by one)
    qtbot.waitUntil(lambda: abs(header.sectionSize(cumulative) - header.sectionSize(size)) <= 1)
    assert header.sectionSize(size) > header.sectionSizeHint(cumulative)
