"""Themes: both load and apply, switch at run time with the trading colours, and the trading
colours stay readable and colour-blind safe on each theme's table background."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from PySide6.QtCore import QSettings, qInstallMessageHandler
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDoubleSpinBox,
    QMenu,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.ui import palette
from app.ui.notices import notice_colours
from app.ui.palette import DEFAULT_PALETTE, TradePalette, current_palette
from app.ui.theme import (
    COLOURS,
    THEME_KEY,
    THEMES,
    UnknownTheme,
    add_theme_menu,
    apply_theme,
    choose_theme,
    current_theme,
    saved_theme,
    style_sheet,
    themes_folder,
    trade_palette,
)
from tests.helpers.colours import Rgb, contrast, over, rgb, to_linear

TRADING_COLOURS = ("up", "down", "bid", "ask", "stale")
#: Message text (labels, the log, the status bar, notices' frames).
MESSAGE_COLOURS = ("error", "warning", "success")
#: Lines in the chart: graphics, held to WCAG's 3:1 for non-text contrast.
LINE_COLOURS = ("mid", "spread")

#: Machado, Oliveira & Fernandes (2009), severity 1.0, on linear sRGB (as browsers' dev tools).
CVD = {
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
#: Least CIELAB distance between two signal colours as a colour-blind reader sees them.
CVD_MIN_DELTA_E = 40.0
#: The same for error against success text: always said in words too ("Refused…", "Filled…",
#: ✖/●), so colour is the second cue, held to a lower floor than up/down.
CVD_MESSAGE_MIN_DELTA_E = 30.0


# -- colour arithmetic ---------------------------------------------------------------------------


def _lab(linear: Rgb) -> Rgb:
    r, g, b = (min(1.0, max(0.0, c)) for c in linear)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    fx, fy, fz = f(x), f(y), f(z)
    return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))


def seen_by(colour: QColor, deficiency: str) -> Rgb:
    """Linear RGB of ``colour`` as a dichromat with ``deficiency`` perceives it."""
    linear = [to_linear(c) for c in rgb(colour)]
    return tuple(  # type: ignore[return-value]
        sum(m * c for m, c in zip(row, linear, strict=True)) for row in CVD[deficiency]
    )


def cvd_distance(a: QColor, b: QColor, deficiency: str) -> float:
    """CIE76 ΔE between ``a`` and ``b`` after simulating ``deficiency``."""
    return math.dist(_lab(seen_by(a, deficiency)), _lab(seen_by(b, deficiency)))


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def app(app_as_found: QApplication) -> QApplication:
    """No theme applied up front: each test applies what it checks."""
    return app_as_found


def _sample(qtbot: QtBot) -> QWidget:
    """One of each control the sheets style, shown, so their rules are parsed and polished."""
    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    combo = QComboBox()
    combo.addItems(["BTC/USD", "ETH/USD"])
    default = QPushButton("Accept")
    default.setDefault(True)
    disabled = QPushButton("Disabled")
    disabled.setEnabled(False)
    bar = QProgressBar()
    bar.setValue(40)
    bar.setProperty("state", "amber")
    box = QCheckBox("Auto-requote")
    box.setChecked(True)
    for widget in (combo, QDoubleSpinBox(), QDateEdit(), default, disabled, bar, box, QTableView()):
        layout.addWidget(widget)
    host.show()
    qtbot.waitExposed(host)
    return host


# -- loading and applying ------------------------------------------------------------------------


@pytest.mark.parametrize("name", THEMES)
def test_theme_applies_its_sheet_palette_and_trading_colours(app: QApplication, name: str) -> None:
    apply_theme(app, name)
    sheet = app.styleSheet()
    assert sheet.strip() and sheet == style_sheet(name)
    window = app.palette().window().color()
    text = app.palette().windowText().color()
    if name == "dark":
        assert window.lightnessF() < 0.2 and text.lightnessF() > 0.75
    else:
        assert window.lightnessF() > 0.85 and text.lightnessF() < 0.2
    assert app.palette().base().color() == QColor(COLOURS[name].base)
    assert current_palette() == trade_palette(name)
    assert current_theme(app) == name


def test_the_two_sheets_differ() -> None:
    dark, light = style_sheet("dark"), style_sheet("light")
    assert dark and light and dark != light


@pytest.mark.parametrize("name", THEMES)
def test_sheet_parses_and_its_images_exist(app: QApplication, qtbot: QtBot, name: str) -> None:
    """A typo in a .qss only shows as a Qt warning ("Could not parse application stylesheet")
    and unstyled widgets; a missing arrow image as a blank drop-down. Messages are caught
    with our own handler so the check holds under ``pytest -s`` too."""
    messages: list[str] = []
    previous = qInstallMessageHandler(lambda _kind, _context, text: messages.append(text))
    try:
        apply_theme(app, name)
        _sample(qtbot)
    finally:
        qInstallMessageHandler(previous)
    assert [m for m in messages if "style" in m.lower()] == []
    rules = re.sub(r"/\*.*?\*/", "", style_sheet(name), flags=re.DOTALL)
    images = re.findall(r"url\(themes:([^)]+)\)", rules)
    assert images, "the sheet draws its arrows and check marks from images"
    for image in images:
        assert (themes_folder() / image).is_file(), image


@pytest.mark.parametrize("name", THEMES)
def test_sheet_table_background_is_the_one_the_colours_are_checked_against(name: str) -> None:
    block = re.search(r"QTableView,\s*QTreeView,\s*QListView\s*\{([^}]*)\}", style_sheet(name))
    assert block is not None
    background = re.search(r"background-color:\s*(#[0-9a-fA-F]{6})", block.group(1))
    assert background is not None
    assert QColor(background.group(1)) == QColor(COLOURS[name].base)
    assert trade_palette(name).background == QColor(COLOURS[name].base)


def test_unknown_theme_is_refused_and_nothing_changes(app: QApplication) -> None:
    apply_theme(app, "dark")
    before = app.styleSheet()
    with pytest.raises(UnknownTheme, match="choose one of dark, light"):
        apply_theme(app, "pink")
    assert app.styleSheet() == before
    assert current_palette() == trade_palette("dark")


# -- switching at run time -----------------------------------------------------------------------


def test_switching_recolours_live_and_announces_it(app: QApplication, qtbot: QtBot) -> None:
    apply_theme(app, "dark")
    table = QTableView()
    qtbot.addWidget(table)
    table.show()
    assert table.palette().base().color() == QColor(COLOURS["dark"].base)
    with qtbot.waitSignal(palette.palette_changed, timeout=1000) as changed:
        apply_theme(app, "light")
    assert changed.args == [trade_palette("light")]
    assert current_palette() == trade_palette("light")
    assert current_palette().up != trade_palette("dark").up
    assert table.palette().base().color() == QColor(COLOURS["light"].base)
    with qtbot.assertNotEmitted(palette.palette_changed, wait=50):
        apply_theme(app, "light")  # the same theme again: nothing to recolour
    with qtbot.waitSignal(palette.palette_changed, timeout=1000) as back:
        apply_theme(app, "dark")
    assert back.args == [trade_palette("dark")]


def test_theme_menu_applies_and_remembers(
    app: QApplication, qtbot: QtBot, settings: QSettings
) -> None:
    assert saved_theme(settings) == "dark"  # nothing saved yet: the default
    apply_theme(app, saved_theme(settings))
    menu = QMenu()
    qtbot.addWidget(menu)
    group = add_theme_menu(menu, app, settings)
    actions = {action.objectName(): action for action in group.actions()}
    assert set(actions) == {"theme_dark", "theme_light"}
    assert actions["theme_dark"].isChecked()
    with qtbot.waitSignal(palette.palette_changed, timeout=1000):
        actions["theme_light"].trigger()
    assert current_theme(app) == "light"
    assert actions["theme_light"].isChecked() and not actions["theme_dark"].isChecked()
    assert saved_theme(QSettings(settings.fileName(), QSettings.Format.IniFormat)) == "light"


def test_saved_theme_falls_back_to_dark_on_nonsense(settings: QSettings) -> None:
    settings.setValue(THEME_KEY, "neon")
    assert saved_theme(settings) == "dark"


# -- readability ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize("colour", TRADING_COLOURS)
def test_trading_colour_reads_on_the_table_background(name: str, colour: str) -> None:
    """WCAG 2 contrast against the theme's table background: at least 4.5:1 (AA for normal
    text: more than the 3:1 asked of them, AA for large text)."""
    background = QColor(COLOURS[name].base)
    ink: QColor = getattr(trade_palette(name), colour)
    assert contrast(ink, background) >= 4.5, f"{name} {colour}: {contrast(ink, background):.2f}"


@pytest.mark.parametrize("name", THEMES)
def test_text_reads_on_a_flashing_cell_and_stale_rows_look_dimmer(name: str) -> None:
    """A price that moved is drawn in the theme's text colour on the translucent flash; a
    stale row's grey must be visibly dimmer than ordinary text."""
    colours, trading = COLOURS[name], trade_palette(name)
    background, text = QColor(colours.base), QColor(colours.text)
    for flash in (trading.up_flash, trading.down_flash):
        assert flash.alpha() < 255
        assert contrast(text, over(flash, background)) >= 4.5
    assert contrast(text, background) >= 7
    assert contrast(text, trading.stale) >= 2


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize("deficiency", sorted(CVD))
def test_up_and_down_stay_apart_for_colour_blind_traders(name: str, deficiency: str) -> None:
    """The metric: simulate the dichromat's view (Machado et al. 2009, full severity) and take
    the CIELAB distance ΔE between the two simulated colours.

    Why not luminance alone: blue and orange of equal readability have similar luminance by
    design (both must clear the contrast floor on the same background), yet a deuteranope
    tells them apart easily — red-green blindness keeps the blue-yellow channel, which is
    exactly where blue and orange differ. ΔE after simulation measures that directly and also
    catches the classic failure (green and red collapse to near-identical olive, ΔE ~10-20).
    ΔE 2.3 is a just-noticeable difference for large patches; small table text needs far more,
    so the floor is 40. Bid and ask are held to the same floor."""
    trading = trade_palette(name)
    for a, b in ((trading.up, trading.down), (trading.bid, trading.ask)):
        distance = cvd_distance(a, b, deficiency)
        assert distance >= CVD_MIN_DELTA_E, f"{name} {deficiency}: ΔE {distance:.1f}"


