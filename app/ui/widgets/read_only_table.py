"""``read_only_rows``: the set-up every record table of the terminal starts from."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView


def read_only_rows(view: QTableView) -> QHeaderView:
    """Whole rows selected, nothing edited or wrapped, no row numbers, columns the trader can
    resize with the last one stretched (the record docks and the quote history alike); returns
    the horizontal header for what else a table sets on it."""
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    return header


def widen_to_fit(view: QTableView) -> None:
    """Each column at least as wide as its title and the rows in view (only ever wider: a
    width the trader chose is kept when it is enough). Cheap: the view measures only the
    rows it shows."""
    header = view.horizontalHeader()
    # Qt measures up to 1,000 rows per column by default, shown or not (300 ms for ten columns
    # of a Python model); 0 measures the rows in view only.
    precision = header.resizeContentsPrecision()
    header.setResizeContentsPrecision(0)
    try:
        for column in range(header.count()):
            wanted = max(header.sectionSizeHint(column), view.sizeHintForColumn(column))
            if header.sectionSize(column) < wanted:
                header.resizeSection(column, wanted)
    finally:
        header.setResizeContentsPrecision(precision)
