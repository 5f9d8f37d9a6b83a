"""What the record dock tests (orders, ledger, audit, positions) share: the test's trader, the
requests the client sent, choosing a filter, exporting through the file dialog, and checking an
exported CSV against the view it came from."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QFileDialog, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from app.api import SentRequest
from app.domain import parse_timestamp
from app.domain.records import LedgerEntry, Order
from app.ui.csv_export import EXPORT_ROLE
from app.ui.models.sorting import SORT_ROLE
from app.ui.panels.record_parts import within
from tests.harness import body
from tests.helpers.live import Live
from tests.helpers.qt import run

D = Decimal
EPOCH = parse_timestamp("1970-01-01T00:00:00Z")


@dataclass
class Trader:
    """The test's account: places orders and reads the ledger straight through the session's
    client, never through the dock under test."""

    qtbot: QtBot
    live: Live

    def market(self, source: str, destination: str, size: str) -> Order:
        client = self.live.session.client
        return run(self.qtbot, client.market_order(source, destination, D(size)))

    def resting(self, size: str = "10") -> Order:
        """USD→BTC asking 1 BTC per USD: it rests."""
        client = self.live.session.client
        return run(self.qtbot, client.limit_order("USD", "BTC", D(size), limit=D(1)))

    def ledger(self, **filters: Any) -> list[LedgerEntry]:
        return run(self.qtbot, self.live.session.client.ledger(100, **filters))

    def raw_ledger(self) -> list[dict[str, Any]]:
        response = self.live.account.get("/api/v1/accounting/ledger/{account}", max="100")
        assert response.status_code == 200, response.text
        entries: list[dict[str, Any]] = body(response)
        return entries


def record_requests(live: Live) -> list[SentRequest]:
    """Every request the session's client sends from now on (the client's request log)."""
    seen: list[SentRequest] = []
    live.session.client.watch_requests(seen.append)
    return seen


def sent_queries(requests: list[SentRequest], path: str) -> list[dict[str, str]]:
    """The query parameters of the requests whose path contains ``path``, in order."""
    return [dict(r.params) for r in requests if path in r.path]


def choose(box: QComboBox, value: str) -> None:
    index = box.findData(value)
    assert index >= 0, value
    box.setCurrentIndex(index)


class ExportsCsv(Protocol):
    """A dock with an Export CSV button that opens its (non-blocking) file dialog."""

    export_button: QPushButton
    export_dialog: QFileDialog | None


def export_through_dialog(
    qtbot: QtBot, panel: ExportsCsv, path: Path, timeout_ms: int = 20_000
) -> None:
    """Export CSV clicked and ``path`` chosen in the file dialog, as the trader does it;
    returns once the file is written."""
    QTest.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    dialog = panel.export_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.selectFile(str(path))
    dialog.accept()
    qtbot.waitUntil(path.exists, timeout=timeout_ms)


def compare_csv(
    model: QAbstractItemModel,
    rows: list[list[str]],
    numbers: Collection[int],
    times: Collection[int],
) -> None:
    """Header and every cell equal the view's exact text; a number is written exactly (no
    exponent) and equals its sort key, a time is UTC and the instant of its sort key."""
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert rows[0] == headers
    assert len(rows) - 1 == model.rowCount()
    for r, line in enumerate(rows[1:]):
        for c, text in enumerate(line):
            index = model.index(r, c)
            assert text == model.data(index, EXPORT_ROLE), (r, c)
            key = model.data(index, SORT_ROLE)
            if c in numbers and text:
                assert D(text) == key and format(D(text), "f") == text, (r, c)
            if c in times and text:
                stamp = parse_timestamp(text)
                assert stamp.utcoffset() == timedelta(0)
                assert D((stamp - EPOCH) // timedelta(microseconds=1)) == key, (r, c)


#: Dock widths the record panels must fit: narrow, and the widths they were clipped at.
DOCK_WIDTHS = (900, 1400, 1920)


def controls_outside(panel: QWidget) -> list[str]:
    """The panel's own visible controls (filters, buttons, labels, the table) that are not
    wholly inside it: empty when nothing is clipped."""
    return [
        child.objectName() or type(child).__name__
        for child in panel.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
        if child.isVisible() and not within(child, panel)
    ]


def fits_at_every_width(qtbot: QtBot, panel: QWidget, height: int = 420) -> None:
    """At each of ``DOCK_WIDTHS`` every control lies inside the panel (the filter and action
    rows wrap instead of running past the right edge)."""
    for width in DOCK_WIDTHS:
        panel.resize(width, height)

        def resized(wanted: int = width) -> bool:
            return panel.width() == wanted

        qtbot.waitUntil(resized)
        QApplication.processEvents()
        assert controls_outside(panel) == [], width
