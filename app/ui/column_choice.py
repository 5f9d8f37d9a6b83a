"""Which columns a table shows: chosen from its header's context menu, kept in the settings.

Why: at 1366×768 the watchlist and balances needed a horizontal scrollbar. Less-used
columns are hidden by default; a right-click on the header lists every column with a tick, and
the choice is saved under ``columns/<table>`` (the hidden keys, comma-separated: a column added
in a later version shows unless declared hidden). The first column (the row's name) cannot be
hidden: a row without its name means nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QTableView

from app.ui.models.columns import Column

SETTINGS_GROUP = "columns"


def read_hidden(settings: QSettings, table: str, default: Sequence[str]) -> list[str]:
    """The saved hidden column keys of ``table``, or ``default`` when none are saved."""
    value = settings.value(f"{SETTINGS_GROUP}/{table}")
    if value is None:
        return list(default)
    if isinstance(value, str):  # comma-separated: an empty list survives an INI file as ""
        return [key for key in value.split(",") if key]
    return list(default)


class ColumnChoice:
    """Hides the columns of ``table`` the trader (or the default) chose to hide, and offers the
    choice in the header's context menu. ``keys`` are the model's column keys, in order;
    ``changed`` runs after a column is shown or hidden (e.g. to refit the widths)."""

    def __init__(
        self,
        table: QTableView,
        name: str,
        keys: Sequence[str],
        titles: Sequence[str],
        settings: QSettings,
        default_hidden: Sequence[str] = (),
        changed: Callable[[], None] | None = None,
    ) -> None:
        self._table = table
        self._name = name
        self._keys = list(keys)
        self._titles = list(titles)
        self._settings = settings
        self._changed = changed
        self.menu = QMenu(table)
        self.menu.setObjectName(f"{name}Columns")
        self.actions: dict[str, QAction] = {}
        hidden = set(read_hidden(settings, name, default_hidden))
        for number, (key, title) in enumerate(zip(self._keys, self._titles, strict=True)):
            action = QAction(title, self.menu)
            action.setObjectName(f"column_{key}")
            action.setCheckable(True)
            action.setChecked(number == 0 or key not in hidden)
            action.setEnabled(number != 0)
            action.toggled.connect(lambda shown, k=key: self.set_shown(k, shown))
            self.menu.addAction(action)
            self.actions[key] = action
            table.setColumnHidden(number, not action.isChecked())
        header = table.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._open_menu)

    @classmethod
    def of_model(
        cls,
        table: QTableView,
        name: str,
        columns: Sequence[Column[Any]],
        settings: QSettings,
        default_hidden: Sequence[str] = (),
    ) -> ColumnChoice:
        """The choice over a model's declared columns: their keys, titled by their headers."""
        keys = [spec.key for spec in columns]
        return cls(table, name, keys, [spec.header for spec in columns], settings, default_hidden)

    @property
    def hidden(self) -> list[str]:
        return [key for key, action in self.actions.items() if not action.isChecked()]

    def set_shown(self, key: str, shown: bool) -> None:
        """Show or hide one column and remember the choice."""
        action = self.actions[key]
        if action.isChecked() != shown:
            action.setChecked(shown)  # comes back here through ``toggled``
            return
        self._table.setColumnHidden(self._keys.index(key), not shown)
        self._settings.setValue(f"{SETTINGS_GROUP}/{self._name}", ",".join(self.hidden))
        if self._changed is not None:
            self._changed()

    def _open_menu(self, where: QPoint) -> None:
        header = self._table.horizontalHeader()
        self.menu.popup(header.viewport().mapToGlobal(where))
