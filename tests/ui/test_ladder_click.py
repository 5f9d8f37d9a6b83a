"""Click-to-trade on a ladder whose book moves under the pointer, with real mouse events.

The ladder holds its price rows (TT-style fixed rows): a click trades the price painted under
the pointer when the button went down; while the pointer is over the ladder an update changes
sizes in place and never moves a price to another row; the pointer leaving recentres it; the
selection stays on its price across a recentre. The book is moved through the real order book
feed (the sandbox's pinned mid, polled) or through the bridge's order book topic."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QHBoxLayout, QMainWindow, QWidget
from pytestqt.qtbot import QtBot

from app.domain.records import OrderBook
from app.ui.click_trade import TradeRequest
from app.ui.models.depth_model import ASK, BID, INSIDE
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.base import PanelContext
from app.ui.panels.depth import DepthPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.preferences import Preferences
from tests.harness import SandboxProcess
from tests.helpers.live import Live, OfflineContext
from tests.helpers.order_books import PAIR, book_mid, ladder_book, pin
from tests.helpers.order_ticket import ready

WAIT_MS = 10_000
#: A BTC/USD mid whose book steps (0.8 bps of the ask, floored to the cent) are 7.24 USD for
#: asks from 90,500 to 90,625: the shifts below keep every level on the same lattice.
MID = Decimal("90560.00")


@dataclass
class Desk:
    """A ladder and an order ticket side by side, sharing one context."""

    window: QMainWindow
    ladder: DepthPanel
    ticket: OrderTicketPanel
    live: Live
    requests: list[TradeRequest]


def shows_mid(qtbot: QtBot, ladder: DepthPanel, mid: Decimal) -> OrderBook:
    """Wait (polls of the real feed) until the ladder's book is quoted around ``mid``."""
    qtbot.waitUntil(lambda: book_mid(ladder.model.book) == mid, timeout=WAIT_MS)
    book = ladder.model.book
    assert book is not None
    return book


@pytest.fixture
def desk(qtbot: QtBot, live: Live, sandbox: SandboxProcess) -> Iterator[Desk]:
    Preferences(size_presets="BTC: 0.01 0.1; USD: 100 1,000").save(live.context.settings)
    live.context.settings.setValue(CONFIRM_KEY, True)
    pin(sandbox, MID)
    window = QMainWindow()
    qtbot.addWidget(window)
    box = QWidget(window)
    row = QHBoxLayout(box)
    ladder = DepthPanel(live.context, box)
    ticket = OrderTicketPanel(live.context, live.desks.orders, box)
    row.addWidget(ladder)
    row.addWidget(ticket)
    window.setCentralWidget(box)
    window.resize(1100, 420)
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    ready(qtbot, live)
    seen: list[TradeRequest] = []
    live.context.trade.requested.connect(seen.append)
    shows_mid(qtbot, ladder, MID)
    yield Desk(window, ladder, ticket, live, seen)
    pin(sandbox, None)


def prices(ladder: DepthPanel) -> list[Decimal]:
    return [row.price for row in ladder.model.rows]


def painted(ladder: DepthPanel) -> None:
    """Paint the ladder now (as the screen would), so the view knows what each row shows."""
    ladder.view.viewport().grab()


def point(widget: QWidget, pos: QPoint) -> None:
    """Move the pointer to ``pos`` of ``widget``, given in its window's coordinates: Qt then
    sends Leave to the widget the pointer was over. (A move given to another widget of the
    window directly entered it without leaving the last one; and after a QTest click the
    next move re-enters the clicked widget first, so tests move within it after a click, as
    a real pointer does; the same after a key click.)"""
    window = widget.window()
    QTest.mouseMove(window, widget.mapTo(window, pos))


def hovered(ladder: DepthPanel) -> bool:
    """Whether the ladder holds still for the pointer (a call: mypy would narrow a property)."""
    return ladder.view.hovered


def centre_of(ladder: DepthPanel, row: int) -> QPoint:
    return ladder.view.visualRect(ladder.model.index(row, 0)).center()


def shown_price_text(ladder: DepthPanel, row: int) -> str:
    text = ladder.model.index(row, 0).data()
    assert isinstance(text, str)
    return text


def assert_centred(ladder: DepthPanel) -> None:
    """Rows taken from the current book, the touch in the middle of the viewport."""
    model, view = ladder.model, ladder.view
    book = model.book
    assert book is not None
    assert prices(ladder) == sorted({p for p, _ in book.asks + book.bids}, reverse=True)
    ask, bid = model.best_ask_row, model.best_bid_row
    assert ask is not None and bid == ask + 1
    assert model.row(ask).price == model.best_ask() and model.row(bid).price == model.best_bid()
    middle = view.viewport().height() // 2
    assert view.visualRect(model.index(bid, 0)).top() == middle


