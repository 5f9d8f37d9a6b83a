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