def test_green_and_red_would_fail_the_colour_blind_check() -> None:
    """The metric is not vacuous: the old green/red pair collapses for a deuteranope."""
    green, red = QColor("#2e9d57"), QColor("#d64545")
    assert cvd_distance(green, red, "deuteranopia") < CVD_MIN_DELTA_E


def test_palettes_are_complete_and_distinct() -> None:
    dark, light = trade_palette("dark"), trade_palette("light")
    assert isinstance(dark, TradePalette) and dark == DEFAULT_PALETTE
    names = [f.name for f in dataclasses.fields(TradePalette)]
    assert {*TRADING_COLOURS, *MESSAGE_COLOURS, *LINE_COLOURS} <= set(names)
    for colour in names:
        assert getattr(dark, colour) != getattr(light, colour), colour


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize("colour", MESSAGE_COLOURS)
def test_message_colour_reads_on_every_background_it_sits_on(name: str, colour: str) -> None:
    """Error, warning and success text sits on tables and the log (base, alternate rows), on
    panels (window) and in the status bar (between window and raised): 4.5:1 on each. The
    SANDBOX badge reverses warning and the background, so it is covered too."""
    colours = COLOURS[name]
    ink: QColor = getattr(trade_palette(name), colour)
    for background in (colours.base, colours.alternate, colours.window, colours.raised):
        ratio = contrast(ink, QColor(background))
        assert ratio >= 4.5, f"{name} {colour} on {background}: {ratio:.2f}"


