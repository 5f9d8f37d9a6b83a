"""The positions dock against a real sandbox whose prices stay put (``--tick 3600``): scripted
buys and sells, a paper deposit and a withdrawal, then the dock shows the figures computed by
hand (Decimal) under average cost, and FIFO's once Settings switch the method; the totals row,
the CSV, marks from the polled prices on the frame clock, a cost entered for a deposit, and a
restart that reuses the cache (or rebuilds it when it disagrees with the ledger)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QDialogButtonBox
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain import Amount
from app.domain.display import format_number
from app.domain.money import divide
from app.domain.positions import BOOK_CONTEXT, MarkKey
from app.domain.records import BlockchainInstruction
from app.services.health import Health, HealthState
from app.services.pnl_history import PnlSeries
from app.services.positions import PositionsCache
from app.ui.launch import default_panels
from app.ui.main_window import MainWindow
from app.ui.models.positions_model import TOTAL, unit_places
from app.ui.palette import current_palette
from app.ui.panels.base import OwnsFeed
from app.ui.panels.positions import PositionsPanel, positions_cache_path
from app.ui.settings_dialog import SettingsDialog
from tests.harness import SandboxProcess
from tests.helpers.live import Live, LiveFactory
from tests.helpers.positions import pro_rata
from tests.helpers.qt import filter_of, run, shown
from tests.helpers.top_of_book import top
from tests.ui.records_helpers import export_through_dialog

D = Decimal
WAIT_MS = 20_000
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"


#: ``holding(usd, btc)``: a new account that holds only these (no credit), and its dock.
Holding = Callable[[str, str], tuple[Live, PositionsPanel]]


@pytest.fixture
def holding(
    qtbot: QtBot, sandbox_factory: Callable[..., SandboxProcess], live_factory: LiveFactory
) -> Holding:
    """Accounts on a sandbox of the test's own whose market ticks once an hour (every mark is
    the first one), each with its dock open after the first refresh."""
    still = sandbox_factory("--tick", "3600")

    def account(usd: str, btc: str) -> tuple[Live, PositionsPanel]:
        live = live_factory(still, balances={"USD": usd, "BTC": btc}, credit={})
        return live, open_panel(qtbot, live)

    return account


def open_panel(qtbot: QtBot, live: Live) -> PositionsPanel:
    """The dock as the window makes it (its cache and the chart history beside the test's
    settings), shown, after its first refresh."""
    panel = shown(qtbot, PositionsPanel(live.context), 1200, 320)
    qtbot.waitUntil(lambda: panel.refreshes >= 1, timeout=WAIT_MS)
    return panel


def refreshed(qtbot: QtBot, panel: PositionsPanel, live: Live) -> None:
    """Refresh pressed; wait until the dock has read the ledger's newest entry."""
    head = run(qtbot, live.session.client.ledger(1))[0].ordering
    done = panel.refreshes
    QTest.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.refreshes > done, timeout=WAIT_MS)
    assert panel.report is not None and panel.report.last_ordering == head


@dataclass
class Script:
    """What the scripted trades did, as the sandbox answered."""

    m0: Decimal  # BTC/USD mid: the mark of every entry (the market is still)
    got1: Decimal
    got2: Decimal
    proceeds: Decimal


def trade_script(qtbot: QtBot, live: Live, panel: PositionsPanel) -> Script:
    """Buy BTC for 20,000 and 10,000 USD, sell 0.5 BTC, deposit 0.25 BTC, withdraw 0.1 BTC."""
    client = live.session.client
    assert panel.report is not None
    m0 = panel.report.table.row("BTC").mark
    assert m0 is not None
    orders = [
        run(qtbot, client.market_order("USD", "BTC", D(20000))),
        run(qtbot, client.market_order("USD", "BTC", D(10000))),
        run(qtbot, client.market_order("BTC", "USD", D("0.5"))),
    ]
    totals = []
    for order in orders:
        assert order.filled and order.result.total is not None
        totals.append(order.result.total.value)
    response = live.account.post(TOP_UP, {"amount": "0.25 BTC"})
    assert response.status_code == 200, response.text
    found = [
        i
        for i in run(qtbot, client.withdraw_instructions())
        if isinstance(i, BlockchainInstruction) and i.asset == "BTC"
    ]
    run(
        qtbot,
        client.withdraw_blockchain(
            Amount(D("0.1"), "BTC"), found[0].network_type, found[0].address
        ),
    )
    return Script(m0, *totals)


