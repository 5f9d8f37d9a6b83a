"""The fonts the terminal ships and uses, so numbers look the same on every machine.

Two OFL-licensed families live in ``resources/fonts`` (licence texts beside them): Inter for
the interface and JetBrains Mono for numbers, where digits must line up in columns. They are
registered with ``QFontDatabase.addApplicationFont`` by ``load_fonts`` (``apply_theme`` calls
it, so every start and every test that applies a theme has them) — the host's fonts are then
only a last resort, and a test's outcome no longer depends on which monospace the host maps
``FixedFont`` to (Noto Sans Mono, for one, does not report ``fixedPitch``).

``number_font()`` is the one place a widget asks for the font of numbers. Each family falls
back on the other (``QFont.setFamilies``), so a glyph one lacks (box-drawing in Inter) comes
from the other; ``GLYPHS`` lists the signs the app shows and ``tests/ui/test_fonts.py`` checks
that every non-ASCII character in the app's strings is in one of the two.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication

from app import resources

log = logging.getLogger(__name__)

UI_FAMILY = "Inter"
NUMBER_FAMILY = "JetBrains Mono"
#: The files shipped: only the weights in use (Qt synthesises the rest), to keep the bundle lean.
FONT_FILES = ("Inter-Regular.otf", "Inter-Bold.otf", "JetBrainsMono-Regular.ttf")
LICENCE_FILES = ("Inter-OFL.txt", "JetBrainsMono-OFL.txt")
#: Signs the app shows in labels and cells; each is in the shipped fonts.
GLYPHS = "▲▼✗⚠→≈≤≥·—…×−↑↓●"

_loaded: dict[str, int] = {}  # file name -> application font id


def fonts_folder() -> Path:
    """``resources/fonts``, wherever this install keeps it (``app.resources``)."""
    return resources.fonts_folder()


def load_fonts() -> list[str]:
    """Register the shipped fonts once per process; returns the families now available.

    A missing or unreadable file is logged and skipped: the terminal still starts, on the
    host's fonts."""
    for name in FONT_FILES:
        if name in _loaded:
            continue
        path = fonts_folder() / name
        font_id = QFontDatabase.addApplicationFont(str(path))
        if font_id < 0:
            log.warning("cannot load the font %s; using the host's fonts", path)
            continue
        _loaded[name] = font_id
    families = {
        family
        for font_id in _loaded.values()
        for family in QFontDatabase.applicationFontFamilies(font_id)
    }
    return sorted(families)


def ui_font() -> QFont:
    """The interface font: Inter, falling back on JetBrains Mono for the signs Inter lacks."""
    font = QFont(QGuiApplication.font())  # the desktop's size: the trader may have chosen it
    font.setFamilies([UI_FAMILY, NUMBER_FAMILY])
    return font


def number_font() -> QFont:
    """The font of numbers everywhere (tables, ladder, ticket, log): JetBrains Mono, fixed
    pitch so digits align, with tabular figures; Inter as fallback for a missing sign."""
    font = QFont()
    font.setFamilies([NUMBER_FAMILY, UI_FAMILY])
    font.setPointSizeF(QGuiApplication.font().pointSizeF())
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    return font


def apply_ui_font(app: QGuiApplication) -> None:
    """Load the fonts and make Inter the application's default font."""
    load_fonts()
    app.setFont(ui_font())
