"""The fonts the terminal ships: present with their OFL licences, loaded by the theme, used for
numbers everywhere, and covering every sign the app shows — so no test (and no trader) depends
on the host's fonts."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetrics, QRawFont
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.ui import fonts
from app.ui.fonts import (
    FONT_FILES,
    GLYPHS,
    LICENCE_FILES,
    NUMBER_FAMILY,
    UI_FAMILY,
    fonts_folder,
    load_fonts,
    number_font,
)
from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.panels.log import LogPanel

APP = Path(__file__).resolve().parents[2] / "app"
#: Generous ceiling for what the fonts add to the bundle (bytes): only the weights in use.
MAX_FONT_BYTES = 1_000_000


def _raw(name: str) -> QRawFont:
    raw = QRawFont(str(fonts_folder() / name), 12)
    assert raw.isValid(), name
    return raw


def app_strings() -> dict[str, set[str]]:
    """Every non-ASCII character in the string literals of the app's code (docstrings too:
    cheap to include, and tooltips are written the same way), with the files using it."""
    found: dict[str, set[str]] = {}
    for path in APP.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.STRING:  # Python 3.11: f-strings are whole STRING tokens
                continue
            for char in token.string:
                if ord(char) > 127:
                    found.setdefault(char, set()).add(str(path.relative_to(APP.parent)))
    return found


def test_the_font_files_and_their_ofl_licences_are_shipped() -> None:
    folder = fonts_folder()
    for name in (*FONT_FILES, *LICENCE_FILES):
        assert (folder / name).is_file(), name
    for name in LICENCE_FILES:
        text = (folder / name).read_text(encoding="utf-8")
        assert "SIL OPEN FONT LICENSE Version 1.1" in text
        assert "Copyright" in text.splitlines()[0]
    size = sum((folder / name).stat().st_size for name in FONT_FILES)
    assert size <= MAX_FONT_BYTES, f"fonts weigh {size:,} bytes"
    # nothing else lies there unlisted (the bundle takes the whole folder)
    assert {path.name for path in folder.iterdir()} == {*FONT_FILES, *LICENCE_FILES}


@pytest.mark.parametrize("name", FONT_FILES)
def test_each_font_file_says_it_is_ofl(qapp: QApplication, name: str) -> None:
    """The licence in the font's own name table (ID 13), not only the text beside it."""
    raw = _raw(name)
    table = bytes(raw.fontTable("name").data())
    assert "SIL Open Font License, Version 1.1".encode("utf-16-be") in table


def test_the_theme_loads_the_fonts_and_sets_the_ui_font(app: QApplication) -> None:
    families = load_fonts()
    assert {UI_FAMILY, NUMBER_FAMILY} <= set(families)
    assert UI_FAMILY in QFontDatabase.families() and NUMBER_FAMILY in QFontDatabase.families()
    assert QFontInfo(app.font()).family() == UI_FAMILY
    assert load_fonts() == families  # loading again adds nothing


def test_numbers_use_the_shipped_fixed_pitch_font(app: QApplication) -> None:
    """Whatever the host's default monospace: JetBrains Mono, fixed pitch, same digit widths."""
    font = number_font()
    info = QFontInfo(font)
    assert info.family() == NUMBER_FAMILY and info.fixedPitch()
    metrics = QFontMetrics(font)
    assert len({metrics.horizontalAdvance(digit) for digit in "0123456789.,"}) == 1


def test_tables_and_the_log_draw_numbers_in_it(qtbot: QtBot, app: QApplication) -> None:
    model = TopOfBookModel(Precision())
    model.set_pairs(["BTC/USD"])
    font = model.data(model.index(0, 1), Qt.ItemDataRole.FontRole)
    assert isinstance(font, QFont) and QFontInfo(font).family() == NUMBER_FAMILY
    log = LogPanel()
    qtbot.addWidget(log)
    assert QFontInfo(log.view.font()).family() == NUMBER_FAMILY
    model.deleteLater()


def test_number_font_is_the_one_place_for_fixed_pitch() -> None:
    """No file of mine asks the host for its fixed font; the others' call sites are listed
    so they move over when merged (see the report)."""
    mine = [
        "ui/models/keyed_table.py",
        "ui/models/top_of_book_model.py",
        "ui/panels/log.py",
        "ui/record_details.py",
        "ui/widgets/copy_field.py",
        "ui/panels/orders.py",
        "ui/panels/ledger.py",
        "ui/panels/deposits.py",
        "ui/panels/record_parts.py",
    ]
    for name in mine:
        assert "FixedFont" not in (APP / name).read_text(encoding="utf-8"), name


@pytest.mark.slow
def test_every_sign_the_app_shows_is_in_the_shipped_fonts(app: QApplication) -> None:
    """Each non-ASCII character in the app's strings is drawn from Inter or, failing that,
    JetBrains Mono (each font falls back on the other) — never an empty box from a host
    without it (⛔ was one on Debian's stock fonts; it is now ✗)."""
    ui, mono = _raw(FONT_FILES[0]), _raw(FONT_FILES[2])
    missing = {
        char: sorted(files)
        for char, files in app_strings().items()
        if not (ui.supportsCharacter(ord(char)) or mono.supportsCharacter(ord(char)))
    }
    assert missing == {}
    for char in GLYPHS:
        assert ui.supportsCharacter(ord(char)) or mono.supportsCharacter(ord(char)), char
    # the fallback order that makes this true
    assert fonts.ui_font().families()[:2] == [UI_FAMILY, NUMBER_FAMILY]
    assert number_font().families()[:2] == [NUMBER_FAMILY, UI_FAMILY]


def test_the_signs_render_through_the_fonts_in_use(app: QApplication) -> None:
    """QFontMetrics.inFontUcs4 on the real fonts: ▲ ▼ ⚠ ✗ → ≈ ≤ ≥ · — … in both."""
    for font in (fonts.ui_font(), number_font()):
        metrics = QFontMetrics(font)
        for char in "▲▼⚠✗→≈≤≥·—…":
            assert metrics.inFontUcs4(ord(char)), (font.families(), char)