def average_by_hand(s: Script) -> tuple[Decimal, Decimal, Decimal]:
    """Held, cost basis and realised P&L of BTC under average cost (README's rule)."""
    with localcontext(BOOK_CONTEXT):
        pool, basis = D(1) + s.got1 + s.got2, s.m0 + D(30000)
        taken = pro_rata(basis, D("0.5"), pool)
        realised = s.proceeds - taken
        pool, basis = pool - D("0.5") + D("0.25"), basis - taken + D("0.25") * s.m0
        taken = pro_rata(basis, D("0.1"), pool)  # the withdrawal is a disposal at its mark
        realised += D("0.1") * s.m0 - taken
        return pool - D("0.1"), basis - taken, realised


def fifo_by_hand(s: Script) -> tuple[Decimal, Decimal]:
    """Cost basis and realised P&L of BTC under FIFO: the sale and the withdrawal both take
    from the initial lot (1 BTC at m0)."""
    with localcontext(BOOK_CONTEXT):
        basis = D("0.4") * s.m0 + D(30000) + D("0.25") * s.m0
        realised = (s.proceeds - D("0.5") * s.m0) + (D("0.1") * s.m0 - D("0.1") * s.m0)
        return basis, realised


def choose_method(qtbot: QtBot, live: Live, panel: PositionsPanel, letter: str) -> SettingsDialog:
    """Edit > Settings: the cost method picked by its first letter, Apply pressed."""
    dialog = SettingsDialog(live.context.settings, live.bridge.available_pairs, ["USD", "BTC"])
    qtbot.addWidget(dialog)
    dialog.applied.connect(panel.apply_preferences)
    dialog.show()
    box = dialog.cost_method
    assert isinstance(box, QComboBox)
    box.setFocus()
    QTest.keyClicks(box, letter)
    apply = dialog.buttons.button(QDialogButtonBox.StandardButton.Apply)
    made = panel.rebuilds
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.rebuilds > made, timeout=WAIT_MS)  # a few ms: in slices
    return dialog