@pytest.mark.slow
def test_a_click_trades_the_painted_price_while_the_book_moves_under_the_pointer(
    qtbot: QtBot, desk: Desk, sandbox: SandboxProcess
) -> None:
    ladder, ticket, model, view = desk.ladder, desk.ticket, desk.ladder.model, desk.ladder.view
    viewport = view.viewport()
    QTest.keyClick(view, Qt.Key.Key_Space)  # rows from the pinned book, touch centred
    assert_centred(ladder)
    book = model.book
    assert book is not None
    asks = sorted(p for p, _ in book.asks)
    step = asks[1] - asks[0]
    painted(ladder)

    # The trader points at the best ask: the ladder holds still from now on.
    best_ask = model.best_ask_row
    assert best_ask is not None
    aimed = model.row(best_ask).price
    assert aimed == asks[0]
    text = shown_price_text(ladder, best_ask)
    point(viewport, centre_of(ladder, best_ask))
    assert hovered(ladder)
    held, scroll = prices(ladder), view.verticalScrollBar().value()

    # The market moves up three levels: every price stays on its row, only sizes change.
    pin(sandbox, MID + 3 * step)
    moved = shows_mid(qtbot, ladder, MID + 3 * step)
    assert prices(ladder) == held and view.verticalScrollBar().value() == scroll
    assert min(p for p, _ in moved.asks) == aimed + 3 * step
    assert model.best_ask_row == best_ask - 3  # the touch moved up the fixed rows

    # The trader presses an ask row; the market drops before the button comes up.
    painted(ladder)
    target = best_ask - 4
    target_price = model.row(target).price
    assert model.row(target).side == ASK and target_price == aimed + 4 * step
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, pos=centre_of(ladder, target))
    pin(sandbox, MID - 3 * step)  # a drop between press and release
    shows_mid(qtbot, ladder, MID - 3 * step)
    assert model.row(target).side == ASK  # held rows: still there, sizes moved
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=centre_of(ladder, target))
    point(viewport, centre_of(ladder, target) + QPoint(1, 0))
    assert desk.requests[-1] == TradeRequest(PAIR, "buy", target_price, False)
    assert ticket.limit_edit.text() == format(target_price, "f")
    assert str(ticket.side) == "buy"
    assert prices(ladder) == held and view.verticalScrollBar().value() == scroll

    # The highlight is on the clicked price, and stays on it while the book moves.
    assert view.selectionModel().selectedRows()[0].row() == target
    assert ladder.selected_price() == target_price
    pin(sandbox, MID - 2 * step)
    shows_mid(qtbot, ladder, MID - 2 * step)
    assert ladder.selected_price() == target_price
    assert shown_price_text(ladder, best_ask) == text  # the first row aimed at: same text

    # The pointer leaves: the ladder recentres on the current book (mid MID - 2 steps), and
    # the selection follows its price to its new row.
    point(ladder.header, QPoint(2, 2))
    assert not hovered(ladder)
    assert_centred(ladder)
    assert prices(ladder) != held
    row = model.row_of_price(target_price)
    assert row is not None and row != target
    assert view.selectionModel().selectedRows()[0].row() == row
    assert ladder.selected_price() == target_price


def test_a_double_click_sends_the_level_painted_at_the_first_press(
    qtbot: QtBot, desk: Desk, sandbox: SandboxProcess
) -> None:
    ladder, ticket, model, view = desk.ladder, desk.ticket, desk.ladder.model, desk.ladder.view
    viewport = view.viewport()
    QTest.keyClick(view, Qt.Key.Key_Space)
    book = model.book
    assert book is not None
    bids = sorted((p for p, _ in book.bids), reverse=True)
    step = bids[0] - bids[1]
    painted(ladder)
    best_bid = model.best_bid_row
    assert best_bid is not None
    aimed = model.row(best_bid).price
    assert aimed == bids[0] and model.row(best_bid).side == BID
    centre = centre_of(ladder, best_bid)
    point(viewport, centre)
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=centre)
    # The book drops two levels between the click and the double-click.
    pin(sandbox, MID - 2 * step)
    shows_mid(qtbot, ladder, MID - 2 * step)
    assert model.row(best_bid).price == aimed  # held
    QTest.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=centre)
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=centre)
    assert QApplication.mouseButtons() == Qt.MouseButton.NoButton
    assert desk.requests == [
        TradeRequest(PAIR, "sell", aimed, False),
        TradeRequest(PAIR, "sell", aimed, True),
    ]
    qtbot.waitUntil(lambda: ticket.confirmation.isVisible())
    assert "Sell" in ticket.confirmation.text()
    QTest.keyClick(ticket.confirmation, Qt.Key.Key_Escape)  # nothing sent
    qtbot.waitUntil(lambda: ticket.outcome_label.text() == "Not sent.")


