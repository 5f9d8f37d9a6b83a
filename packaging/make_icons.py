"""Render resources/icons/tradeterm.svg to the PNG sizes desktops and the bundle use.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py

Writes resources/icons/tradeterm-<N>.png for N in SIZES (commit them: the app and the Linux
install read the PNGs, so nothing renders SVG at start-up). QtSvg ships in PySide6-Essentials.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SOURCE = ICONS / "tradeterm.svg"
SIZES = (16, 32, 48, 64, 128, 256)


def render(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        print(f"error: cannot read {SOURCE}", file=sys.stderr)
        return 1
    for size in SIZES:
        path = ICONS / f"tradeterm-{size}.png"
        if not render(renderer, size).save(str(path)):  # PNG, from the suffix
            print(f"error: cannot write {path}", file=sys.stderr)
            return 1
        print(path.relative_to(ICONS.parents[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
