"""Switching the theme while the terminal runs recolours the real widgets, on a live session:
tables, depth ladder, chart, countdown bars, ticket messages, status bar, log and notices take
the new theme's trading palette, and so do the record views (orders, ledger, deposits), the
balances, the transfer instructions and their error lines; switching back restores the dark
one. Widgets destroyed before a switch are forgotten by it (their listeners are bound methods
Qt disconnects)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QAbstractItemModel, QCoreApplication, QEvent, QModelIndex, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.domain import Amount
from app.services.log_events import LogEvent, LogLevel
from app.services.rfq_desk import QuoteEvent
from app.ui import palette
from app.ui.models import balances_model, deposits_model, depth_model, ledger_model, orders_model
from app.ui.models import top_of_book_model as top_of_book
from app.ui.models.columns import column_numbers
from app.ui.models.depth_model import ASK, DepthRole
from app.ui.models.ledger_model import linked_tint
from app.ui.models.orders_model import highlight_colour
from app.ui.models.top_of_book_model import COLUMN_COUNT, TopOfBookModel
from app.ui.notices import NoticeArea, notice_colours, notice_css
from app.ui.order_confirm import confirm_order
from app.ui.palette import (
    TradePalette,
    current_palette,
    follow_palette,
    level_css,
    palette_listeners,
)
from app.ui.panels.balances import BalancesPanel
from app.ui.panels.chart import ChartPanel
from app.ui.panels.deposits import DepositsPanel
from app.ui.panels.depth import DepthPanel
from app.ui.panels.instructions import InstructionsPanel, direction_css
from app.ui.panels.ledger import LedgerPanel
from app.ui.panels.log import LogPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.orders import OrdersPanel
from app.ui.panels.rfq_ticket import RfqTicketPanel
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.status_bar import StatusBar
from app.ui.theme import COLOURS, THEMES, apply_theme, trade_palette
from app.ui.widgets.countdown import CountdownBar
from app.ui.widgets.instruction_card import BlockchainCard, warning_css
from tests.harness import Faults
from tests.helpers.colours import contrast, over
from tests.helpers.live import Live
from tests.helpers.qt import run

DARK, LIGHT = trade_palette("dark"), trade_palette("light")
#: Column numbers by key, from each table's column spec list.
ORDER_COL = column_numbers(orders_model.COLUMNS)
LEDGER_COL = column_numbers(ledger_model.COLUMNS)
DEPOSIT_COL = column_numbers(deposits_model.COLUMNS)
BALANCE_COL = column_numbers(balances_model.COLUMNS)
DEPTH_COL = column_numbers(depth_model.COLUMNS)
TOP_COL = column_numbers(top_of_book.COLUMNS)
FG, BG = Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole
WAIT_MS = 10_000
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"


@dataclass
class Terminal:
    """The panels that paint trading colours, in one shown window on a live session."""

    window: QWidget
    top: TopOfBookPanel
    depth: DepthPanel
    chart: ChartPanel
    balances: BalancesPanel
    order: OrderTicketPanel
    rfq: RfqTicketPanel
    log: LogPanel
    status: StatusBar
    notices: NoticeArea


def open_terminal(qtbot: QtBot, live: Live, *, keep: bool = True) -> Terminal:
    window = QWidget()
    if keep:
        qtbot.addWidget(window)
    context = live.context
    top, depth, chart = TopOfBookPanel(context), DepthPanel(context), ChartPanel(context)
    balances, order, rfq = (
        BalancesPanel(context),
        OrderTicketPanel(context, live.desks.orders),
        RfqTicketPanel(context, live.desks.rfq),
    )
    log, status = LogPanel(), StatusBar(live.bridge, "9.9.9")
    layout = QVBoxLayout(window)
    for widget in (top, depth, chart, balances, order, rfq, log, status):
        layout.addWidget(widget)
    notices = NoticeArea(window)
    window.resize(900, 1400)
    window.show()
    qtbot.waitExposed(window)
    return Terminal(window, top, depth, chart, balances, order, rfq, log, status, notices)


def label_colour(label: QLabel) -> QColor:
    """The colour the label's text is drawn in (its style sheet, once polished)."""
    label.ensurePolished()
    return label.palette().color(QPalette.ColorRole.WindowText)


def steady_bid(model: TopOfBookModel) -> int | None:
    """A row whose bid shows plain text right now: fresh data, not fading."""
    for row in range(model.rowCount()):
        if not model.is_stale(row) and model.flashing(row, TOP_COL["bid"]) == 0:
            return row
    return None


def bid_colour(qtbot: QtBot, model: TopOfBookModel) -> object:
    qtbot.waitUntil(lambda: steady_bid(model) is not None, timeout=WAIT_MS)
    row = steady_bid(model)
    assert row is not None
    assert model.index(row, TOP_COL["bid"]).data(FG) is None  # numbers: neutral text
    # the side's colour is on its column header (one meaning per colour)
    return model.headerData(TOP_COL["bid"], Qt.Orientation.Horizontal, FG)


