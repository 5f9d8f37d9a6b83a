"""Balances panel: live sandbox balances, credit, valuation, sorting, and the model contract."""

from __future__ import annotations

from decimal import Decimal, localcontext

import pytest
from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSettings,
    Qt,
)
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QMenu,
    QStyle,
    QStyleOptionViewItem,
)
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT, AssetPair
from app.domain.records import Account, Balance, Portfolio, PortfolioBalance, TopOfBook
from app.domain.valuation import valuation_rate
from app.services.session import Balances
from app.ui.column_choice import read_hidden
from app.ui.delegates import BAR_MARGIN, UtilisationBarDelegate, bar_width
from app.ui.fonts import number_font
from app.ui.models.balances_model import (
    COLUMNS,
    SORT_ROLE,
    UTILISATION_ROLE,
    VALUE_ROLE,
    BalancesModel,
    BalancesSortView,
)
from app.ui.models.columns import column_numbers
from app.ui.palette import current_palette
from app.ui.panels.balances import DEFAULT_HIDDEN, SETTINGS_KEY, BalancesPanel
from tests.harness import body
from tests.helpers.live import Live
from tests.helpers.qt import right_click

D = Decimal
WAIT_MS = 10_000
#: Column numbers by key (the model's column spec list).
COL = column_numbers(COLUMNS)


# -- helpers --------------------------------------------------------------------------------


@pytest.fixture
def panel(qtbot: QtBot, live: Live) -> BalancesPanel:
    widget = BalancesPanel(live.context)
    qtbot.addWidget(widget)
    widget.resize(1200, 300)
    widget.show()
    qtbot.waitUntil(lambda: len(widget.model.assets()) > 0, timeout=WAIT_MS)
    return widget


def index_of(model: BalancesModel, asset: str, column: int) -> QModelIndex:
    row = model.assets().index(asset)
    return model.index(row, column)


def value(model: BalancesModel, asset: str, column: int) -> object:
    return model.data(index_of(model, asset, column), VALUE_ROLE)


def text(model: BalancesModel, asset: str, column: int) -> str:
    return str(model.data(index_of(model, asset, column)))


def book(pair: str, bid: str, ask: str) -> TopOfBook:
    return TopOfBook(AssetPair.parse(pair), D(bid), D(1), D(ask), D(1), D(ask) - D(bid))


def balances(
    rows: dict[str, tuple[str, str, str, str]], credit: dict[str, str] | None = None
) -> Balances:
    """Both views of an account, computed the sandbox's way from (free, locked, limit, pending)."""
    credit = credit or {}
    account: dict[str, Balance] = {}
    portfolio: dict[str, PortfolioBalance] = {}
    for asset, (free_s, locked_s, limit_s, pending_s) in rows.items():
        free, locked, limit, pending = D(free_s), D(locked_s), D(limit_s), D(pending_s)
        account[asset] = Balance(asset, free, locked, limit, pending, free - limit)
        used = max(D(0), -free)
        available_credit = -limit - used
        funds = max(D(0), free)
        portfolio[asset] = PortfolioBalance(
            asset, funds + available_credit, funds + locked, funds, locked, -limit,
            available_credit, used,
        )  # fmt: skip
    return Balances(
        Account("acct", "client", "test", account), Portfolio("acct", "client", "test", portfolio)
    )


BASE_ROWS = {
    "BTC": ("2", "0", "0", "0"),
    "ETH": ("10", "0", "0", "0"),
    "SOL": ("0", "0", "0", "0"),
    "USD": ("100000", "0", "-50000", "0"),
}
BOOKS = {
    "BTC/USD": book("BTC/USD", "90000", "90010"),
    "ETH/USD": book("ETH/USD", "3100", "3101"),
    "ETH/BTC": book("ETH/BTC", "0.0340", "0.0342"),
}


def filled_total(response_body: dict[str, object]) -> Decimal:
    order = response_body["order"]
    assert isinstance(order, dict)
    amount, _asset = str(order["result"]["total"]).split()
    return D(amount)


