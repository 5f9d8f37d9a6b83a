"""The Qt half of ``tradeterm doctor`` (app.doctor), run in a child process
(``tradeterm doctor --qt-probe``).

Creating a ``QApplication`` whose platform plugin cannot load aborts the process: that must not
be the doctor's own process. The child prints two JSON lines on stdout — Qt's plugin folder
before it tries, then the platform, fonts and themes it found once it got a window system — and
Qt's messages go to its stderr, which the doctor reads when the child dies. ``keyring_state``
is the login dialog's view of the keyring, for the doctor's own process (no Qt imported).
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any


def _say(data: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def main() -> int:
    from PySide6.QtCore import QLibraryInfo

    _say({"plugins": QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)})
    from PySide6.QtGui import QFontDatabase
    from PySide6.QtWidgets import QApplication

    application = QApplication([sys.argv[0]])
    from app.ui.fonts import FONT_FILES, fonts_folder, load_fonts
    from app.ui.theme import themes_folder

    folder = fonts_folder()
    _say(
        {
            "platform": application.platformName(),
            "fonts_folder": str(folder),
            "missing_fonts": [name for name in FONT_FILES if not (folder / name).is_file()],
            "loaded_families": load_fonts(),
            "families": len(QFontDatabase.families()),
            "themes_folder": str(themes_folder()),
            "themes": sorted(path.stem for path in themes_folder().glob("*.qss")),
        }
    )
    return 0


def keyring_state() -> tuple[str | None, str]:
    """The keyring the login dialog would use: its backend's name, or None and why not."""
    from app.ui.secrets import system_keyring

    status = system_keyring()
    if status.store is None:
        return None, status.reason
    backend: Any = importlib.import_module("keyring").get_keyring()
    kind = type(backend)
    return f"{kind.__module__}.{kind.__qualname__}", ""
