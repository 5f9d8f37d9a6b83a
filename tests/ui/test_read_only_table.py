"""``widen_to_fit``: columns grow to their titles and the rows in view, never to rows out of
view (Qt would measure a thousand rows per column: 300 ms for ten columns of a Python model)."""

from __future__ import annotations

from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from app.ui.widgets.read_only_table import read_only_rows, widen_to_fit


def test_columns_fit_the_rows_in_view_only(qtbot: QtBot) -> None:
    model = QStandardItemModel(3000, 2)
    model.setHorizontalHeaderLabels(["Short", "A much longer column title"])
    for row in range(3000):
        model.setItem(row, 0, QStandardItem("x"))
    model.setItem(500, 0, QStandardItem("far below the view " * 20))
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    header = read_only_rows(view)
    header.setStretchLastSection(False)
    view.resize(400, 300)
    view.show()
    qtbot.waitExposed(view)
    for column in range(2):
        header.resizeSection(column, 10)
    precision = header.resizeContentsPrecision()
    widen_to_fit(view)
    assert header.resizeContentsPrecision() == precision  # left as it was found
    assert header.sectionSize(1) >= header.sectionSizeHint(1)  # the whole title
    wide = view.fontMetrics().horizontalAdvance("far below the view " * 20)
    assert header.sectionSize(0) < wide  # the row out of view was not measured
    view.scrollTo(model.index(500, 0))
    widen_to_fit(view)
    assert header.sectionSize(0) >= wide  # in view now: measured
