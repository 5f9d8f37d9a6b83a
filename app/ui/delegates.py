"""Item delegates shared by the tables."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

Index = QModelIndex | QPersistentModelIndex

BAR_TRACK = QColor("#d9dde3")
BAR_OK = QColor("#3a7bd5")
BAR_WARN = QColor("#e0a526")
BAR_HIGH = QColor("#d64541")
#: Utilisation (a fraction of the limit) from which the bar turns amber, then red.
WARN_FROM = Decimal("0.75")
HIGH_FROM = Decimal("0.9")
BAR_MARGIN = 3


def bar_width(used: Decimal, total: Decimal, width: int) -> int:
    """Pixels of ``width`` filled for ``used`` of ``total``, clamped to the cell; Decimal only."""
    if total <= 0 or width <= 0 or used <= 0:
        return 0
    filled = (Decimal(width) * used / total).to_integral_value(rounding=ROUND_HALF_EVEN)
    return max(0, min(width, int(filled)))


def bar_colour(used: Decimal, total: Decimal) -> QColor:
    if total > 0 and used >= total * HIGH_FROM:
        return BAR_HIGH
    if total > 0 and used >= total * WARN_FROM:
        return BAR_WARN
    return BAR_OK


class UtilisationBarDelegate(QStyledItemDelegate):
    """Paints ``(used, total)`` Decimals from ``role`` as a bar with the cell's text over it.

    Cells whose ``role`` data is None (no credit line) are painted as ordinary text cells.
    """

    def __init__(self, role: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.role = role

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        value = index.data(self.role)
        if not (isinstance(value, tuple) and len(value) == 2):
            super().paint(painter, option, index)
            return
        used, total = value
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        text = opt.text
        opt.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        cell: QRect = opt.rect
        track = cell.adjusted(BAR_MARGIN, BAR_MARGIN, -BAR_MARGIN, -BAR_MARGIN)
        if track.width() <= 0 or track.height() <= 0:
            return
        painter.save()
        painter.fillRect(track, BAR_TRACK)
        filled = bar_width(used, total, track.width())
        if filled:
            painter.fillRect(
                QRect(track.left(), track.top(), filled, track.height()), bar_colour(used, total)
            )
        painter.setPen(QColor("#1b1b1b"))
        painter.drawText(track, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