# -- driven through the bridge's order book topic ------------------------------------------------


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    return offline_context(PAIR)


def shown_ladder(qtbot: QtBot, context: PanelContext) -> tuple[QWidget, DepthPanel]:
    box = QWidget()
    qtbot.addWidget(box)
    DepthPanel(context, box).resize(420, 300)
    box.resize(420, 300)
    box.show()
    qtbot.waitExposed(box)
    ladder = box.findChild(DepthPanel)
    assert isinstance(ladder, DepthPanel)
    return box, ladder


def requested(context: PanelContext) -> list[TradeRequest]:
    seen: list[TradeRequest] = []
    context.trade.requested.connect(seen.append)
    return seen


def test_a_press_takes_the_painted_price_even_if_the_rows_changed_before_the_repaint(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """The pointer away, a book far from the last one recentres the ladder (new rows); a press
    that lands before the screen is repainted trades what the screen showed there."""
    _, ladder = shown_ladder(qtbot, offline)
    seen = requested(offline)
    offline.bridge.orderBook.emit(ladder_book(30, 30, mid=1000))
    painted(ladder)
    model, view = ladder.model, ladder.view
    row = model.best_ask_row
    assert row is not None and model.row(row).price == Decimal(1001)
    offline.bridge.orderBook.emit(ladder_book(30, 30, mid=2000))  # the touch left the view
    assert model.row(row).price == Decimal(2001)  # recentred: new rows, not yet painted
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre_of(ladder, row))
    assert seen == [TradeRequest(PAIR, "buy", Decimal(1001), False)]
    # Once painted, a click trades the new row's price.
    painted(ladder)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre_of(ladder, row))
    assert seen[-1] == TradeRequest(PAIR, "buy", Decimal(2001), False)


def test_while_hovered_the_rows_hold_even_when_the_touch_leaves_and_centre_recentres(
    qtbot: QtBot, offline: PanelContext
) -> None:
    _, ladder = shown_ladder(qtbot, offline)
    seen = requested(offline)
    model, view = ladder.model, ladder.view
    viewport = view.viewport()
    offline.bridge.orderBook.emit(ladder_book(30, 30, mid=1000))
    assert_centred(ladder)
    held, scroll = prices(ladder), view.verticalScrollBar().value()
    point(viewport, QPoint(10, 10))
    assert hovered(ladder)
    for mid in (1003, 1010, 1100, 990):  # up the rows, out of view, off the rows, back
        offline.bridge.orderBook.emit(ladder_book(30, 30, mid=mid))
        assert prices(ladder) == held and view.verticalScrollBar().value() == scroll, mid
    # mid 990: asks 991 .. 1020 on the rows at or above them (999 and 1000 have no row of
    # their own: the 1001 row shows them, a buy at 1001 reaches them), bids 988 down.
    ask = model.best_ask_row
    assert ask is not None and model.row(ask).price == Decimal(991)
    row_1001 = model.row_of_price(Decimal(1001))
    assert row_1001 is not None and model.row(row_1001).size == Decimal(3)
    bid = model.best_bid_row
    assert bid is not None and model.row(bid).price == Decimal(988)
    assert [model.row(r).side for r in (bid - 2, bid - 1)] == [INSIDE, INSIDE]  # 990, 989
    # ... a row inside the spread trades nothing.
    inside = next(r for r in range(model.rowCount()) if model.row(r).side == INSIDE)
    painted(ladder)
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=centre_of(ladder, inside))
    assert seen == []
    point(viewport, centre_of(ladder, inside) + QPoint(1, 0))
    assert hovered(ladder) and prices(ladder) == held

    # The trader scrolls away (wheel-less: the End key) and goes to the Centre button: no
    # recentre on the way (they put the ladder there); the button recentres it.
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_End)
    scrolled = view.verticalScrollBar().value()
    assert scrolled != scroll
    point(viewport, QPoint(10, 10))  # (after a QTest key click, see ``point``)
    point(ladder.centre_button, QPoint(3, 3))
    assert not hovered(ladder) and view.verticalScrollBar().value() == scrolled
    assert prices(ladder) == held
    QTest.mouseClick(ladder.centre_button, Qt.MouseButton.LeftButton)
    assert_centred(ladder)
    assert model.row(model.best_ask_row or 0).price == Decimal(991)
