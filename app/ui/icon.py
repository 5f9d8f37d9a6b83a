"""The application icon: ``resources/icons/tradeterm-<size>.png`` (made from the SVG by
``packaging/make_icons.py``), found by ``app.resources`` like the themes."""

from __future__ import annotations

from PySide6.QtGui import QIcon

from app.resources import icons_folder

SIZES = (16, 32, 48, 64, 128, 256)


def app_icon() -> QIcon:
    """Every PNG size in one QIcon (empty when the files are missing: a bare install)."""
    folder = icons_folder()
    icon = QIcon()
    for size in SIZES:
        path = folder / f"tradeterm-{size}.png"
        if path.exists():
            icon.addFile(str(path))
    return icon
