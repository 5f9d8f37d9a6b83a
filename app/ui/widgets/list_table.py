"""``ListTable``: a table of the trader's own list (watched pairs, price alerts), kept from the
keyboard as well as the mouse."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QTableView


class ListTable(QTableView):
    """Delete/Backspace ask to remove the highlighted row; Enter/Return on a current row asks
    to act on it (the watchlist chooses the pair, the alerts open the editor). The panel owning
    the list decides what each means; every other key is the table's own."""

    removeRequested = Signal()
    enterRequested = Signal(QModelIndex)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.removeRequested.emit()
            event.accept()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.enterRequested.emit(self.currentIndex())
            event.accept()
        else:
            super().keyPressEvent(event)