@pytest.mark.slow
def test_scripted_trades_show_hand_computed_figures_under_both_methods(
    qtbot: QtBot, holding: Holding, tmp_path: Path
) -> None:
    live, panel = holding("100000", "1")
    script = trade_script(qtbot, live, panel)
    refreshed(qtbot, panel, live)
    model, precision = panel.model, live.context.precision
    held, basis, realised = average_by_hand(script)
    assert panel.report is not None
    account = run(qtbot, live.session.client.account())
    assert held == account.balances["BTC"].free + account.balances["BTC"].locked

    btc = model.line("BTC")
    assert btc is not None and btc.mark == script.m0  # the market did not move
    with localcontext(BOOK_CONTEXT):
        worth = held * script.m0
        unrealised = worth - basis
        usd = D(100000) - D(30000) + script.proceeds
    # the deposit, the withdrawal and the initial balance entered at their first mark (m0)
    values = panel.report.values
    kinds = {e.event_type for e in panel.service.entries if MarkKey.of(e) in values}
    assert kinds == {"initialBalances", "deposit", "withdrawal"}
    assert {(v.unit, v.source) for v in values.values()} == {(script.m0, "first mark")}
    assert panel.report.unpriced == ()
    assert (btc.quantity, btc.cost_basis, btc.realised_today) == (held, basis, realised)
    assert btc.average_cost == divide(basis, held)
    assert (btc.market_value, btc.unrealised) == (worth, unrealised)
    assert btc.realised_since == realised  # "since" is empty: since the account began
    # as the trader reads it: the pair's decimals, P&L signed and in the rise / fall colour
    places = unit_places(divide(basis, held), "BTC", "USD", precision)
    assert model.text("BTC", "average_cost") == format_number(divide(basis, held), places)
    assert model.text("BTC", "quantity") == precision.exact(held, "BTC")
    assert model.text("BTC", "unrealised") == format_number(unrealised, 2, signed=True)
    assert model.text("BTC", "realised_today") == format_number(realised, 2, signed=True)
    row = model.position("BTC")
    assert row is not None
    colour = model.data(
        model.index(row, model.column("realised_today")), Qt.ItemDataRole.ForegroundRole
    )
    palette = current_palette()
    assert colour == (palette.up if realised > 0 else palette.down)

    # the totals row: USD at face value (no P&L), the sums of the rows, last under any sort
    total = model.line(TOTAL)
    assert total is not None and model.line("USD") is not None
    assert model.line("USD").quantity == usd  # type: ignore[union-attr]
    assert total.market_value == usd + worth
    assert (total.unrealised, total.realised_today) == (unrealised, realised)
    assert btc.share == divide(worth, usd + worth)
    panel.table.sortByColumn(model.column("market_value"), Qt.SortOrder.DescendingOrder)
    last = panel.proxy.index(panel.proxy.rowCount() - 1, 0)
    assert last.data() == TOTAL

    # Settings: FIFO, applied at once, as hand-computed; the header names the method
    choose_method(qtbot, live, panel, "F")
    fifo_basis, fifo_realised = fifo_by_hand(script)
    btc = model.line("BTC")
    assert btc is not None
    assert (btc.cost_basis, btc.realised_today) == (fifo_basis, fifo_realised)
    assert btc.average_cost == divide(fifo_basis, held)
    assert btc.unrealised == worth - fifo_basis
    assert model.export_header(model.column("average_cost")) == "Avg cost (USD, FIFO)"
    assert "in USD · FIFO" in panel.status_label.text()
    choose_method(qtbot, live, panel, "A")
    assert model.line("BTC").cost_basis == basis  # type: ignore[union-attr]

    # the CSV: header with currency and method, every digit, the totals row last
    path = tmp_path / "positions.csv"
    export_through_dialog(qtbot, panel, path, WAIT_MS)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    cells = {r[0]: dict(zip(header, r, strict=True)) for r in rows[1:]}
    assert [r[0] for r in rows[1:]][-1] == TOTAL
    assert D(cells["BTC"]["Avg cost (USD, average)"]) == divide(basis, held)
    assert D(cells["BTC"]["Cost basis (USD, average)"]) == basis
    assert D(cells["BTC"]["Unrealised (USD)"]) == unrealised
    assert D(cells["BTC"]["Realised today (USD)"]) == realised
    assert D(cells[TOTAL]["Value (USD)"]) == usd + worth
    assert cells[TOTAL]["Quantity"] == ""


@pytest.mark.slow
def test_since_day_and_a_refused_setting(qtbot: QtBot, holding: Holding) -> None:
    live, panel = holding("50000", "1")
    run(qtbot, live.session.client.market_order("BTC", "USD", D("0.25")))
    refreshed(qtbot, panel, live)
    realised = panel.model.line("BTC").realised_today  # type: ignore[union-attr]
    assert realised is not None and realised != 0
    dialog = SettingsDialog(live.context.settings, live.bridge.available_pairs, ["USD", "BTC"])
    qtbot.addWidget(dialog)
    dialog.applied.connect(panel.apply_preferences)
    dialog.show()
    apply = dialog.buttons.button(QDialogButtonBox.StandardButton.Apply)
    QTest.keyClicks(dialog.positions_since, "31/12/2026")
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert "not a date" in dialog.error.text()
    assert dialog.positions_since.text() == "31/12/2026"  # what was typed stays
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    dialog.positions_since.clear()
    QTest.keyClicks(dialog.positions_since, tomorrow)
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert dialog.error.text() == ""
    btc = panel.model.line("BTC")
    assert btc is not None and btc.realised_since == 0 and btc.realised_today == realised
    column = panel.model.column("realised_since")
    assert panel.model.header(column) == f"Since {tomorrow}"
    assert panel.model.export_header(column) == f"Realised since {tomorrow} (USD)"


