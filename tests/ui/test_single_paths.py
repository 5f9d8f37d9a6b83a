"""The tables' single paths: one tick buffer (the watchlist model's), one row look and one
painter module, one freshness source on the frame clock, one sort.

Structure is read from the source where it is structure (which module defines what); the rest
runs real panels and models."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.services.health import STALE_FACTOR, Health, HealthState
from app.services.poller import FeedStatus
from app.ui.bridge import QtTopic
from app.ui.frame_clock import FrameClock
from app.ui.freshness import FeedFreshness, stale_after
from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.widgets.cell_painter import RowLooks
from tests.helpers.live import Live
from tests.helpers.qt import run, shown
from tests.helpers.top_of_book import COL, FakeClock, book

FONT = int(Qt.ItemDataRole.FontRole)
FG = int(Qt.ItemDataRole.ForegroundRole)
BG = int(Qt.ItemDataRole.BackgroundRole)
ALIGN = int(Qt.ItemDataRole.TextAlignmentRole)
APP = Path(__file__).resolve().parents[2] / "app"


def defined(name: str) -> list[str]:
    """The modules of ``app`` that define a class, function or constant called ``name``."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names: list[str] = []
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            if name in names:
                found.append(str(path.relative_to(APP.parent)))
    return found


def calling(method: str) -> list[str]:
    """The modules of ``app/ui`` that call ``<something>.method(...)``."""
    found = []
    for path in sorted((APP / "ui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == method
            for node in ast.walk(tree)
        ):
            found.append(str(path.relative_to(APP.parent)))
    return found


@pytest.mark.slow
def test_one_row_look_and_one_painter_module_for_every_table() -> None:
    painter = "app/ui/widgets/cell_painter.py"
    assert defined("RowLook") == [painter]
    assert defined("RowPainter") == [painter]
    assert defined("CellPainter") == [painter]
    # the watchlist's view draws no text of its own: the painter does
    assert "app/ui/panels/watchlist_table.py" not in calling("drawText")
    assert "app/ui/panels/watchlist_table.py" not in calling("fillRect")


@pytest.mark.slow
def test_one_staleness_rule() -> None:
    assert defined("STALE_FACTOR") == ["app/services/health.py"]
    assert stale_after(2.0) == STALE_FACTOR * 2.0
    assert defined("FeedFreshness") == ["app/ui/freshness.py"]


def imported(name: str) -> list[str]:
    """The modules of ``app/ui`` that import ``name``."""
    found = []
    for path in sorted((APP / "ui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names)
            for node in ast.walk(tree)
        ):
            found.append(str(path.relative_to(APP.parent)))
    return found


@pytest.mark.slow
def test_no_sort_proxy_of_qt_on_the_tables() -> None:
    """Every table keeps its order with the one sort (design.md §6)."""
    assert imported("QSortFilterProxyModel") == []


def test_the_watchlist_panel_keeps_no_ticks_of_its_own(qtbot: QtBot, live: Live) -> None:
    """A tick is in the model's buffer as soon as the panel has it (read before any frame, the
    row shows it): the panel holds nothing a busy machine could leave unflushed."""
    run(qtbot, live.session.top_of_book.stop())
    frames = FrameClock()
    panel = shown(qtbot, TopOfBookPanel(live.context, frames=frames), 700, 300)
    pair = panel.model.pairs[-1]
    tick = book(pair, "101", "102")
    live.bridge.topOfBook.emit({pair: tick})
    assert panel.model.staged() == {pair: tick}  # staged, not applied: no frame yet
    for value in vars(panel).values():  # and nowhere else
        assert not (isinstance(value, dict) and any(v is tick for v in value.values()))
    row = panel.model.row_of(pair)
    assert row is not None and panel.model.record(row).bid == Decimal("101")
    assert panel.model.staged() == {}


class FeedInputs(QObject):
    """What a ``FeedFreshness`` reads, fed by the test: the health now and two topics."""

    def __init__(self, status: FeedStatus) -> None:
        super().__init__()
        self.health_now = HealthState(Health.LIVE, "", (status,))
        self.health: QtTopic[HealthState] = QtTopic(None, self)
        self.feedStatus: QtTopic[FeedStatus] = QtTopic(None, self)


def test_freshness_turns_stale_on_the_frame_at_its_deadline(qtbot: QtBot) -> None:
    """No timer of its own: the frame clock runs one frame when the last good data gets too
    old, and that frame turns the panel's freshness stale."""
    now = [500.0]
    frames = FrameClock(clock=lambda: now[0])
    interval = 1.0
    inputs = FeedInputs(FeedStatus("balances", interval, 500.0, 0.01, 0, None))
    owner = QObject()
    freshness = FeedFreshness(inputs, "balances", owner, frames=frames)
    changes: list[bool] = []
    freshness.changed.connect(lambda value: changes.append(value.stale))

    def stale() -> bool:
        return freshness.stale

    assert not stale()
    assert frames.active  # a frame is asked for at the deadline
    assert not owner.findChildren(type(frames._timer))  # and no timer of its own
    now[0] += STALE_FACTOR * interval / 2
    frames.frame()
    assert changes == [] and not stale()
    now[0] = 500.0 + stale_after(interval) + 0.01
    frames.frame()
    assert changes == [True] and stale()
    inputs.feedStatus.emit(FeedStatus("balances", interval, now[0], 0.01, 0, None))
    assert changes == [True, False] and not stale()


def test_the_watchlist_answers_the_one_row_look_as_data_does() -> None:
    """Every table's model speaks ``RowLooks``; the watchlist's looks say what ``data`` says
    (text, alignment, font, colour, fading background), a stale and a traded row included."""
    clock = FakeClock()
    model = TopOfBookModel(Precision(), clock=clock, frames=FrameClock(), stale_after=0.5)
    model.set_pairs(["BTC/USD", "ETH/USD", "SOL/USD"])
    model.update({"BTC/USD": book("BTC/USD", "100", "101"), "ETH/USD": book("ETH/USD", "5", "6")})
    clock.now += 1.0
    model.refresh_ages()  # both stale now
    model.update({"BTC/USD": book("BTC/USD", "102", "103")})  # fresh, rising: fading cells
    model.set_selected("ETH/USD")
    assert isinstance(model, RowLooks)
    roles = (FONT, FG, BG)
    for row in range(model.rowCount()):
        look = model.row_look(row)
        for column in range(model.columnCount()):
            index = model.index(row, column)
            assert look.texts[column] == index.data()
            assert look.alignments[column] == int(index.data(ALIGN))
            for role, values in zip(
                roles, (look.fonts, look.colours, look.backgrounds), strict=True
            ):
                assert values[column] == model.data(index, role), (row, column, role)
    assert model.row_look(0).backgrounds[COL["bid"]] is not None
    assert model.row_look(1).colours[0] == model.palette.stale
    assert model.row_look(1).fonts[0] is not None  # the traded pair, in bold