# -- live sandbox ---------------------------------------------------------------------------


def test_panel_fills_with_the_server_balances(panel: BalancesPanel) -> None:
    model = panel.model
    assert model.assets() == ["BTC", "ETH", "SOL", "USD", "USDT"]
    assert value(model, "USD", COL["free"]) == D(100000)
    assert text(model, "USD", COL["free"]) == "100,000.00"
    assert value(model, "USD", COL["locked"]) == D(0)
    assert value(model, "USD", COL["available"]) == D(150000)
    assert value(model, "USD", COL["credit_limit"]) == D(50000)
    assert value(model, "USD", COL["used_credit"]) == D(0)
    assert value(model, "USD", COL["available_credit"]) == D(50000)
    assert value(model, "USD", COL["pending_deposit"]) == D(0)
    assert text(model, "USD", COL["utilisation"]) == "0%"
    assert value(model, "BTC", COL["free"]) == D(2)
    assert text(model, "BTC", COL["free"]) == "2.00000000"
    assert value(model, "ETH", COL["free"]) == D(10)
    # No credit line on BTC: no bar.
    assert model.data(index_of(model, "BTC", COL["utilisation"]), UTILISATION_ROLE) is None
    assert text(model, "BTC", COL["utilisation"]) == ""
    # Numbers right-aligned in a fixed-pitch font; the asset code left-aligned.
    free = index_of(model, "USD", COL["free"])
    assert model.data(free, Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight
    assert model.data(free, Qt.ItemDataRole.FontRole) == number_font()  # the shipped mono
    asset = index_of(model, "USD", COL["asset"])
    assert model.data(asset, Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignLeft
    # The table shows it, through the proxy.
    assert panel.asset_order() == ["BTC", "ETH", "SOL", "USD", "USDT"]
    items = [panel.currency_box.itemText(i) for i in range(panel.currency_box.count())]
    assert items == ["BTC", "ETH", "SOL", "USD", "USDT"]
    assert panel.currency_box.currentText() == "USD"


def test_a_trade_shows_the_new_balances(qtbot: QtBot, live: Live, panel: BalancesPanel) -> None:
    response = live.account.limit_order("BTC", "USD", "0.5")
    assert response.status_code == 200, response.text
    received = filled_total(body(response))
    live.session.after_fill()
    model = panel.model
    qtbot.waitUntil(lambda: value(model, "BTC", COL["free"]) == D("1.5"), timeout=WAIT_MS)
    assert text(model, "BTC", COL["free"]) == "1.50000000"
    assert value(model, "USD", COL["free"]) == D(100000) + received
    assert value(model, "USD", COL["available"]) == D(150000) + received


def test_spending_credit_shows_used_credit_and_the_bar(
    qtbot: QtBot, live: Live, panel: BalancesPanel
) -> None:
    response = live.account.limit_order("USD", "BTC", "120000")
    assert response.status_code == 200, response.text
    live.session.after_fill()
    model = panel.model
    # Account and portfolio are two reads: a poll already in flight may pair a fresh one with
    # an old one, so wait for a snapshot where both show the order.
    qtbot.waitUntil(
        lambda: (
            value(model, "USD", COL["used_credit"]) == D(20000)
            and value(model, "USD", COL["free"]) == D(-20000)
        ),
        timeout=WAIT_MS,
    )
    assert text(model, "USD", COL["free"]) == "-20,000.00"
    free = index_of(model, "USD", COL["free"])
    assert model.data(free, Qt.ItemDataRole.ForegroundRole) == current_palette().error
    assert value(model, "USD", COL["available_credit"]) == D(30000)
    assert value(model, "USD", COL["available"]) == D(30000)
    bar = index_of(model, "USD", COL["utilisation"])
    assert model.data(bar, UTILISATION_ROLE) == (D(20000), D(50000))
    assert model.data(bar) == "40%"
    # The view paints that cell with the bar delegate.
    column = panel.table.itemDelegateForColumn(COL["utilisation"])
    assert column is panel.bar_delegate
    filled = bar_width(D(2), D(5), 194)
    assert painted_bar_pixels(panel.bar_delegate, bar, 200) == (filled, current_palette().bar)
    # The (positive) value of the BTC now held is not red.
    btc = index_of(model, "BTC", COL["free"])
    assert model.data(btc, Qt.ItemDataRole.ForegroundRole) is None


def test_total_in_usd_is_the_sum_at_the_books_used(qtbot: QtBot, panel: BalancesPanel) -> None:
    model = panel.model
    qtbot.waitUntil(lambda: "BTC/USD" in model.top_of_book, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: value(model, "BTC", COL["value"]) is not None, timeout=WAIT_MS)
    books = model.top_of_book  # the snapshot the values were computed from
    expected = D(100000) + 2 * books["BTC/USD"].mid + 10 * books["ETH/USD"].mid
    assert model.total() == expected
    assert value(model, "BTC", COL["value"]) == 2 * books["BTC/USD"].mid
    assert value(model, "USD", COL["value"]) == D(100000)
    assert value(model, "SOL", COL["value"]) == D(0)
    assert panel.total_label.text() == f"Total: {expected.quantize(D('0.01')):,} USD"
    assert model.unvalued() == []
    assert not panel.note_label.isVisible()
    # The value's tooltip gives the rate with thousands separators, like every price we write.
    tip = model.data(index_of(model, "BTC", COL["value"]), Qt.ItemDataRole.ToolTipRole)
    rate = books["BTC/USD"].mid.quantize(D("0.01"))
    assert tip == f"2.00000000 BTC at {rate:,} BTC/USD"


def test_valuation_in_btc_changes_the_total_and_persists(
    qtbot: QtBot, live: Live, panel: BalancesPanel, settings: QSettings
) -> None:
    model = panel.model
    qtbot.waitUntil(lambda: value(model, "BTC", COL["value"]) is not None, timeout=WAIT_MS)
    usd_total = model.total()
    panel.currency_box.setCurrentIndex(panel.currency_box.findText("BTC"))
    assert model.valuation_currency == "BTC"
    assert model.headerData(COL["value"], Qt.Orientation.Horizontal) == "Value (BTC)"
    books = model.top_of_book
    with localcontext(MONEY_CONTEXT):
        expected = D(100000) / books["BTC/USD"].mid + 2 + 10 * books["ETH/BTC"].mid
    assert abs(model.total() - expected) < D("1e-30")
    assert model.total() != usd_total
    assert value(model, "BTC", COL["value"]) == D(2)
    assert panel.total_label.text() == f"Total: {expected.quantize(D('1e-8')):,} BTC"
    assert settings.value(SETTINGS_KEY) == "BTC"
    assert QSettings(settings.fileName(), QSettings.Format.IniFormat).value(SETTINGS_KEY) == "BTC"

    again = BalancesPanel(live.context)
    qtbot.addWidget(again)
    assert again.valuation_currency == "BTC"
    assert again.currency_box.currentText() == "BTC"
    qtbot.waitUntil(lambda: again.model.total() > 0, timeout=WAIT_MS)
    assert again.total_label.text().endswith(" BTC")
    assert value(again.model, "BTC", COL["value"]) == D(2)


def test_assets_without_a_price_are_left_out_with_a_note(
    qtbot: QtBot, live: Live, panel: BalancesPanel
) -> None:
    response = live.account.limit_order("USD", "SOL", "1000")
    assert response.status_code == 200, response.text
    live.bridge.set_watchlist(["BTC/USD", "ETH/USD"])
    live.session.after_fill()
    model = panel.model
    qtbot.waitUntil(lambda: value(model, "SOL", COL["free"]) != D(0), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "SOL/USD" not in model.top_of_book, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: model.top_of_book != {}, timeout=WAIT_MS)
    assert text(model, "SOL", COL["value"]) == "—"
    assert model.unvalued() == ["SOL"]
    assert panel.note_label.isVisible()
    assert "SOL not valued" in panel.note_label.text()
    books = model.top_of_book
    usd = D(100000) - 1000
    expected = usd + 2 * books["BTC/USD"].mid + 10 * books["ETH/USD"].mid
    assert model.total() == expected


def test_sorting_by_free_is_numeric_and_follows_updates(
    qtbot: QtBot, live: Live, panel: BalancesPanel
) -> None:
    panel.table.sortByColumn(COL["free"], Qt.SortOrder.AscendingOrder)
    order = panel.asset_order()
    # As text, "10.000000" < "100,000.00" < "2.00000000": numbers must sort as numbers.
    assert order[-3:] == ["BTC", "ETH", "USD"]
    assert sorted(order[:2]) == ["SOL", "USDT"]
    panel.table.sortByColumn(COL["free"], Qt.SortOrder.DescendingOrder)
    assert panel.asset_order()[:3] == ["USD", "ETH", "BTC"]

    panel.table.sortByColumn(COL["free"], Qt.SortOrder.AscendingOrder)
    response = live.account.limit_order("USD", "BTC", "120000")
    assert response.status_code == 200, response.text
    live.session.after_fill()
    qtbot.waitUntil(lambda: panel.asset_order()[0] == "USD", timeout=WAIT_MS)
    assert panel.asset_order()[-2:] == ["BTC", "ETH"]  # 3.3 BTC < 10 ETH


def test_live_model_passes_the_model_tester(
    qtmodeltester: ModelTester, qtbot: QtBot, panel: BalancesPanel
) -> None:
    qtbot.waitUntil(lambda: value(panel.model, "BTC", COL["value"]) is not None, timeout=WAIT_MS)
    check_model(qtmodeltester, panel.model)
    check_model(qtmodeltester, panel.proxy)


# -- the model on hand-built snapshots ------------------------------------------------------


def test_data_changed_only_for_the_cells_that_changed(qtbot: QtBot) -> None:
    model = BalancesModel(Precision())
    model.set_balances(balances(BASE_ROWS))
    model.set_top_of_book(BOOKS)
    changes: list[tuple[int, int, int, int]] = []
    resets: list[bool] = []
    model.dataChanged.connect(
        lambda tl, br, *_: changes.append((tl.row(), tl.column(), br.row(), br.column()))
    )
    model.modelReset.connect(lambda: resets.append(True))

    # Same snapshot again: nothing.
    model.set_balances(balances(BASE_ROWS))
    assert changes == []

    # One field changes: one signal, for that one cell.
    btc = model.assets().index("BTC")
    model.set_balances(balances({**BASE_ROWS, "BTC": ("2", "0", "0", "0.25")}))
    assert changes == [(btc, COL["pending_deposit"], btc, COL["pending_deposit"])]
    assert value(model, "BTC", COL["pending_deposit"]) == D("0.25")

    # Credit spent: free, available, used/available credit, bar and value change; not the rest.
    changes.clear()
    usd = model.assets().index("USD")
    model.set_balances(balances({**BASE_ROWS, "BTC": ("2", "0", "0", "0.25"),
                                 "USD": ("-20000", "0", "-50000", "0")}))  # fmt: skip
    changed_columns = {c for r, left, _, right in changes for c in range(left, right + 1)}
    assert {r for r, *_ in changes} == {usd}
    assert changed_columns == {
        COL["free"], COL["available"], COL["used_credit"], COL["available_credit"],
        COL["utilisation"], COL["value"],
    }  # fmt: skip

    # A new price moves only the value of the asset priced by it.
    changes.clear()
    model.set_top_of_book({**BOOKS, "ETH/USD": book("ETH/USD", "3200", "3201")})
    eth = model.assets().index("ETH")
    assert changes == [(eth, COL["value"], eth, COL["value"])]
    assert resets == []

    # A new asset: the one case that resets.
    model.set_balances(balances({**BASE_ROWS, "USDT": ("5", "0", "0", "0")}))
    assert resets == [True]
    assert "USDT" in model.assets()


def test_valuation_rates_direct_inverse_and_one_hop() -> None:
    books = {
        "BTC/USD": book("BTC/USD", "90000", "90010"),
        "SOL/USDT": book("SOL/USDT", "140", "141"),
        "USDT/USD": book("USDT/USD", "0.9990", "1.0010"),
    }
    assert valuation_rate("BTC", "USD", books) == D(90005)
    with localcontext(MONEY_CONTEXT):
        assert valuation_rate("USD", "BTC", books) == 1 / D(90005)
        # SOL -> USD through USDT: 140.5 USDT per SOL, 1 USD per USDT.
        assert valuation_rate("SOL", "USD", books) == D("140.5") * D(1)
        # SOL -> BTC: SOL/USDT, USDT/USD, then USD/BTC is two hops: not valued.
        assert valuation_rate("SOL", "BTC", books) is None
        # USDT -> BTC through USD (one hop).
        assert valuation_rate("USDT", "BTC", books) == D(1) * (1 / D(90005))
    assert valuation_rate("USD", "USD", books) == D(1)
    assert valuation_rate("XRP", "USD", books) is None


def test_unvalued_assets_show_a_dash_and_stay_out_of_the_total() -> None:
    model = BalancesModel(Precision())
    model.set_balances(balances({**BASE_ROWS, "SOL": ("3", "0", "0", "0")}))
    model.set_top_of_book(BOOKS)
    assert text(model, "SOL", COL["value"]) == "—"
    assert model.data(index_of(model, "SOL", COL["value"]), VALUE_ROLE) is None
    assert model.unvalued() == ["SOL"]
    assert model.total() == D(100000) + 2 * D(90005) + 10 * D("3100.5")


def test_numbers_sort_as_decimals_in_the_proxy(qtbot: QtBot) -> None:
    model = BalancesModel(Precision())
    model.set_balances(balances({
        "AAA": ("9", "0", "0", "0"),
        "BBB": ("10", "0", "0", "0"),
        "CCC": ("-20000", "0", "-50000", "0"),
        "DDD": ("0.5", "0", "0", "0"),
        "EEE": ("1000000.123", "0", "0", "0"),
    }))  # fmt: skip
    proxy = BalancesSortView()
    proxy.setSourceModel(model)

    def order(column: int, direction: Qt.SortOrder) -> list[str]:
        proxy.sort(column, direction)
        return [str(proxy.index(r, COL["asset"]).data()) for r in range(proxy.rowCount())]

    assert order(COL["free"], Qt.SortOrder.AscendingOrder) == ["CCC", "DDD", "AAA", "BBB", "EEE"]
    assert order(COL["free"], Qt.SortOrder.DescendingOrder) == ["EEE", "BBB", "AAA", "DDD", "CCC"]
    # Only AAA has a price to USD: the others show "—", which sorts before every number.
    model.set_top_of_book({"AAA/USD": book("AAA/USD", "1", "1")})
    assert order(COL["value"], Qt.SortOrder.AscendingOrder)[-1] == "AAA"
    assert proxy.index(0, COL["free"]).data(SORT_ROLE) is not None


def test_the_bar_delegate_paints_used_over_total(qtbot: QtBot) -> None:
    model = BalancesModel(Precision())
    model.set_balances(balances({"USD": ("-20000", "0", "-50000", "0")}))
    index = index_of(model, "USD", COL["utilisation"])
    delegate = UtilisationBarDelegate(UTILISATION_ROLE)
    colours = current_palette()
    assert painted_bar_pixels(delegate, index, 206) == (80, colours.bar)  # 40% of 200 px
    model.set_balances(balances({"USD": ("-47500", "0", "-50000", "0")}))
    assert model.data(index) == "95%"
    assert painted_bar_pixels(delegate, index, 206) == (190, colours.bar_high)


def test_hand_built_model_passes_the_model_tester(qtmodeltester: ModelTester) -> None:
    model = BalancesModel(Precision())
    model.set_balances(balances({**BASE_ROWS, "USD": ("-20000", "0", "-50000", "0")}))
    model.set_top_of_book(BOOKS)
    check_model(qtmodeltester, model)


def check_model(tester: ModelTester, model: QAbstractItemModel) -> None:
    tester.check(model)  # type: ignore[no-untyped-call]  # pytest-qt ships it untyped


def painted_bar_pixels(
    delegate: UtilisationBarDelegate, index: QModelIndex | QPersistentModelIndex, width: int
) -> tuple[int, QColor | None]:
    """Paint ``index`` into an image ``width`` wide; the filled run's length and colour."""
    image = QImage(width, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, width, 24)
    option.state = QStyle.StateFlag.State_Enabled
    painter = QPainter(image)
    delegate.paint(painter, option, index)
    painter.end()
    y = BAR_MARGIN + 1  # above the centred text
    pixels = [image.pixelColor(x, y) for x in range(width)]
    trading = current_palette()
    for candidate in (trading.bar, trading.bar_warn, trading.bar_high):
        run = sum(1 for pixel in pixels if pixel.rgb() == candidate.rgb())
        if run:
            return run, candidate
    return 0, None


# -- columns chosen from the header ---------------------------------------------------------


@pytest.mark.qt_log_ignore(
    "^This plugin does not support raise\\(\\)$",  # the offscreen platform, for the popup menu
    "^This plugin does not support grabbing the keyboard$",
)
def test_less_used_columns_are_hidden_and_chosen_from_the_header_menu(
    qtbot: QtBot, panel: BalancesPanel, live: Live
) -> None:
    table = panel.table
    for key in DEFAULT_HIDDEN:
        assert table.isColumnHidden(COL[key]), key
    assert not any(table.isColumnHidden(COL[k]) for k in ("asset", "free", "locked", "value"))
    header = table.horizontalHeader()
    where = QPoint(header.sectionViewportPosition(COL["free"]) + 4, header.height() // 2)
    right_click(header.viewport(), where)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert menu is panel.columns.menu
    assert not panel.columns.actions["asset"].isEnabled()  # a row keeps its name
    limit = panel.columns.actions["credit_limit"]
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(limit).center())
    qtbot.waitUntil(lambda: not table.isColumnHidden(COL["credit_limit"]))
    assert "credit_limit" not in read_hidden(live.context.settings, "balances", DEFAULT_HIDDEN)
    panel.columns.set_shown("free", False)
    again = BalancesPanel(live.context)  # the choice is remembered
    qtbot.addWidget(again)
    assert not again.table.isColumnHidden(COL["credit_limit"])
    assert again.table.isColumnHidden(COL["free"])
    panel.columns.set_shown("free", True)
    panel.columns.set_shown("credit_limit", False)
    assert read_hidden(live.context.settings, "balances", ()) == list(DEFAULT_HIDDEN)


def test_columns_are_fitted_once_and_a_tick_changes_no_width(
    qtbot: QtBot, panel: BalancesPanel
) -> None:
    """ResizeToContents once measured every cell on every tick and relaid the window
    out; the widths are fitted to the contents once and grow only when a text grows."""
    header = panel.table.horizontalHeader()
    free = COL["free"]
    assert header.sectionResizeMode(free) == QHeaderView.ResizeMode.Interactive
    qtbot.waitUntil(lambda: not panel._fit_due, timeout=WAIT_MS)
    widths = [header.sectionSize(column) for column in range(header.count() - 1)]
    assert header.sectionSize(free) >= panel.table.sizeHintForColumn(free)  # the text fits
    resized: list[int] = []
    header.sectionResized.connect(lambda column, _old, _new: resized.append(column))
    panel.model.set_top_of_book({"BTC/USD": book("BTC/USD", "90001", "90011")})  # a tick
    qtbot.wait(50)
    assert resized == [] and widths == [header.sectionSize(c) for c in range(header.count() - 1)]
    grown = balances({**BASE_ROWS, "BTC": ("123456789.5", "0", "0", "0")})
    panel.model.set_balances(grown)  # a longer text: its column grows to fit
    qtbot.waitUntil(lambda: free in resized, timeout=WAIT_MS)
    assert header.sectionSize(free) >= panel.table.sizeHintForColumn(free)