@pytest.mark.slow
def test_marks_follow_the_polled_prices_on_the_frame_clock(
    qtbot: QtBot, holding: Holding, qtmodeltester: ModelTester
) -> None:
    live, panel = holding("1000", "2")
    qtmodeltester.check(panel.model)  # type: ignore[no-untyped-call]
    qtmodeltester.check(panel.proxy)  # type: ignore[no-untyped-call]
    assert isinstance(panel, OwnsFeed)  # the window stops its refresh before the client closes
    basis = panel.model.line("BTC").cost_basis  # type: ignore[union-attr]
    assert basis is not None
    status = panel.status_label.text()
    run(qtbot, live.session.stop())  # the test alone feeds prices from here
    before = panel.revaluations
    # a poll's answer, as the stopped poller would publish it: market → service → report
    live.session.top_of_book.data.publish({"BTC/USD": top("BTC/USD", "50000", "50002")})
    qtbot.waitUntil(lambda: panel.revaluations > before, timeout=WAIT_MS)
    btc = panel.model.line("BTC")
    assert btc is not None and btc.mark == D(50001)
    assert btc.unrealised == D(100002) - basis and btc.cost_basis == basis
    assert panel.status_label.text() == status  # a tick is no refresh
    # offline: the figures greyed, the reason on the table
    live.bridge.health.emit(HealthState(Health.OFFLINE, "no route", ()))
    qtbot.waitUntil(lambda: panel.model.stale, timeout=WAIT_MS)
    cell = panel.model.index(0, panel.model.column("unrealised"))
    assert panel.model.data(cell, Qt.ItemDataRole.ForegroundRole) == current_palette().stale
    assert "offline" in panel.table.toolTip()


@pytest.mark.slow
def test_a_cost_entered_for_a_deposit_replaces_its_first_mark(
    qtbot: QtBot, holding: Holding
) -> None:
    _, panel = holding("1000", "2")
    m0 = panel.model.line("BTC").mark  # type: ignore[union-attr]
    menu = panel.menu_for("BTC")
    action = next(a for a in menu.actions() if a.objectName() == "positionsSetCost")
    assert action.isEnabled()
    assert not next(
        a for a in panel.menu_for("USD").actions() if a.objectName() == "positionsSetCost"
    ).isEnabled()
    action.trigger()
    dialog = panel.cost_dialog
    assert dialog is not None and dialog.isVisible()
    assert "Initial balance +2.00000000 BTC" in dialog.entry.currentText()
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    QTest.keyClicks(dialog.unit, "-5")
    QTest.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert "zero or more USD per BTC" in dialog.error.text() and dialog.isVisible()
    dialog.unit.clear()
    QTest.keyClicks(dialog.unit, "abc")
    QTest.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert "not a number" in dialog.error.text() and dialog.unit.text() == "abc"
    dialog.unit.clear()
    QTest.keyClicks(dialog.unit, "45,000.5")
    made = panel.rebuilds
    QTest.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: panel.rebuilds > made, timeout=WAIT_MS)
    btc = panel.model.line("BTC")
    assert btc is not None and btc.average_cost == D("45000.5") and btc.cost_basis == D(90001)
    # back to the first mark
    panel.menu_for("BTC").actions()[0].trigger()
    again = panel.cost_dialog
    assert again is not None and again.reset.isEnabled()
    QTest.mouseClick(again.reset, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.rebuilds > made + 1, timeout=WAIT_MS)
    assert panel.model.line("BTC").average_cost == m0  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_restart_reuses_the_cache_and_rebuilds_one_that_disagrees(
    qtbot: QtBot, holding: Holding
) -> None:
    live, panel = holding("20000", "1")
    run(qtbot, live.session.client.market_order("USD", "BTC", D(5000)))
    refreshed(qtbot, panel, live)
    assert panel.report is not None
    table = panel.report.table
    panel.close()
    panel.service.cache.close()  # as at quit

    again = open_panel(qtbot, live)  # a restart: the same cache file
    assert again.report is not None and again.report.fetched == 0
    assert not again.report.rebuilt
    assert again.report.table.rows == table.rows

    path = positions_cache_path(live.context.settings, live.bridge.environment)
    cache = PositionsCache(path)
    service, account = again.service.service, again.service.account
    entries = cache.entries(service, account)
    cache.add_entries(service, account, [replace(entries[0], amount=D(123))])
    cache.close()
    third = open_panel(qtbot, live)
    assert third.report is not None and third.report.rebuilt
    assert third.report.table.rows == table.rows
    assert "rebuilt" in third.status_label.text()