def track_pixel(bar: CountdownBar) -> QColor:
    """The colour of the empty track (an idle bar: no fill, no text)."""
    bar.clear()
    image = bar.grab().toImage()
    return image.pixelColor(image.width() // 2, image.height() // 2)


def amber_pixel(bar: CountdownBar) -> QColor:
    """The colour of the filled part in the amber state (left end; the text is centred)."""
    bar.show_remaining(5.0, 10.0, "amber")
    image = bar.grab().toImage()
    return image.pixelColor(2, image.height() // 2)


def pen_colour(terminal: Terminal, curve: str) -> QColor:
    colour: QColor = terminal.chart.curves[curve].opts["pen"].color()
    return colour


def assert_colours(qtbot: QtBot, terminal: Terminal, expected: TradePalette) -> None:
    """Every panel of ``terminal`` paints in ``expected``."""
    assert current_palette() == expected
    assert bid_colour(qtbot, terminal.top.model) == expected.bid
    depth = terminal.depth.model
    assert depth.rowCount() > 0 and depth.row(0).side == ASK
    assert depth.index(0, DEPTH_COL["price"]).data(FG) == expected.ask
    assert depth.index(0, DEPTH_COL["size"]).data(DepthRole.SIDE_COLOUR) == expected.ask
    chart = terminal.chart
    assert pen_colour(terminal, "bid") == expected.bid
    assert pen_colour(terminal, "ask") == expected.ask
    assert pen_colour(terminal, "spread") == expected.spread
    assert chart.plots.backgroundBrush().color() == expected.background
    assert chart.price_plot.getAxis("left").textPen().color() == expected.text
    bar = terminal.rfq.sides["buy"].countdown
    assert bar.trade_palette == expected and track_pixel(bar) == expected.track
    assert amber_pixel(bar) == expected.bar_warn
    history = terminal.rfq.history_model
    assert history.index(0, history.column("event")).data(FG) == expected.up  # accepted
    assert label_colour(terminal.order.input_error) == expected.error
    assert terminal.balances.note_label.styleSheet() == level_css("warning", expected)
    assert label_colour(terminal.status.state) == getattr(
        expected, str(terminal.status.state.property("level"))
    )
    assert terminal.log.colour_of_line(0) == expected.error.name()
    notice = terminal.notices.findChildren(QLabel)[0]
    assert notice.styleSheet() == notice_css("warning", expected)


@pytest.mark.slow
def test_switching_to_light_recolours_every_panel_and_back_to_dark(
    qtbot: QtBot, live: Live, app: QApplication
) -> None:
    terminal = open_terminal(qtbot, live)
    live.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(lambda: terminal.depth.model.rowCount() > 0, timeout=WAIT_MS)
    QTest.keyClicks(terminal.order.size_edit, "abc")  # an input error, shown in error red
    assert terminal.order.input_error.text() and terminal.order.input_error.property("level")
    terminal.log.add(LogEvent(datetime.now(UTC), LogLevel.ERROR, "feed failed"))
    terminal.notices.show_notice("warning", "login expires soon")
    size = Amount(Decimal("0.01"), "BTC")
    terminal.rfq.history_model.add(QuoteEvent("accepted", "q1", "BTC/USD", size, side="buy"))
    assert DARK != LIGHT
    assert_colours(qtbot, terminal, DARK)

    model = terminal.top.model
    rows = model.rowCount()
    assert rows > 0

    def whole_table_colours(
        top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]
    ) -> bool:
        return (
            (top_left.row(), top_left.column()) == (0, 0)
            and (bottom_right.row(), bottom_right.column()) == (rows - 1, COLUMN_COUNT - 1)
            and sorted(roles) == sorted([FG, BG])
        )

    with qtbot.waitSignal(model.dataChanged, timeout=1000, check_params_cb=whole_table_colours):
        apply_theme(app, "light")
    assert_colours(qtbot, terminal, LIGHT)
    # The blue that read 6.7:1 on the dark table is not what the light table shows.
    assert model.palette.bid != DARK.bid

    apply_theme(app, "dark")
    assert_colours(qtbot, terminal, DARK)


def test_widgets_destroyed_before_a_switch_are_left_out_of_it(
    qtbot: QtBot, live: Live, app: QApplication
) -> None:
    before = palette_listeners()
    doomed = open_terminal(qtbot, live, keep=False)
    loose = TopOfBookModel(live.context.precision)  # no parent: dies with its last reference
    assert palette_listeners() > before + 10
    window = doomed.window
    window.close()
    window.deleteLater()
    del doomed, loose
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not shiboken6.isValid(window)
    qtbot.waitUntil(lambda: palette_listeners() == before, timeout=WAIT_MS)

    survivor = ChartPanel(live.context)
    qtbot.addWidget(survivor)
    with qtbot.captureExceptions() as exceptions:
        apply_theme(app, "light")
        QCoreApplication.processEvents()
    assert exceptions == []
    assert survivor.curves["bid"].opts["pen"].color() == LIGHT.bid


def test_a_listener_must_be_a_bound_method_of_a_qobject(qtbot: QtBot, app: QApplication) -> None:
    widget = QWidget()
    qtbot.addWidget(widget)
    with pytest.raises(TypeError, match="bound method of a QObject"):
        follow_palette(lambda _: widget.update())

    class Plain:
        def recolour(self, _: TradePalette) -> None:
            pass

    with pytest.raises(TypeError, match="bound method of a QObject"):
        follow_palette(Plain().recolour)


def test_a_lambda_listener_would_outlive_its_widget(qtbot: QtBot, app: QApplication) -> None:
    """Why the rule: the failure the bound-method listeners avoid is real and visible here."""
    widget = QLabel()

    def recolour(new: TradePalette) -> None:
        widget.setStyleSheet(f"color: {new.error.name()};")

    palette.palette_changed.connect(recolour)
    try:
        shiboken6.delete(widget)
        with qtbot.captureExceptions() as exceptions:
            apply_theme(app, "light")
        assert exceptions
        assert all("already deleted" in str(error) for _, error, _ in exceptions)
    finally:
        palette.palette_changed.disconnect(recolour)


# -- record views, balances and transfer instructions ------------------------------------------


@dataclass
class Records:
    """The record docks, balances and instructions, in one shown window on a live session."""

    window: QWidget
    orders: OrdersPanel
    ledger: LedgerPanel
    deposits: DepositsPanel
    balances: BalancesPanel
    instructions: InstructionsPanel


def open_records(qtbot: QtBot, live: Live) -> Records:
    window = QWidget()
    qtbot.addWidget(window)
    context = live.context
    records = Records(
        window,
        OrdersPanel(context, live.desks.journal),
        LedgerPanel(context),
        DepositsPanel(context),
        BalancesPanel(context),
        InstructionsPanel(context),
    )
    layout = QVBoxLayout(window)
    for panel in (
        records.orders,
        records.ledger,
        records.deposits,
        records.balances,
        records.instructions,
    ):
        layout.addWidget(panel)
    window.resize(1400, 2400)
    window.show()
    qtbot.waitExposed(window)
    return records


def first_row(model: QAbstractItemModel, column: int, wanted: str) -> int:
    """The first row whose ``column`` shows ``wanted`` (a status) or, for "-", a negative."""
    for row in range(model.rowCount()):
        text = str(model.index(row, column).data())
        if text == wanted or (wanted == "-" and text.startswith("-")):
            return row
    raise AssertionError(f"no row with {wanted!r} in column {column}")


def assert_record_colours(records: Records, expected: TradePalette) -> None:
    """Every record view, the balances and the instructions paint in ``expected``."""
    orders = records.orders.model
    filled = first_row(orders, ORDER_COL["status"], "filled")
    assert orders.index(filled, ORDER_COL["status"]).data(FG) == expected.success
    assert orders.highlight == highlight_colour(expected)
    assert label_colour(records.orders.status_label) == expected.error

    ledger = records.ledger.model
    paid = first_row(ledger, LEDGER_COL["amount"], "-")
    assert ledger.index(paid, LEDGER_COL["amount"]).data(FG) == expected.error
    assert ledger.index(paid, LEDGER_COL["asset"]).data(BG) == linked_tint(expected)  # a trade leg

    deposits = records.deposits.model
    completed = first_row(deposits, DEPOSIT_COL["status"], "completed")
    pending = first_row(deposits, DEPOSIT_COL["status"], "pending")
    assert deposits.index(completed, DEPOSIT_COL["status"]).data(FG) == expected.success
    assert deposits.index(pending, DEPOSIT_COL["status"]).data(FG) == expected.warning
    assert label_colour(records.deposits.status) == expected.error

    balances = records.balances.model
    usd = balances.assets().index("USD")
    assert balances.index(usd, BALANCE_COL["free"]).data(FG) == expected.error

    instructions = records.instructions
    assert label_colour(instructions.error_label) == expected.error
    assert instructions.deposit_button.styleSheet() == direction_css(expected)
    card = instructions.cards[0]
    assert isinstance(card, BlockchainCard)
    assert card.warning.styleSheet() == warning_css(expected)


@pytest.mark.slow
def test_record_views_balances_and_instructions_follow_the_theme(
    qtbot: QtBot, live: Live, app: QApplication, faults: Faults, tmp_path: Path
) -> None:
    account = live.account
    # The withdraw instructions cannot be read: an error line above the deposit cards.
    path = rf"^/api/v1/accounting/account/{account.account}/request/withdraw-instructions$"
    faults({"kind": "status", "status": 503, "path": path})
    # 120,000 USD paid with 100,000 held: a filled order, a negative USD balance, paid legs.
    order = run(qtbot, live.session.client.market_order("USD", "BTC", Decimal(120000)))
    assert order.result.status == "filled"
    for payload in ({"amount": "0.1 BTC"}, {"amount": "1 ETH", "pendingSeconds": 3600}):
        response = account.post(TOP_UP, payload)
        assert response.status_code == 200, response.text

    records = open_records(qtbot, live)
    orders, ledger, deposits = records.orders, records.ledger, records.deposits
    balances, instructions = records.balances, records.instructions
    qtbot.waitUntil(lambda: orders.model.rowCount() == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: ledger.snapshot is not None and not ledger.busy, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: deposits.model.rowCount() == 2, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: (row := balances.model.row_of("USD")) is not None and row.free < 0,
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: instructions.loaded and bool(instructions.cards), timeout=WAIT_MS)
    assert instructions.error_label.text().startswith("Cannot read withdraw instructions")

    # Errors on the status lines, in words and in the error colour (no event runs from here
    # on, so no poll replaces them).
    records.orders.start_filter.set_value(datetime.now(UTC))
    records.orders.end_filter.set_value(datetime.now(UTC) - timedelta(hours=1))
    assert not records.orders.apply_filters()
    assert records.orders.status_label.property("level") == "error"
    assert deposits.export_to(tmp_path / "missing" / "deposits.csv") == 0
    assert deposits.status.text().startswith("Could not write")
    assert_record_colours(records, DARK)

    models: dict[str, tuple[QAbstractItemModel, list[Qt.ItemDataRole]]] = {
        "orders": (orders.model, [FG, BG]),
        "ledger": (ledger.model, [FG, BG]),
        "deposits": (deposits.model, [FG]),
        "balances": (balances.model, [FG]),
    }
    seen: dict[str, list[tuple[tuple[int, int], tuple[int, int], list[int]]]] = {
        name: [] for name in models
    }

    def recorder(name: str) -> object:
        def on_change(top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]) -> None:
            corners = (
                (top_left.row(), top_left.column()),
                (bottom_right.row(), bottom_right.column()),
            )
            seen[name].append((*corners, sorted(roles)))

        return on_change

    slots = {name: recorder(name) for name in models}
    for name, (model, _) in models.items():
        model.dataChanged.connect(slots[name])
    try:
        apply_theme(app, "light")
    finally:
        for name, (model, _) in models.items():
            model.dataChanged.disconnect(slots[name])
    for name, (model, roles) in models.items():
        whole = ((0, 0), (model.rowCount() - 1, model.columnCount() - 1), sorted(roles))
        assert seen[name] == [whole], name  # one signal, the whole table, colour roles only
    assert_record_colours(records, LIGHT)
    assert LIGHT.success != DARK.success and LIGHT.error != DARK.error

    apply_theme(app, "dark")
    assert_record_colours(records, DARK)


