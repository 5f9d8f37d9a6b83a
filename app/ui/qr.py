"""QR codes drawn by Qt from segno's module matrix (no Pillow, no image files).

The widget encodes exactly the text it is given (an address, not a payment URI: wallets differ
in the URIs they accept, every wallet reads a bare address). It draws whole pixels per module,
never a fraction, so the code stays crisp at any size; the quiet zone (4 modules, as the QR
standard asks) is painted light even on a dark theme, so scanners find the code's edge.
"""

from __future__ import annotations

import segno
from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

QUIET_ZONE = 4
#: Medium error correction; segno raises it when that fits the same symbol size.
ERROR_LEVEL = "m"
DARK = QColor("#000000")
LIGHT = QColor("#ffffff")

Matrix = tuple[tuple[bool, ...], ...]


def qr_matrix(text: str, border: int = QUIET_ZONE) -> Matrix:
    """The modules of ``text``'s QR code, quiet zone included: True is dark."""
    code = segno.make(text, error=ERROR_LEVEL, micro=False)
    return tuple(
        tuple(bool(module) for module in row) for row in code.matrix_iter(scale=1, border=border)
    )


def qr_image(matrix: Matrix, scale: int = 4) -> QImage:
    """The matrix as an image, ``scale`` pixels per module (for copying or saving)."""
    side = len(matrix) * scale
    image = QImage(side, side, QImage.Format.Format_RGB32)
    image.fill(LIGHT)
    painter = QPainter(image)
    try:
        _paint(painter, matrix, QPoint(0, 0), scale)
    finally:
        painter.end()
    return image


def _paint(painter: QPainter, matrix: Matrix, origin: QPoint, module: int) -> None:
    painter.fillRect(QRect(origin, QSize(len(matrix) * module, len(matrix) * module)), LIGHT)
    for y, row in enumerate(matrix):
        x = 0
        while x < len(row):  # one rectangle per run of dark modules
            if not row[x]:
                x += 1
                continue
            start = x
            while x < len(row) and row[x]:
                x += 1
            painter.fillRect(
                origin.x() + start * module,
                origin.y() + y * module,
                (x - start) * module,
                module,
                DARK,
            )


class QrCodeWidget(QWidget):
    """A square QR code of ``text``, centred and as large as whole pixels per module allow."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._matrix: Matrix = ()
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.set_text(text)

    def set_text(self, text: str) -> None:
        self._text = text
        self._matrix = qr_matrix(text) if text else ()
        self.setAccessibleName(f"QR code of {text}" if text else "QR code")
        self.updateGeometry()
        self.update()

    def text(self) -> str:
        return self._text

    def matrix(self) -> Matrix:
        """The modules this widget draws, quiet zone included (True is dark)."""
        return self._matrix

    def module_size(self) -> int:
        """Pixels per module at the current size (at least 1)."""
        if not self._matrix:
            return 0
        return max(1, min(self.width(), self.height()) // len(self._matrix))

    def code_rect(self) -> QRect:
        """Where the code (quiet zone included) is drawn in the widget."""
        side = self.module_size() * len(self._matrix)
        return QRect((self.width() - side) // 2, (self.height() - side) // 2, side, side)

    def image(self, scale: int = 4) -> QImage:
        return qr_image(self._matrix, scale)

    # -- Qt -----------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        side = max(len(self._matrix), 21) * 4
        return QSize(side, side)

    def minimumSizeHint(self) -> QSize:
        side = max(len(self._matrix), 21) * 2
        return QSize(side, side)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return width

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self._matrix:
            return
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            _paint(painter, self._matrix, self.code_rect().topLeft(), self.module_size())
        finally:
            painter.end()