@pytest.mark.slow
def test_the_chart_draws_value_and_realised_and_redraws_only_on_change(
    qtbot: QtBot, holding: Holding
) -> None:
    live, panel = holding("50000", "1")
    run(qtbot, live.session.client.market_order("BTC", "USD", D("0.5")))
    refreshed(qtbot, panel, live)
    series = panel.chart.series
    assert series is not None and panel.report is not None
    totals = panel.report.table.totals
    # no stored mids: every asset at its mark now, so the last value is the table's total
    assert np.isnan(series.value[0])  # before the account's first entry: no line
    assert series.times[-1] >= panel.service.entries[-1].event_time.timestamp()  # now
    assert series.value[-1] == pytest.approx(float(totals.market_value))
    assert series.realised[0] == 0  # from the window's start
    assert series.realised[-1] == pytest.approx(float(totals.realised_today))
    redraws = panel.chart.redraws
    copy = PnlSeries(series.times.copy(), series.value.copy(), series.realised.copy())
    assert not panel.chart.set_series(copy)  # the same lines: not drawn again
    assert panel.chart.redraws == redraws
    panel.chart.window_choice.setCurrentIndex(panel.chart.window_choice.findText("Week"))
    qtbot.waitUntil(lambda: panel.chart.redraws > redraws, timeout=WAIT_MS)
    week = panel.chart.series
    assert week is not None
    # a young account: both windows start at the step boundary before its first entry
    first = panel.service.entries[0].event_time.timestamp()
    assert series.times[0] <= first < series.times[0] + 86_400 / 288
    assert week.times[0] <= first < week.times[0] + 7 * 86_400 / 288
    assert week.times[-1] >= series.times[-1]


@pytest.mark.slow
def test_in_the_window_ctrl_9_shows_it_and_its_ticks_never_relayout(
    qtbot: QtBot, live: Live
) -> None:
    """The dock is a tab of the bottom area at 1366×768; Ctrl+9 brings it to the front, and
    from then on new marks repaint cells without a layout request of the dock (so none of the
    window from it)."""
    window = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    panel = window.docks["positions"].widget()
    assert isinstance(panel, PositionsPanel)
    assert window.tabifiedDockWidgets(window.docks["orders"]).count(window.docks["positions"])
    window.docks["orders"].raise_()
    qtbot.waitUntil(lambda: not panel.in_front, timeout=WAIT_MS)
    assert not panel.refresh_timer.isActive()  # behind a tab: no reads, no re-valuing
    QTest.keyClick(window, Qt.Key.Key_9, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: panel.in_front and panel.refreshes >= 1, timeout=WAIT_MS)
    assert panel.refresh_timer.isActive()
    assert panel.width() >= 1300
    marks = panel.revaluations
    qtbot.waitUntil(lambda: panel.revaluations >= marks + 2, timeout=WAIT_MS)
    requests: list[int] = []
    counter = filter_of(requests, QEvent.Type.LayoutRequest)
    # on the dock and the panel (other panels' first data may lay the window out once)
    for widget in (window.docks["positions"], panel, panel.splitter):
        widget.installEventFilter(counter)
    seen = {panel.model.text(TOTAL, "market_value")}

    def three_totals() -> bool:
        seen.add(panel.model.text(TOTAL, "market_value"))
        return len(seen) >= 3

    qtbot.waitUntil(three_totals, timeout=WAIT_MS)  # the prices move: the total with them
    assert requests == []
