"""A column width the trader drags (a real mouse drag on the header's edge) stays as dragged:
new rows and a resize do not size it again, it is kept in the settings and comes back when the
panel is made again (a restart, a layout switch); a double-click on its edge gives it back to
the automatic width."""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.ui.column_sizer import SETTINGS_GROUP
from app.ui.panels.orders import OrdersPanel
from tests.helpers.live import Live
from tests.helpers.qt import run
from tests.ui.columns_helpers import WAIT_MS, fitted, show_at

D = Decimal
WIDE = 1920
#: How far the trader drags the edge (px).
DRAG = 70


def open_orders(qtbot: QtBot, live: Live, rows: int) -> OrdersPanel:
    panel = OrdersPanel(live.context, live.desks.journal, interval=0.3)
    qtbot.addWidget(panel)
    show_at(qtbot, panel, panel.table, panel.table.sizer, WIDE)
    qtbot.waitUntil(lambda: panel.proxy.rowCount() == rows, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: fitted(panel.table, panel.table.sizer), timeout=WAIT_MS)
    return panel


def edge(panel: OrdersPanel, column: int) -> QPoint:
    """The right edge of ``column``'s title, where the resize handle is."""
    header = panel.table.horizontalHeader()
    right = header.sectionViewportPosition(column) + header.sectionSize(column) - 1
    return QPoint(right, header.height() // 2)


def drag(panel: OrdersPanel, column: int, by: int) -> None:
    area = panel.table.horizontalHeader().viewport()
    start = edge(panel, column)
    end = start + QPoint(by, 0)
    QTest.mousePress(area, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(area, start + QPoint(by // 2, 0))
    QTest.mouseMove(area, end)
    QTest.mouseRelease(area, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)


def test_a_dragged_width_is_kept_and_restored_across_a_rebuild(qtbot: QtBot, live: Live) -> None:
    client = live.session.client
    run(qtbot, client.market_order("USD", "BTC", D("1000")))
    panel = open_orders(qtbot, live, 1)
    table = panel.table
    header = table.horizontalHeader()
    notional = panel.model.column("notional")
    automatic = header.sectionSize(notional)
    drag(panel, notional, DRAG)
    dragged = automatic + DRAG
    assert header.sectionSize(notional) == dragged
    assert table.sizer.pins == {"notional": dragged}
    settings = live.context.settings
    assert int(str(settings.value(f"{SETTINGS_GROUP}/orders/notional"))) == dragged
    qtbot.waitUntil(lambda: fitted(table, table.sizer), timeout=WAIT_MS)
    assert header.sectionSize(notional) == dragged  # the frame after the drag left it

    # New rows, a narrower window: the other columns are sized again, not this one.
    run(qtbot, client.market_order("USD", "BTC", D("123456.78")))
    qtbot.waitUntil(lambda: panel.proxy.rowCount() == 2, timeout=WAIT_MS)
    show_at(qtbot, panel, table, table.sizer, 1366)
    assert header.sectionSize(notional) == dragged
    panel.close()

    # The panel made again (a restart, a layout switch): the width the trader chose is back.
    again = open_orders(qtbot, live, 2)
    assert again.table.horizontalHeader().sectionSize(notional) == dragged
    assert again.table.sizer.pins == {"notional": dragged}

    # A double-click on the edge gives the column back to the automatic width.
    area = again.table.horizontalHeader().viewport()
    QTest.mouseDClick(
        area, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, edge(again, notional)
    )
    qtbot.waitUntil(lambda: fitted(again.table, again.table.sizer), timeout=WAIT_MS)
    assert again.table.sizer.pins == {}
    assert settings.value(f"{SETTINGS_GROUP}/orders/notional") is None
    wanted = again.table.sizer.widths_wanted()[notional]
    assert again.table.horizontalHeader().sectionSize(notional) == wanted < dragged