def test_an_order_confirmation_warns_in_the_theme_in_force(qtbot: QtBot, app: QApplication) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    apply_theme(app, "light")
    box = confirm_order(parent, "Sell 1 BTC", [], ["Far from the market"], lambda _: None)
    assert f"color:{LIGHT.warning.name()}" in box.text() and "Far from the market" in box.text()
    box.reject()


@pytest.mark.parametrize("name", THEMES)
def test_row_tints_leave_the_text_readable(name: str) -> None:
    """The highlight of a new order and the tint of a trade's legs are translucent: the text,
    and the status and amount colours drawn on them, still read on every row background
    (4.5:1; the canceled grey, a word as well as a colour, 3:1)."""
    trading = trade_palette(name)
    for row in (COLOURS[name].base, COLOURS[name].alternate):
        for tint in (highlight_colour(trading), linked_tint(trading)):
            assert tint.alpha() < 255
            behind = over(tint, QColor(row))
            assert contrast(trading.text, behind) >= 4.5
            for ink in ("success", "warning", "error"):
                ratio = contrast(getattr(trading, ink), behind)
                assert ratio >= 4.5, f"{name} {ink} on {tint.name()} over {row}: {ratio:.2f}"
            assert contrast(trading.stale, behind) >= 3


@pytest.mark.parametrize("name", THEMES)
def test_the_login_error_reads_on_its_box(name: str) -> None:
    """The login dialog's error text is the error colour itself on a notice's error tint."""
    trading = trade_palette(name)
    background, _, _ = notice_colours("error", trading)
    assert contrast(trading.error, background) >= 4.5
