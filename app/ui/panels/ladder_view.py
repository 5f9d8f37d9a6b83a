"""The ladder's table: what a click trades, and a view that holds still under the pointer.

A click trades the price the trader saw under the pointer when they pressed, never what the
row holds when the button comes up: the ladder's painter (``app.ui.panels.ladder_painter``)
notes, as it paints a price, which level each row shows (``saw``), and a press takes the level
noted for the row under it. A
book that arrives between the paint and the press, or between the press and the release or
the double-click, cannot change the price (nor the side) the click asks for.

The view also keeps its rows still while the pointer is over it: a press does not scroll a
half-visible row into view (Qt's auto-scroll on the current row would move every row under the
pointer between the two presses of a double-click); ``hoverChanged`` tells the panel, which
then holds its price rows (no recentring) until the pointer leaves. The pointer counts as
over the ladder once it moves (or presses) there, not when the ladder appears under a pointer
that stands still: a terminal that opens where the pointer happened to rest would otherwise
hold its first rows while the market runs off them, a one-sided ladder no one asked for.

Keys: Space asks to recentre; the browsing keys say the trader moved through the ladder.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import QEnterEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QTableView,
    QWidget,
)

from app.ui.models.ladder_rows import DepthRow
from app.ui.models.record_cells import RECORD_ROLE

#: Keys that move through the ladder: the trader is browsing, the ladder stops following.
BROWSE_KEYS = {
    Qt.Key.Key_Up,
    Qt.Key.Key_Down,
    Qt.Key.Key_PageUp,
    Qt.Key.Key_PageDown,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
}


@dataclass(frozen=True)
class Press:
    """A left press on a level: its row and the level painted there at that moment."""

    row: int
    level: DepthRow
    double: bool = False


class LadderView(QTableView):
    """The ladder's table (see the module's docstring)."""

    recentreRequested = Signal()
    browsed = Signal()
    #: A level clicked (press and release on the same row): the DepthRow painted at the press.
    levelClicked = Signal(object)
    #: A level double-clicked: the DepthRow painted at the first press.
    levelDoubleClicked = Signal(object)
    #: The pointer came over the ladder (True) or left it (False).
    hoverChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._painted: dict[int, DepthRow] = {}
        self._press: Press | None = None
        #: The last press, kept past its release: a double-click is its second press.
        self._last_press: Press | None = None
        self._pressing = False
        self._hovered = False
        #: Whether the pointer is inside the view (Enter without a Leave), moved or not.
        self._inside = False
        for part in (self.viewport(), self.horizontalHeader(), self.verticalScrollBar()):
            part.setMouseTracking(True)  # moves without a button: the pointer came over it
            part.installEventFilter(self)

    # -- what was painted -----------------------------------------------------------------------

    def saw(self, row: int, level: DepthRow) -> None:
        """``level`` was just painted in ``row`` (the painter calls this with each price)."""
        self._painted[row] = level

    def level_at(self, pos: QPoint) -> tuple[int, DepthRow] | None:
        """The row under ``pos`` (viewport coordinates) and the level painted in it (the
        model's, if that row was not painted yet); None off the rows."""
        row = self.rowAt(pos.y())
        if row < 0:
            return None
        level = self._painted.get(row)
        if level is None:
            model = self.model()
            found = model.index(row, 0).data(RECORD_ROLE) if model is not None else None
            if not isinstance(found, DepthRow):
                return None
            level = found
        return row, level

    # -- hover ----------------------------------------------------------------------------------

    @property
    def hovered(self) -> bool:
        """Whether the pointer is over the ladder (its rows, header or scroll bar), having
        moved or pressed there since it came in."""
        return self._hovered

    def enterEvent(self, event: QEnterEvent) -> None:
        self._inside = True
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self._inside = False
        self._set_hovered(False)
        super().leaveEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseMove and self._inside:
            self._set_hovered(True)
        return super().eventFilter(watched, event)

    def _set_hovered(self, hovered: bool) -> None:
        if hovered != self._hovered:
            self._hovered = hovered
            self.hoverChanged.emit(hovered)

    # -- clicks ---------------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._inside = True  # a press is over the ladder, whatever Enter said
        self._set_hovered(True)
        if event.button() == Qt.MouseButton.LeftButton:
            found = self.level_at(event.position().toPoint())
            self._press = None if found is None else Press(*found)
            self._last_press = self._press
        self._pressing = True
        try:
            super().mousePressEvent(event)
        finally:
            self._pressing = False

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            found = self.level_at(event.position().toPoint())
            first = self._last_press
            if first is not None and found is not None and first.row == found[0]:
                self._press = Press(first.row, first.level, double=True)
            else:
                self._press = None if found is None else Press(*found, double=True)
            self._last_press = None
            if self._press is not None:
                self.levelDoubleClicked.emit(self._press.level)
        self._pressing = True
        try:
            super().mouseDoubleClickEvent(event)
        finally:
            self._pressing = False

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        press, self._press = self._press, None
        super().mouseReleaseEvent(event)
        if (
            press is not None
            and not press.double  # the release of a double-click is no second click
            and event.button() == Qt.MouseButton.LeftButton
            and self.rowAt(event.position().toPoint().y()) == press.row
        ):
            self.levelClicked.emit(press.level)

    def scrollTo(
        self,
        index: QModelIndex | QPersistentModelIndex,
        hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible,
    ) -> None:
        # A press makes its row current, and Qt scrolls a current row fully into view: a
        # half-visible row clicked would move every row under the pointer.
        if not self._pressing:
            super().scrollTo(index, hint)

    # -- keys -----------------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.modifiers():
            self.recentreRequested.emit()
            event.accept()
            return
        if event.key() in BROWSE_KEYS:
            self.browsed.emit()
        super().keyPressEvent(event)
