"""Export what a table shows to CSV: the header and the rows of the model (or proxy) given, in
its order, with exact text.

A model gives each cell's exact text under ``EXPORT_ROLE`` — numbers as plain decimal strings
with every digit the service sent (``export_value``: no grouping, no rounding, no exponent),
times as ISO 8601 UTC (``2026-01-02T03:04:05.123456Z``); a cell without it falls back to its
``DisplayRole`` text. Header titles come from the model's horizontal ``DisplayRole`` header.
Pass the *proxy* the view shows to export the current view (its filter and sort order).

``ask_and_export`` asks for the path with a non-blocking ``QFileDialog.open()`` and then calls
``export_csv``; tests call ``export_csv`` directly. Given a ``job`` (the record docks:
``RecordView.export``, the view frozen when the file is chosen), it awaits that instead, which
writes in slices: 100,000 rows take about half a second to format and write, which must not
freeze the loop. The dialog opens in the folder of the last
export (kept in the settings under ``EXPORT_FOLDER_KEY``), else in the trader's Documents
folder — never the working directory the terminal happened to be started from.
"""

from __future__ import annotations

import csv
from collections.abc import Awaitable, Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from PySide6.QtCore import QAbstractItemModel, QSettings, QStandardPaths, Qt
from PySide6.QtWidgets import QFileDialog, QWidget

from app.domain import format_decimal, format_timestamp
from app.ui.tasks import TaskOwner

#: The exact text of a cell for export and copying (a str); models may leave it out.
EXPORT_ROLE = int(Qt.ItemDataRole.UserRole) + 20
#: Settings key of the folder the last CSV was exported to.
EXPORT_FOLDER_KEY = "export/lastFolder"


def documents_folder() -> Path:
    """The trader's Documents folder; the home folder when there is none (a fresh account, a
    server without a desktop), never the working directory."""
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(location) if location and Path(location).is_dir() else Path.home()


def export_folder(settings: QSettings | None) -> Path:
    """Where the export dialog opens: the last folder exported to while it still exists, else
    Documents."""
    saved = None if settings is None else settings.value(EXPORT_FOLDER_KEY)
    if isinstance(saved, str) and saved and Path(saved).is_dir():
        return Path(saved)
    return documents_folder()


def remember_folder(settings: QSettings | None, path: Path) -> None:
    """Keep the folder of ``path`` for the next export."""
    if settings is not None:
        settings.setValue(EXPORT_FOLDER_KEY, str(Path(path).parent))
        settings.sync()


def export_value(value: object) -> str:
    """Exact text of a raw value: Decimal as plain digits, datetime as ISO 8601 UTC, amounts and
    prices as their wire strings, None as empty."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return format_timestamp(value)
    return str(value)  # Amount and Price print as their wire strings


def cell_text(model: QAbstractItemModel, row: int, column: int) -> str:
    """``EXPORT_ROLE`` text of a cell, else its display text ("" when it has none)."""
    index = model.index(row, column)
    value = model.data(index, EXPORT_ROLE)
    if value is None:
        value = model.data(index, Qt.ItemDataRole.DisplayRole)
    return "" if value is None else str(value)


def header_texts(model: QAbstractItemModel) -> list[str]:
    titles = []
    for column in range(model.columnCount()):
        title = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
        titles.append("" if title is None else str(title))
    return titles


def row_texts(model: QAbstractItemModel, row: int) -> list[str]:
    return [cell_text(model, row, column) for column in range(model.columnCount())]


def rows_as_tsv(model: QAbstractItemModel, rows: list[int]) -> str:
    """Rows as tab-separated exact text, one line each (for Copy row)."""
    return "\n".join("\t".join(row_texts(model, row)) for row in rows)


def export_csv(model: QAbstractItemModel, path: Path) -> int:
    """Write the header and every row of ``model`` to ``path`` (UTF-8, RFC 4180 quoting).

    Returns the number of data rows written; OSError when the file cannot be written.
    """
    count = model.rowCount()
    with Path(path).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header_texts(model))
        for row in range(count):
            writer.writerow(row_texts(model, row))
    return count


Done = Callable[[Path, int], None]
Failed = Callable[[Path, OSError], None]
#: Writes the rows in view to a path without blocking the loop; the rows written.
ExportJob = Callable[[Path], Awaitable[int]]


async def _write_sliced(job: ExportJob, target: Path, done: Done, failed: Failed) -> None:
    try:
        rows = await job(target)
    except OSError as exc:
        failed(target, exc)
    else:
        done(target, rows)


def ask_and_export(
    parent: QWidget,
    model: QAbstractItemModel,
    suggested_name: str,
    done: Done,
    failed: Failed,
    settings: QSettings | None = None,
    job: ExportJob | None = None,
) -> QFileDialog:
    """Ask where to save (non-blocking ``open()``), then export ``model`` there.

    Returns the dialog (already open), so a caller or a test can drive it. ``done(path, rows)``
    or ``failed(path, error)`` is called once the file is written or refused. With
    ``settings``, the dialog opens in the last export's folder (``export_folder``) and a
    written file's folder is remembered.
    """
    dialog = QFileDialog(parent, "Export to CSV")
    dialog.setObjectName("csvExportDialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    dialog.setNameFilter("CSV files (*.csv)")
    dialog.setDefaultSuffix("csv")
    dialog.setDirectory(str(export_folder(settings)))
    dialog.selectFile(str(export_folder(settings) / suggested_name))
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def chosen(name: str) -> None:
        target = Path(name)
        if job is not None:

            def written(path: Path, rows: int) -> None:
                remember_folder(settings, path)
                done(path, rows)

            # Owned by the widget that asked: an export outliving its panel would call back
            # into a deleted widget.
            TaskOwner(parent).spawn(_write_sliced(job, target, written, failed), "export CSV")
            return
        try:
            rows = export_csv(model, target)
        except OSError as exc:
            failed(target, exc)
        else:
            remember_folder(settings, target)
            done(target, rows)

    dialog.fileSelected.connect(chosen)
    dialog.open()
    return dialog
