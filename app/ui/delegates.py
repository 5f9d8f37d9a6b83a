"""Item delegates shared by the tables.

The utilisation bar takes its colours (track, fills, the text over them) from the palette in
force when it paints, so a theme switch shows at the next repaint (the switch repolishes every
widget)."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.ui.palette import TradePalette, current_palette

Index = QModelIndex | QPersistentModelIndex

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


def bar_colour(used: Decimal, total: Decimal, palette: TradePalette | None = None) -> QColor:
    """The fill for ``used`` of ``total``: the palette's bar, amber from ``WARN_FROM``, red
    from ``HIGH_FROM`` (the percentage is written over it, so colour is never alone)."""
    colours = current_palette() if palette is None else palette
    if total > 0 and used >= total * HIGH_FROM:
        return colours.bar_high
    if total > 0 and used >= total * WARN_FROM:
        return colours.bar_warn
    return colours.bar


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
        palette = current_palette()
        painter.save()
        painter.fillRect(track, palette.track)
        filled = bar_width(used, total, track.width())
        if filled:
            fill = bar_colour(used, total, palette)
            painter.fillRect(QRect(track.left(), track.top(), filled, track.height()), fill)
        painter.setPen(palette.bar_text)
        painter.drawText(track, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