@pytest.mark.parametrize("name", THEMES)
def test_text_over_bars_reads_on_the_track_and_every_fill(name: str) -> None:
    """The countdown's seconds and the utilisation percentage straddle the filled part and
    the track, so ``bar_text`` must read on both, in every state."""
    trading = trade_palette(name)
    for fill in ("track", "bar", "bar_warn", "bar_high"):
        ratio = contrast(trading.bar_text, getattr(trading, fill))
        assert ratio >= 4.5, f"{name} bar_text on {fill}: {ratio:.2f}"


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize("colour", LINE_COLOURS)
def test_chart_lines_stand_out_from_the_plot_background(name: str, colour: str) -> None:
    trading = trade_palette(name)
    assert contrast(getattr(trading, colour), trading.background) >= 3


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize("level", ["info", *MESSAGE_COLOURS])
def test_notice_text_reads_on_its_tinted_background(name: str, level: str) -> None:
    background, text, border = notice_colours(level, trade_palette(name))
    assert contrast(text, background) >= 4.5
    assert contrast(border, background) >= 3  # the frame tells the level apart


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize("deficiency", sorted(CVD))
def test_error_and_success_stay_apart_for_colour_blind_traders(name: str, deficiency: str) -> None:
    """Red against green would collapse for a deuteranope (see the green/red test below);
    success is a blue-green (teal) so that it does not."""
    trading = trade_palette(name)
    distance = cvd_distance(trading.error, trading.success, deficiency)
    assert distance >= CVD_MESSAGE_MIN_DELTA_E, f"{name} {deficiency}: ΔE {distance:.1f}"


def test_the_theme_menu_follows_a_theme_chosen_in_settings(
    app: QApplication, qtbot: QtBot, settings: QSettings
) -> None:
    """Settings applies its theme with ``choose_theme`` (the main window's preferences hook):
    the View › Theme tick moves with it, and back when the menu is used again."""
    menu = QMenu()
    qtbot.addWidget(menu)
    group = add_theme_menu(menu, app, settings)
    actions = {action.objectName(): action for action in group.actions()}
    assert actions["theme_dark"].isChecked()
    choose_theme(app, settings, "light")  # what Settings › Appearance › Light does
    assert actions["theme_light"].isChecked() and not actions["theme_dark"].isChecked()
    actions["theme_dark"].trigger()
    assert saved_theme(settings) == "dark" and actions["theme_dark"].isChecked()
