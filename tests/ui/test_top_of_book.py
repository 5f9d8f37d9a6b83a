"""The watchlist panel and its model: live sandbox data, flashes, staleness, sorting, persistence.

Model tests feed hand-made TopOfBook values (the model is the code under test); panel tests run
against the real sandbox through the ``live`` fixture. Qt warnings fail the tests, so the C++
model tester's complaints do too.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal

import pytest
from PySide6.QtCore import QModelIndex, QPoint, QRect, QSettings, Qt
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetricsF, QIcon, QImage, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.domain.records import TopOfBook
from app.ui import palette
from app.ui.fonts import NUMBER_FAMILY
from app.ui.frame_clock import FrameClock
from app.ui.models.top_of_book_model import (
    COLUMN_COUNT,
    FADE_STEPS,
    FLASH_KEYS,
    FLASH_SECONDS,
    SORT_ROLE,
    TopOfBookModel,
)
from app.ui.palette import DEFAULT_FLASH_MODE, DEFAULT_PALETTE, flash_colour, flash_mode
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.panels.depth import DepthPanel
from app.ui.panels.top_of_book import SELECTED_KEY, SETTINGS_KEY, TopOfBookPanel
from app.ui.panels.watchlist_table import WatchlistTable
from app.ui.theme import FLASH_KEY, add_theme_menu, trade_palette
from tests.helpers.live import Live
from tests.helpers.qt import run, shown
from tests.helpers.top_of_book import COL, FakeClock, book

pytestmark = [
    pytest.mark.qt_log_level_fail("WARNING"),
    # the offscreen platform says so whenever a window is shown
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

BG = Qt.ItemDataRole.BackgroundRole
FLASH_COLUMNS = tuple(COL[key] for key in FLASH_KEYS)
FG = Qt.ItemDataRole.ForegroundRole
Cell = tuple[int, int]


class ChangeSpy:
    """Every cell named by the model's dataChanged signals, and any structural signal."""

    def __init__(self, model: TopOfBookModel) -> None:
        self.ranges: list[tuple[int, int, int, int]] = []
        self.structural: list[str] = []
        model.dataChanged.connect(self._changed)
        model.modelReset.connect(lambda: self.structural.append("reset"))
        model.layoutChanged.connect(lambda: self.structural.append("layout"))

    def _changed(self, top_left: QModelIndex, bottom_right: QModelIndex, *_: object) -> None:
        self.ranges.append(
            (top_left.row(), top_left.column(), bottom_right.row(), bottom_right.column())
        )

    @property
    def cells(self) -> set[Cell]:
        return {
            (row, column)
            for top, left, bottom, right in self.ranges
            for row in range(top, bottom + 1)
            for column in range(left, right + 1)
        }

    def clear(self) -> None:
        self.ranges.clear()
        self.structural.clear()


def text(model: TopOfBookModel, row: int, column: int) -> str:
    value = model.data(model.index(row, column))
    assert isinstance(value, str)
    return value


def key(model: TopOfBookModel, row: int, column: int) -> object:
    return model.data(model.index(row, column), SORT_ROLE)


def filled(model: TopOfBookModel) -> bool:
    return model.rowCount() > 0 and all(
        key(model, row, COL["bid"]) is not None for row in range(model.rowCount())
    )


@pytest.fixture
def full_fade() -> Iterator[None]:
    """Fades at full strength for the test (the default is subtle), restored after."""
    palette.set_flash_mode("full")
    yield
    palette.set_flash_mode(DEFAULT_FLASH_MODE)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def model(qtbot: QtBot, clock: FakeClock) -> Iterator[TopOfBookModel]:
    instance = TopOfBookModel(Precision(), clock=clock, stale_after=0.75)
    instance.set_pairs(["BTC/USD", "ETH/USD", "SOL/USD"])
    instance.update(
        {
            "BTC/USD": book("BTC/USD", "91234.50", "91235.00"),
            "ETH/USD": book("ETH/USD", "3100.10", "3100.40"),
            "SOL/USD": book("SOL/USD", "150.0100", "150.0300"),
        }
    )
    yield instance
    instance.deleteLater()


# -- the model --------------------------------------------------------------------------------


def test_model_passes_the_qt_model_tester(
    qtmodeltester: ModelTester, model: TopOfBookModel
) -> None:
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    # the tester stays connected: structural changes and ticks are checked as they happen
    model.set_pairs(["SOL/USD", "USDT/USD", "BTC/USD", "ETH/BTC"])
    model.update({"SOL/USD": book("SOL/USD", "151", "152"), "ETH/BTC": book("ETH/BTC", "1", "2")})
    model.refresh_ages()
    model.set_pairs([])
    assert model.rowCount() == 0
    model.sort(COL["pair"])  # the model sorts itself: the tester checks the layout change
    model.set_pairs(["ETH/USD", "BTC/USD"])
    assert [model.index(r, 0).data() for r in range(2)] == ["BTC/USD", "ETH/USD"]
    model.sort(-1)
    assert [model.index(r, 0).data() for r in range(2)] == ["ETH/USD", "BTC/USD"]


def test_only_changed_cells_are_signalled(model: TopOfBookModel) -> None:
    spy = ChangeSpy(model)
    same = {
        "BTC/USD": book("BTC/USD", "91234.50", "91235.00"),
        "ETH/USD": book("ETH/USD", "3100.10", "3100.40"),
        "SOL/USD": book("SOL/USD", "150.0100", "150.0300"),
    }
    model.update(same)
    assert spy.ranges == []

    model.update({**same, "ETH/USD": book("ETH/USD", "3100.20", "3100.40")})
    changed = {COL["bid"], COL["mid"], COL["spread"], COL["spread_bps"]}
    assert spy.cells == {(1, column) for column in changed}
    # one signal per run of adjacent cells: bid alone, then mid..spread (bp)
    assert sorted(spy.ranges) == [(1, 1, 1, 1), (1, 5, 1, 7)]
    assert spy.structural == []

    spy.clear()
    model.update({"SOL/USD": book("SOL/USD", "150.0100", "150.0300", ask_size="9")})
    assert spy.cells == {(2, COL["ask_size"])}
    assert text(model, 2, COL["ask_size"]) == "9.0000"


def test_price_change_flashes_with_a_sign_then_clears(qtbot: QtBot, full_fade: None) -> None:
    model = TopOfBookModel(Precision())  # the real clock: flashes end in real time
    model.set_pairs(["BTC/USD", "ETH/USD"])
    model.update({"ETH/USD": book("ETH/USD", "100.00", "102.00")})
    assert all(model.data(model.index(1, c), BG) is None for c in range(COLUMN_COUNT))

    spy = ChangeSpy(model)
    started = time.monotonic()
    model.update({"ETH/USD": book("ETH/USD", "101.00", "101.50")})  # bid up, ask down, mid up
    assert model.data(model.index(1, COL["bid"]), BG) == DEFAULT_PALETTE.up_flash
    assert model.data(model.index(1, COL["ask"]), BG) == DEFAULT_PALETTE.down_flash
    assert model.data(model.index(1, COL["mid"]), BG) == DEFAULT_PALETTE.up_flash
    assert text(model, 1, COL["bid"]) == "▲ 101.00"
    assert text(model, 1, COL["ask"]) == "▼ 101.50"
    assert text(model, 1, COL["mid"]) == "▲ 101.25"
    assert model.data(model.index(1, COL["spread"]), BG) is None  # not a flashing column

    spy.clear()
    qtbot.waitUntil(lambda: model.data(model.index(1, COL["bid"]), BG) is None, timeout=2000)
    elapsed = time.monotonic() - started
    assert FLASH_SECONDS - 0.05 <= elapsed <= FLASH_SECONDS + 0.9
    assert all(model.data(model.index(1, c), BG) is None for c in FLASH_COLUMNS)
    # each fade step and the clear signal exactly the cells that fade
    assert spy.cells == {(1, COL["bid"]), (1, COL["ask"]), (1, COL["mid"])}
    # the sign of the last move stays after the colour goes
    assert text(model, 1, COL["bid"]).startswith("▲")
    assert text(model, 1, COL["ask"]).startswith("▼")
    model.deleteLater()


def test_stale_rows_grey_out_and_age_updates_only_its_column(
    model: TopOfBookModel, clock: FakeClock
) -> None:
    assert model.stale_after == 0.75
    assert not any(model.is_stale(row) for row in range(3))
    assert text(model, 0, COL["age"]) == "0 s"
    spy = ChangeSpy(model)

    clock.now += 0.5
    model.update({"BTC/USD": book("BTC/USD", "91234.50", "91235.00")})  # confirms BTC only
    model.refresh_ages()
    assert spy.ranges == []  # nothing visible changed

    clock.now += 0.5  # ETH and SOL are 1.0 s old (> 0.75), BTC 0.5 s
    model.refresh_ages()
    assert [model.is_stale(row) for row in range(3)] == [False, True, True]
    assert spy.cells == {(row, column) for row in (1, 2) for column in range(COLUMN_COUNT)}
    for column in range(COLUMN_COUNT):
        assert model.data(model.index(1, column), FG) == DEFAULT_PALETTE.stale
        assert model.data(model.index(0, column), FG) != DEFAULT_PALETTE.stale
    assert text(model, 1, COL["age"]) == "1 s"
    assert "no fresh data" in str(model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole))

    spy.clear()
    model.stale_after = 100.0  # ages now only move the age column
    spy.clear()
    clock.now += 1.0
    model.refresh_ages()
    assert spy.cells == {(row, COL["age"]) for row in range(3)}
    assert spy.ranges == [(0, COL["age"], 2, COL["age"])]
    assert text(model, 2, COL["age"]) == "2 s"

    model.stale_after = 0.75
    assert model.is_stale(0)
    spy.clear()
    model.update({"BTC/USD": book("BTC/USD", "91234.50", "91235.00")})  # fresh again
    assert not model.is_stale(0)
    assert spy.cells == {(0, column) for column in range(COLUMN_COUNT)}
    assert model.data(model.index(0, COL["bid"]), FG) is None  # neutral text, not a side
    assert text(model, 0, COL["age"]) == "0 s"


def test_a_palette_switch_recolours_the_whole_table_with_the_colour_roles_only(
    model: TopOfBookModel, clock: FakeClock
) -> None:
    pinned = TopOfBookModel(Precision(), clock=clock, palette=DEFAULT_PALETTE)
    pinned.set_pairs(["BTC/USD"])
    pinned.update({"BTC/USD": book("BTC/USD", "1", "2")})
    roles: list[list[int]] = []
    model.dataChanged.connect(lambda _top, _bottom, changed: roles.append(list(changed)))
    spy = ChangeSpy(model)
    light = trade_palette("light")
    try:
        palette.set_palette(light)
        assert spy.ranges == [(0, 0, 2, COLUMN_COUNT - 1)] and not spy.structural
        assert [sorted(changed) for changed in roles] == [sorted([FG, BG])]
        horizontal = Qt.Orientation.Horizontal
        assert model.headerData(COL["bid"], horizontal, FG) == light.bid
        assert model.headerData(COL["ask"], horizontal, FG) == light.ask
        assert pinned.headerData(COL["bid"], horizontal, FG) == DEFAULT_PALETTE.bid
        model.update({"ETH/USD": book("ETH/USD", "3101.10", "3101.40")})  # a rise: a fade
        assert model.data(model.index(1, COL["bid"]), BG) == flash_colour(
            light.up_flash, flash_mode()
        )
    finally:
        palette.set_palette(DEFAULT_PALETTE)
    assert model.headerData(COL["bid"], Qt.Orientation.Horizontal, FG) == DEFAULT_PALETTE.bid


def test_numbers_sort_as_numbers_and_ticks_do_not_resort(qtbot: QtBot, clock: FakeClock) -> None:
    model = TopOfBookModel(Precision(), clock=clock)
    pairs = ["AAA/USD", "BBB/USD", "CCC/USD"]
    model.set_pairs(pairs)
    model.update(
        {
            "AAA/USD": book("AAA/USD", "10.25", "10.30", bid_size="100"),
            "BBB/USD": book("BBB/USD", "9.50", "9.60", bid_size="9"),
            "CCC/USD": book("CCC/USD", "100.00", "100.50", bid_size="20"),
        }
    )
    proxy = model  # the model keeps its own sort order (no proxy)

    def order() -> list[str]:
        return [proxy.index(row, COL["pair"]).data() for row in range(proxy.rowCount())]

    def texts(column: int) -> list[str]:
        return [text(model, row, column) for row in range(3)]

    assert order() == pairs  # unsorted: watchlist order
    proxy.sort(COL["bid"], Qt.SortOrder.AscendingOrder)
    assert order() == ["BBB/USD", "AAA/USD", "CCC/USD"]  # 9.50 < 10.25 < 100.00
    assert sorted(texts(COL["bid"])) == ["10.25", "100.00", "9.50"]  # what text sorting gives
    proxy.sort(COL["bid"], Qt.SortOrder.DescendingOrder)
    assert order() == ["CCC/USD", "AAA/USD", "BBB/USD"]
    proxy.sort(COL["bid_size"], Qt.SortOrder.AscendingOrder)
    assert order() == ["AAA/USD", "BBB/USD", "CCC/USD"]  # sizes in three assets: by asset
    proxy.sort(COL["spread_bps"], Qt.SortOrder.AscendingOrder)
    bps = [proxy.index(row, COL["spread_bps"]).data(SORT_ROLE) for row in range(3)]
    assert bps == sorted(bps)

    proxy.sort(COL["bid"], Qt.SortOrder.AscendingOrder)
    model.update({"BBB/USD": book("BBB/USD", "200", "201")})  # a tick does not re-sort
    assert order() == ["BBB/USD", "AAA/USD", "CCC/USD"]
    proxy.resort()  # the panel does, at most once a second
    assert order() == ["AAA/USD", "CCC/USD", "BBB/USD"]
    model.deleteLater()


def test_a_sort_by_a_column_in_assets_keeps_each_assets_pairs_together(
    qtbot: QtBot, clock: FakeClock
) -> None:
    """Spreads in USD and in BTC do not compare (50 USD is not more than 0.0001 BTC): sorted
    by Spread, each quote asset's pairs stay together, in order within it; sizes go by the
    base asset; spread in bp, which has no unit, sorts across every pair."""
    model = TopOfBookModel(Precision(), clock=clock)
    pairs = ["ETH/BTC", "BTC/USD", "SOL/USD", "SOL/BTC", "ETH/USD"]
    model.set_pairs(pairs)
    model.update(
        {
            "ETH/BTC": book("ETH/BTC", "0.03000", "0.03010", bid_size="5"),  # 0.0001 BTC
            "BTC/USD": book("BTC/USD", "91000", "91050", bid_size="0.5"),  # 50 USD
            "SOL/USD": book("SOL/USD", "150.00", "150.20", bid_size="30"),  # 0.2 USD
            "SOL/BTC": book("SOL/BTC", "0.001600", "0.001610", bid_size="40"),  # 0.00001 BTC
            "ETH/USD": book("ETH/USD", "3000.0", "3001.0", bid_size="2"),  # 1 USD
        }
    )

    def order() -> list[str]:
        return [model.index(row, COL["pair"]).data() for row in range(model.rowCount())]

    model.sort(COL["spread"], Qt.SortOrder.AscendingOrder)
    assert order() == ["SOL/BTC", "ETH/BTC", "SOL/USD", "ETH/USD", "BTC/USD"]
    model.sort(COL["spread"], Qt.SortOrder.DescendingOrder)
    assert order() == ["ETH/BTC", "SOL/BTC", "BTC/USD", "ETH/USD", "SOL/USD"]
    model.sort(COL["bid_size"], Qt.SortOrder.AscendingOrder)  # by base asset: BTC, ETH, SOL
    assert order() == ["BTC/USD", "ETH/USD", "ETH/BTC", "SOL/USD", "SOL/BTC"]
    model.sort(COL["spread_bps"], Qt.SortOrder.AscendingOrder)  # no unit: across every pair
    bps = [model.index(row, COL["spread_bps"]).data(SORT_ROLE) for row in range(5)]
    assert bps == sorted(bps)
    model.deleteLater()


def test_decimal_text_right_aligned_in_a_fixed_pitch_font(qtbot: QtBot, app: QApplication) -> None:
    model = TopOfBookModel(Precision())
    model.set_pairs(["USD/BTC", "BTC/USD"])
    model.update(
        {
            "USD/BTC": book("USD/BTC", "0.00001096", "0.00001097", bid_size="1000000"),
            "BTC/USD": book("BTC/USD", "91234.5", "91235", bid_size="0.00000001"),
        }
    )
    assert text(model, 0, COL["bid"]) == "0.00001096"  # not 1.096E-5, no float noise
    assert key(model, 0, COL["bid"]) == Decimal("0.00001096")
    assert text(model, 0, COL["bid_size"]) == "1,000,000.00"
    assert text(model, 1, COL["bid"]) == "91,234.50"
    assert text(model, 1, COL["bid_size"]) == "0.00000001"
    assert text(model, 1, COL["spread"]) == "0.50"
    assert text(model, 1, COL["spread_bps"]) == "0.05"
    assert key(model, 1, COL["mid"]) == Decimal("91234.75")
    for column in range(1, COLUMN_COUNT):
        alignment = model.data(model.index(0, column), Qt.ItemDataRole.TextAlignmentRole)
        assert alignment & Qt.AlignmentFlag.AlignRight
        font = model.data(model.index(0, column), Qt.ItemDataRole.FontRole)
        # the shipped JetBrains Mono (app.ui.fonts), whatever the machine's fonts
        assert isinstance(font, QFont)
        assert QFontInfo(font).family() == NUMBER_FAMILY and QFontInfo(font).fixedPitch()
    alignment = model.data(model.index(0, COL["pair"]), Qt.ItemDataRole.TextAlignmentRole)
    assert alignment & Qt.AlignmentFlag.AlignLeft
    model.deleteLater()


# -- the panel on live sandbox data -----------------------------------------------------------


def make_panel(qtbot: QtBot, context: PanelContext) -> TopOfBookPanel:
    panel = TopOfBookPanel(context)
    qtbot.addWidget(panel)
    return panel


def settle(qtbot: QtBot, live: Live) -> None:
    """Wait for the polls that follow the last watchlist or selection change.

    A change wakes a poller early; on Python 3.11 ``asyncio.wait_for`` swallows a cancel that
    lands in the same loop turn as that wake-up, so the fixture's ``session.stop()`` could hang.
    A poll reflecting the change starts only after the wake-up was consumed."""
    watched = set(live.session.watchlist)
    selected = live.session.selected_pair
    with qtbot.waitSignal(
        live.bridge.topOfBook, timeout=5000, check_params_cb=lambda books: set(books) == watched
    ):
        pass
    with qtbot.waitSignal(
        live.bridge.orderBook,
        timeout=5000,
        check_params_cb=lambda book: book is not None and str(book.pair) == selected,
    ):
        pass


def test_panel_fills_with_server_data(qtbot: QtBot, live: Live) -> None:
    snapshots: list[dict[str, TopOfBook]] = []
    live.bridge.topOfBook.connect(snapshots.append)
    panel = make_panel(qtbot, live.context)
    model = panel.model
    assert model.pairs == live.session.watchlist
    assert "BTC/USD" in model.pairs
    qtbot.waitUntil(lambda: filled(model), timeout=5000)

    def matches_last_snapshot() -> bool:
        last = snapshots[-1]
        return all(
            key(model, row, COL["bid"]) == last[pair].bid
            and key(model, row, COL["ask"]) == last[pair].ask
            for row, pair in enumerate(model.pairs)
        )

    qtbot.waitUntil(matches_last_snapshot, timeout=5000)
    precision = live.context.precision
    for row, pair in enumerate(model.pairs):
        top = snapshots[-1][pair]
        assert top.bid < top.ask
        assert text(model, row, COL["bid"]).endswith(precision.price_text(top.bid, pair))
        assert text(model, row, COL["ask_size"]) == precision.amount(top.ask_size, top.pair.base)
        assert key(model, row, COL["spread"]) == top.spread
        assert not model.is_stale(row)
    assert model.stale_after == 3 * live.session.top_of_book.interval


def test_live_price_change_reaches_the_table_and_flashes(qtbot: QtBot, live: Live) -> None:
    panel = make_panel(qtbot, live.context)
    model = panel.model
    qtbot.waitUntil(lambda: filled(model), timeout=5000)
    first: dict[Cell, object] = {
        (row, column): key(model, row, column)
        for row in range(model.rowCount())
        for column in FLASH_COLUMNS
    }

    def flashing_cell() -> Cell | None:
        for row, column in first:
            if model.flashing(row, column):
                return row, column
        return None

    qtbot.waitUntil(lambda: flashing_cell() is not None, timeout=10_000)
    cell = flashing_cell()
    assert cell is not None
    row, column = cell
    assert key(model, row, column) != first[cell]  # a flash means the price moved
    colour = model.data(model.index(row, column), BG)
    expected = DEFAULT_PALETTE.up_flash if model.flashing(*cell) > 0 else DEFAULT_PALETTE.down_flash
    # the move's hue, fading from the default (subtle) strength
    assert isinstance(colour, QColor) and colour.rgb() == expected.rgb()
    assert 0 < colour.alpha() <= expected.alpha() // 2 + 1
    assert text(model, row, column)[0] in "▲▼"

    run(qtbot, live.session.top_of_book.stop())  # no more ticks: every flash must end
    qtbot.waitUntil(lambda: flashing_cell() is None, timeout=2000)
    assert all(model.data(model.index(r, c), BG) is None for r, c in first)


@pytest.mark.slow
def test_rows_grey_out_when_the_feed_stops(qtbot: QtBot, live: Live) -> None:
    panel = make_panel(qtbot, live.context)
    model = panel.model
    assert model.stale_after == 0.75  # 3 × the fixture's 0.25 s top-of-book interval
    qtbot.waitUntil(lambda: filled(model), timeout=5000)
    assert not any(model.is_stale(row) for row in range(model.rowCount()))
    run(qtbot, live.session.top_of_book.stop())
    qtbot.waitUntil(
        lambda: all(model.is_stale(row) for row in range(model.rowCount())), timeout=4000
    )
    for column in range(COLUMN_COUNT):
        assert model.data(model.index(0, column), FG) == DEFAULT_PALETTE.stale


def test_bursts_are_conflated_into_one_model_update(
    qtbot: QtBot, live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(qtbot, live.session.top_of_book.stop())
    panel = make_panel(qtbot, live.context)
    calls: list[dict[str, TopOfBook]] = []
    original = panel.model.flush_staged

    def recording() -> bool:  # what one frame applies
        calls.append(panel.model.staged())
        return original()

    monkeypatch.setattr(panel.model, "flush_staged", recording)
    for price in ("100", "101", "102"):
        live.bridge.topOfBook.emit({"BTC/USD": book("BTC/USD", price, "103")})
    live.bridge.topOfBook.emit({"ETH/USD": book("ETH/USD", "5", "6")})
    assert calls == []  # the slot only stages
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=2000)
    assert calls[0]["BTC/USD"].bid == Decimal(102)
    assert set(calls[0]) == {"BTC/USD", "ETH/USD"}
    row = panel.model.row_of("BTC/USD")
    assert row is not None and key(panel.model, row, COL["bid"]) == Decimal(102)


def test_header_clicks_sort_by_value_then_restore_watchlist_order(qtbot: QtBot, live: Live) -> None:
    panel = make_panel(qtbot, live.context)
    panel.resize(900, 400)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: filled(panel.model), timeout=5000)
    header = panel.table.horizontalHeader()
    x = header.sectionViewportPosition(COL["bid"]) + header.sectionSize(COL["bid"]) // 2

    def click_bid_header() -> None:
        QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))

    def bids() -> list[Decimal]:
        model = panel.model
        return [model.index(row, COL["bid"]).data(SORT_ROLE) for row in range(model.rowCount())]

    def shown_pairs() -> list[str]:
        model = panel.model
        return [model.index(row, COL["pair"]).data() for row in range(model.rowCount())]

    def by_quote_asset(descending: bool) -> list[tuple[str, Decimal]]:
        """The rows as the sort must show them: each quote asset's pairs together (assets
        by name), in bid order within it."""
        rows = shown_rows()
        return sorted(rows, key=lambda row: (row[0], -row[1] if descending else row[1]))

    def shown_rows() -> list[tuple[str, Decimal]]:
        """(quote asset, bid) of each row, top to bottom."""
        return [
            (pair.rpartition("/")[2], bid) for pair, bid in zip(shown_pairs(), bids(), strict=True)
        ]

    click_bid_header()
    assert panel.sort_column == COL["bid"]
    assert shown_rows() == by_quote_asset(descending=False)
    assert shown_pairs() != live.session.watchlist  # the server's pairs are not in price order
    click_bid_header()
    assert shown_rows() == by_quote_asset(descending=True)
    click_bid_header()  # third click clears the sort: watchlist order again
    assert panel.model.sort_column == -1
    assert shown_pairs() == live.session.watchlist


def test_watchlist_add_remove_persist_across_panels(qtbot: QtBot, live: Live) -> None:
    panel = TopOfBookPanel(live.context)  # not given to qtbot: this test deletes it
    panel.show()
    qtbot.waitExposed(panel)
    everything = live.session.watchlist
    assert {"SOL/USD", "ETH/BTC"} <= set(everything)
    assert panel.pair_choice.count() == 0  # every pair is watched: nothing to add

    def remove_with_delete_key(pair: str) -> None:
        row = panel.model.row_of(pair)
        assert row is not None
        index = panel.model.index(row, COL["bid"])
        panel.table.setFocus()
        QTest.mouseClick(
            panel.table.viewport(),
            Qt.MouseButton.LeftButton,
            pos=panel.table.visualRect(index).center(),
        )
        assert panel.selected_pairs() == [pair]
        QTest.keyClick(panel.table, Qt.Key.Key_Delete)

    remove_with_delete_key("SOL/USD")
    remove_with_delete_key("ETH/BTC")
    assert "SOL/USD" not in live.session.watchlist and "ETH/BTC" not in live.session.watchlist
    assert panel.model.pairs == live.session.watchlist
    assert panel.pair_choice.count() == 2

    panel.pair_choice.setCurrentText("ETH/BTC")
    QTest.mouseClick(panel.toolbar.widgetForAction(panel.add_action), Qt.MouseButton.LeftButton)
    expected = [pair for pair in everything if pair not in ("SOL/USD", "ETH/BTC")] + ["ETH/BTC"]
    assert live.session.watchlist == expected
    assert panel.model.pairs == expected
    assert [panel.pair_choice.itemText(i) for i in range(panel.pair_choice.count())] == ["SOL/USD"]

    live.context.settings.sync()
    with qtbot.waitSignal(panel.destroyed, timeout=2000):
        panel.deleteLater()
    live.bridge.set_watchlist(everything)  # as a fresh session would start
    reopened = QSettings(live.context.settings.fileName(), QSettings.Format.IniFormat)
    assert reopened.value(SETTINGS_KEY) == expected
    context = PanelContext(live.bridge, live.context.precision, reopened, live.context.notify)
    again = make_panel(qtbot, context)
    assert live.session.watchlist == expected
    assert again.model.pairs == expected
    qtbot.waitUntil(lambda: filled(again.model), timeout=5000)
    settle(qtbot, live)


def test_the_traded_pair_is_restored_when_the_terminal_starts_again(
    qtbot: QtBot, live: Live
) -> None:
    panel = TopOfBookPanel(live.context)  # not given to qtbot: this test deletes it
    panel.show()
    qtbot.waitExposed(panel)
    row = panel.model.row_of("SOL/USD")
    assert row is not None
    index = panel.model.index(row, COL["pair"])
    QTest.mouseClick(
        panel.table.viewport(),
        Qt.MouseButton.LeftButton,
        pos=panel.table.visualRect(index).center(),
    )
    assert live.session.selected_pair == "SOL/USD"
    live.context.settings.sync()
    with qtbot.waitSignal(panel.destroyed, timeout=2000):
        panel.deleteLater()
    live.bridge.select_pair(live.session.watchlist[0])  # as a fresh session would start
    assert live.session.selected_pair != "SOL/USD"
    reopened = QSettings(live.context.settings.fileName(), QSettings.Format.IniFormat)
    context = PanelContext(live.bridge, live.context.precision, reopened, live.context.notify)
    again = make_panel(qtbot, context)
    assert live.session.selected_pair == "SOL/USD"
    assert again.selected_pairs() == ["SOL/USD"]
    # a saved pair the watchlist no longer holds is not traded
    reopened.setValue(SELECTED_KEY, "DOGE/USD")
    make_panel(qtbot, context)
    assert live.session.selected_pair == "SOL/USD"
    settle(qtbot, live)


def test_invalid_saved_watchlist_is_not_applied(qtbot: QtBot, live: Live) -> None:
    before = live.session.watchlist
    live.context.settings.setValue(SETTINGS_KEY, ["NOPE/XYZ", "not a pair"])
    make_panel(qtbot, live.context)
    assert live.session.watchlist == before
    assert ("warning", "Watchlist: ignored 2 unknown pairs: 'NOPE/XYZ', 'not a pair'") in (
        live.notices
    )

    live.context.settings.setValue(SETTINGS_KEY, ["ETH/BTC", "NOPE/XYZ"])
    panel = make_panel(qtbot, live.context)
    assert live.session.watchlist == ["ETH/BTC"]
    assert panel.model.pairs == ["ETH/BTC"]
    assert live.notices[-1] == ("warning", "Watchlist: ignored an unknown pair: 'NOPE/XYZ'")
    settle(qtbot, live)


# -- the highlighted row is the traded pair -----------------------------------------------------


FONT = Qt.ItemDataRole.FontRole


class Screen:
    """The watchlist with the chart and depth panels that follow the traded pair."""

    def __init__(self, panel: TopOfBookPanel, depth: DepthPanel, chart: ChartPanel, live: Live):
        self.panel, self.depth, self.chart, self.live = panel, depth, chart, live

    def shown_pairs(self) -> list[str]:
        model = self.panel.model
        return [model.index(row, COL["pair"]).data() for row in range(model.rowCount())]

    def click_row(self, row: int, *, double: bool = False) -> None:
        """A real click on the table's viewport at the centre of the row's Ask cell."""
        table = self.panel.table
        centre = table.visualRect(self.panel.model.index(row, COL["ask"])).center()
        QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
        if double:  # Qt 6's mouseDClick sends only the second press: a click comes first
            QTest.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)

    def bold_pairs(self) -> list[str]:
        model = self.panel.model
        return [
            pair
            for row, pair in enumerate(model.pairs)
            if isinstance(font := model.data(model.index(row, COL["pair"]), FONT), QFont)
            and font.bold()
        ]

    def traded(self) -> str:
        """The one pair highlighted, bold, traded, charted and in depth (asserts they agree)."""
        pair = self.live.session.selected_pair
        assert pair is not None
        assert self.panel.selected_pairs() == [pair]  # the highlight
        current = self.panel.table.currentIndex()
        assert self.shown_pairs()[current.row()] == pair  # where the arrow keys start
        assert self.bold_pairs() == [pair]
        assert self.live.bridge.selected_pair == pair  # what the tickets are handed
        assert self.depth.pair == pair
        assert self.chart.pair == pair
        return pair


@pytest.fixture
def screen(qtbot: QtBot, live: Live) -> Iterator[Screen]:
    """The watchlist with the chart and depth panels that follow the traded pair."""
    panel = make_panel(qtbot, live.context)
    panel.resize(900, 400)
    panel.show()
    qtbot.waitExposed(panel)
    depth = DepthPanel(live.context)
    chart = ChartPanel(live.context)
    qtbot.addWidget(depth)
    qtbot.addWidget(chart)
    qtbot.waitUntil(lambda: filled(panel.model), timeout=5000)
    yield Screen(panel, depth, chart, live)
    settle(qtbot, live)


def test_a_click_or_an_arrow_key_selects_the_pair_everywhere(qtbot: QtBot, screen: Screen) -> None:
    shown = screen.shown_pairs()
    assert screen.traded() == shown[0]  # the session's first pair, highlighted from the start
    screen.click_row(2)
    assert screen.traded() == shown[2]
    QTest.keyClick(screen.panel.table, Qt.Key.Key_Down)
    assert screen.traded() == shown[3]
    QTest.keyClick(screen.panel.table, Qt.Key.Key_Up)
    QTest.keyClick(screen.panel.table, Qt.Key.Key_Up)
    assert screen.traded() == shown[1]
    # Double-click and Enter do what the click did: the pair stays the traded one.
    screen.click_row(4, double=True)
    assert screen.traded() == shown[4]
    QTest.keyClick(screen.panel.table, Qt.Key.Key_Return)
    assert screen.traded() == shown[4]
    # A Ctrl+click that would clear the highlight leaves the traded pair highlighted.
    table = screen.panel.table
    centre = table.visualRect(screen.panel.model.index(4, COL["ask"])).center()
    QTest.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, centre
    )
    assert screen.traded() == shown[4]


def test_remove_trades_the_row_that_takes_its_place(qtbot: QtBot, screen: Screen) -> None:
    shown = screen.shown_pairs()
    screen.click_row(1)
    assert screen.traded() == shown[1]
    screen.panel.table.setFocus()
    QTest.keyClick(screen.panel.table, Qt.Key.Key_Delete)
    assert shown[1] not in screen.live.session.watchlist
    assert screen.traded() == shown[2]  # the row that took its place
    button = screen.panel.toolbar.widgetForAction(screen.panel.remove_action)
    assert button is not None
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    assert screen.traded() == shown[3]
    last = len(screen.shown_pairs()) - 1
    screen.click_row(last)
    QTest.keyClick(screen.panel.table, Qt.Key.Key_Delete)
    assert screen.traded() == screen.shown_pairs()[last - 1]  # the last row went: the one above


def test_the_highlight_follows_the_traded_pair_through_sorts_and_changes(
    qtbot: QtBot, screen: Screen
) -> None:
    live, panel = screen.live, screen.panel
    screen.click_row(2)
    pair = screen.traded()
    header = panel.table.horizontalHeader()
    x = header.sectionViewportPosition(COL["bid"]) + header.sectionSize(COL["bid"]) // 2
    for _ in range(3):  # ascending, descending, watchlist order
        QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
        assert screen.traded() == pair
    live.bridge.set_watchlist(list(reversed(live.session.watchlist)))  # e.g. Settings
    assert screen.traded() == pair
    live.bridge.select_pair(live.session.watchlist[0])  # selected elsewhere
    assert screen.traded() == live.session.watchlist[0]
    watched = live.session.watchlist
    live.bridge.set_watchlist(watched[1:])  # the traded pair dropped elsewhere
    assert screen.traded() == watched[1]
    live.bridge.set_watchlist([*live.session.watchlist, watched[0]])  # added back at the end
    assert screen.traded() == watched[1]


# -- colour with one meaning each ---------------------------------------------------------------


def test_numbers_are_neutral_and_the_sides_are_told_by_their_headers(
    model: TopOfBookModel,
) -> None:
    """No number is coloured by its side or its move: the Bid and Ask headers carry the side's
    colour (a swatch; the foreground too), and blue means the bid only — never a rise."""
    for row in range(model.rowCount()):
        for column in range(COLUMN_COUNT):
            assert model.data(model.index(row, column), FG) is None
    horizontal = Qt.Orientation.Horizontal
    assert model.headerData(COL["bid"], horizontal, FG) == DEFAULT_PALETTE.bid
    assert model.headerData(COL["ask"], horizontal, FG) == DEFAULT_PALETTE.ask
    for key_ in ("bid", "ask"):
        icon = model.headerData(COL[key_], horizontal, Qt.ItemDataRole.DecorationRole)
        assert isinstance(icon, QIcon) and not icon.isNull()
        pixel = icon.pixmap(8, 8).toImage().pixelColor(4, 4)
        assert pixel.rgb() == getattr(DEFAULT_PALETTE, key_).rgb()
    assert model.headerData(COL["mid"], horizontal, FG) is None
    for name in ("dark", "light"):
        trading = trade_palette(name)
        sides = {trading.bid.rgb(), trading.ask.rgb()}
        assert not sides & {trading.up.rgb(), trading.down.rgb()}, name


def test_only_the_cells_that_changed_fade_and_the_fade_steps_down(
    model: TopOfBookModel, clock: FakeClock, full_fade: None
) -> None:
    spy = ChangeSpy(model)
    model.update(
        {
            "BTC/USD": book("BTC/USD", "91234.50", "91235.00"),  # the same again
            "ETH/USD": book("ETH/USD", "3100.00", "3100.40"),  # the bid (and mid) fell
        }
    )
    fading = {(1, COL["bid"]), (1, COL["mid"])}
    assert {
        (row, column)
        for row in range(3)
        for column in range(COLUMN_COUNT)
        if model.data(model.index(row, column), BG) is not None
    } == fading
    first = model.data(model.index(1, COL["bid"]), BG)
    assert first == DEFAULT_PALETTE.down_flash  # full strength at the change
    assert text(model, 1, COL["bid"]) == "▼ 3,100.00"

    alphas = [first.alpha()]
    for _ in range(FADE_STEPS - 1):
        spy.clear()
        clock.now += FLASH_SECONDS / FADE_STEPS
        model.expire_flashes()
        assert spy.cells == fading  # each step repaints the fading cells only
        colour = model.data(model.index(1, COL["bid"]), BG)
        assert isinstance(colour, QColor) and colour.rgb() == DEFAULT_PALETTE.down.rgb()
        alphas.append(colour.alpha())
    assert alphas == sorted(alphas, reverse=True) and len(set(alphas)) == FADE_STEPS
    spy.clear()
    clock.now += FLASH_SECONDS / FADE_STEPS
    model.expire_flashes()
    assert spy.cells == fading
    assert model.data(model.index(1, COL["bid"]), BG) is None
    assert text(model, 1, COL["bid"]).startswith("▼")  # the sign stays


@pytest.mark.parametrize(("mode", "share"), [("off", 0.0), ("subtle", 0.5), ("full", 1.0)])
def test_fade_strength_follows_the_setting(
    model: TopOfBookModel, clock: FakeClock, mode: str, share: float
) -> None:
    try:
        palette.set_flash_mode(mode)
        model.update({"ETH/USD": book("ETH/USD", "3100.20", "3100.40")})  # a rise
        colour = model.data(model.index(1, COL["bid"]), BG)
        assert text(model, 1, COL["bid"]) == "▲ 3,100.20"  # the sign whatever the mode
        if mode == "off":
            assert colour is None and model.flashing(1, COL["bid"]) == 0
        else:
            assert isinstance(colour, QColor)
            assert colour.alpha() == round(DEFAULT_PALETTE.up_flash.alpha() * share)
    finally:
        palette.set_flash_mode(DEFAULT_FLASH_MODE)


def test_turning_fades_off_clears_the_running_ones(
    model: TopOfBookModel, clock: FakeClock, full_fade: None
) -> None:
    model.update({"ETH/USD": book("ETH/USD", "3100.20", "3100.40")})
    assert model.data(model.index(1, COL["bid"]), BG) is not None
    spy = ChangeSpy(model)
    palette.set_flash_mode("off")
    assert model.data(model.index(1, COL["bid"]), BG) is None
    assert spy.cells == {(row, column) for row in range(3) for column in range(COLUMN_COUNT)}


@pytest.mark.qt_log_ignore("This plugin does not support raise", "does not support grabbing")
def test_the_view_menu_sets_and_remembers_the_fade(
    qtbot: QtBot, app: QApplication, settings: QSettings
) -> None:
    """View › Price changes › Off fade, clicked with the mouse: applied at once to the model
    and kept in the settings; a new menu reads it back."""
    model = TopOfBookModel(Precision())
    model.set_pairs(["ETH/USD"])
    model.update({"ETH/USD": book("ETH/USD", "100.00", "102.00")})
    menu = QMenu()
    qtbot.addWidget(menu)
    try:
        add_theme_menu(menu, app, settings)
        submenu = menu.findChild(QMenu, "flashMenu")
        assert isinstance(submenu, QMenu)
        ticked = [a.objectName() for a in submenu.actions() if a.isChecked()]
        assert ticked == [f"flash_{DEFAULT_FLASH_MODE}"]
        submenu.popup(QPoint(0, 0))
        qtbot.waitExposed(submenu)
        off = next(a for a in submenu.actions() if a.objectName() == "flash_off")
        QTest.mouseClick(
            submenu, Qt.MouseButton.LeftButton, pos=submenu.actionGeometry(off).center()
        )
        qtbot.waitUntil(lambda: flash_mode() == "off")
        assert settings.value(FLASH_KEY) == "off" and off.isChecked()
        model.update({"ETH/USD": book("ETH/USD", "101.00", "101.50")})
        assert model.data(model.index(0, COL["bid"]), BG) is None

        palette.set_flash_mode("full")  # from elsewhere (Settings): the menu's tick follows
        full = next(a for a in submenu.actions() if a.objectName() == "flash_full")
        assert full.isChecked() and not off.isChecked()
        palette.set_flash_mode(DEFAULT_FLASH_MODE)
        again = QMenu()
        qtbot.addWidget(again)
        add_theme_menu(again, app, settings)  # the saved mode is applied with the menu
        assert flash_mode() == "off"
    finally:
        palette.set_flash_mode(DEFAULT_FLASH_MODE)
        model.deleteLater()


def test_rows_out_of_view_are_formatted_when_read_and_not_signalled(
    model: TopOfBookModel, clock: FakeClock
) -> None:
    model.set_visible((0, 1))  # SOL/USD (row 2) is scrolled out of view
    spy = ChangeSpy(model)
    clock.now += 2.0
    model.update(
        {
            "BTC/USD": book("BTC/USD", "91234.60", "91235.00"),
            "SOL/USD": book("SOL/USD", "151.0100", "151.0300"),
        }
    )
    assert {row for row, _ in spy.cells} == {0}  # only the row in view repaints
    assert text(model, 2, COL["bid"]) == "▲ 151.01"  # formatted when painted
    assert key(model, 2, COL["bid"]) == Decimal("151.0100")
    model.refresh_ages()
    assert text(model, 1, COL["age"]) == "2 s"  # a row that did not tick ages as before
    assert text(model, 2, COL["age"]) == "0 s"
    model.set_visible(None)


# -- rows out of view: a tick waits until the row is read -------------------------------------


def test_a_row_out_of_view_shows_its_net_move_and_the_rest_of_its_fade_when_read(
    model: TopOfBookModel, clock: FakeClock, full_fade: None
) -> None:
    """Ticks for a row out of view are kept, not applied (nothing is signalled); brought into
    view, the row shows the newest prices, ▲/▼ for the net move since it was last shown, and a
    fade that started when the newest tick came."""
    model.set_visible((0, 1))  # SOL/USD (row 2, 150.01 / 150.03) is scrolled out of view
    spy = ChangeSpy(model)
    clock.now += 1.0
    model.update({"SOL/USD": book("SOL/USD", "152.00", "152.10")})  # up
    clock.now += 0.1
    model.update({"SOL/USD": book("SOL/USD", "151.00", "151.10")})  # down, up since shown
    assert spy.ranges == []
    clock.now += FLASH_SECONDS / FADE_STEPS + 0.01  # the fade is a step in
    model.set_visible((1, 2))
    assert spy.cells == {(2, column) for column in range(COLUMN_COUNT)}  # repainted once in view
    assert text(model, 2, COL["bid"]) == "▲ 151.00"
    assert text(model, 2, COL["ask"]) == "▲ 151.10"
    colour = model.data(model.index(2, COL["bid"]), BG)
    strength = 1 - 1 / FADE_STEPS
    assert isinstance(colour, QColor) and colour.rgb() == DEFAULT_PALETTE.up_flash.rgb()
    assert colour.alpha() == max(1, round(DEFAULT_PALETTE.up_flash.alpha() * strength))
    assert model.flashing(2, COL["bid"]) == 1
    clock.now += FLASH_SECONDS
    model.expire_flashes()
    assert model.data(model.index(2, COL["bid"]), BG) is None
    assert text(model, 2, COL["age"]) == "0 s"  # formatted when read, from the tick's own time
    model.set_visible(None)


def test_a_tick_older_than_its_fade_brings_no_fade_into_view(
    model: TopOfBookModel, clock: FakeClock, full_fade: None
) -> None:
    model.set_visible((0, 0))
    model.update({"ETH/USD": book("ETH/USD", "3000.00", "3000.40")})
    clock.now += FLASH_SECONDS + 0.1
    model.set_visible((0, 2))
    assert text(model, 1, COL["bid"]) == "▼ 3,000.00"  # the sign stays
    assert model.data(model.index(1, COL["bid"]), BG) is None
    assert model.flashing(1, COL["bid"]) == 0


def test_a_sorted_view_sorts_rows_out_of_view_by_their_newest_prices(
    model: TopOfBookModel, clock: FakeClock
) -> None:
    model.sort(COL["spread_bps"], Qt.SortOrder.DescendingOrder)
    model.set_visible((0, 0))
    first = model.pairs[0]
    others = [pair for pair in model.pairs if pair != first]
    # the two rows out of view widen their spreads: 1 % and 2 % of the mid
    clock.now += 1.0
    model.update(
        {others[0]: book(others[0], "99.5", "100.5"), others[1]: book(others[1], "99", "101")}
    )
    model.resort()
    assert model.pairs == [others[1], others[0], first]
    assert key(model, 0, COL["spread_bps"]) == Decimal(200)
    assert key(model, 1, COL["spread_bps"]) == Decimal(100)
    model.sort(COL["age"], Qt.SortOrder.DescendingOrder)  # the oldest data first
    assert model.pairs[0] == first


def test_rows_out_of_view_go_stale_from_their_newest_tick(
    model: TopOfBookModel, clock: FakeClock
) -> None:
    model.set_visible((0, 0))
    clock.now += 0.5
    model.update({"SOL/USD": book("SOL/USD", "150.0100", "150.0300", ask_size="3")})
    clock.now += 0.5  # 1 s since the first data, 0.5 s since SOL/USD's tick (stale after 0.75)
    model.refresh_ages()
    assert [model.is_stale(row) for row in range(3)] == [True, True, False]
    model.update({"ETH/USD": book("ETH/USD", "3100.10", "3100.40")})  # the same prices
    clock.now += 1.0
    model.set_visible((0, 2))
    assert model.is_stale(1)  # its newest tick is 1 s old: grey as soon as it is shown
    assert model.data(model.index(1, COL["bid"]), FG) == DEFAULT_PALETTE.stale
    assert text(model, 1, COL["age"]) == "1 s"


def pixel(image: QImage, rect: QRect) -> QColor:
    """The colour just inside the top-left corner of ``rect`` (away from any text)."""
    return image.pixelColor(rect.left() + 2, rect.top() + 2)


def test_a_row_scrolled_into_view_is_painted_with_its_newest_tick(
    qtbot: QtBot, live: Live, full_fade: None
) -> None:
    """The real table, scrolled with its scroll bar: a tick that came while the last row was
    out of view is on screen when the row is, with its sign and its fade still running.
    Deterministic: the model's clock and the frames are the test's (the panel keeps no tick
    buffer of its own that a busy machine could leave half flushed)."""
    run(qtbot, live.session.top_of_book.stop())
    clock = FakeClock()
    frames = FrameClock()
    panel = shown(qtbot, TopOfBookPanel(live.context, clock=clock, frames=frames), 700, 300)
    model, table = panel.model, panel.table
    pairs = model.pairs
    assert len(pairs) >= 3

    def price(value: str, pair: str) -> str:
        return live.context.precision.price_text(Decimal(value), pair)

    live.bridge.topOfBook.emit({pair: book(pair, "100.00", "100.50") for pair in pairs})
    frames.frame()
    assert text(model, 0, COL["bid"]).endswith(price("100", pairs[0]))
    table.setFixedHeight(table.horizontalHeader().height() + table.rowHeight(0) * 2)
    last = len(pairs) - 1
    qtbot.waitUntil(lambda: panel.visible_rows()[1] < last, timeout=2000)
    assert table.verticalScrollBar().value() == 0
    clock.now += 5.0  # the first fades are long over
    model.expire_flashes()
    spy = ChangeSpy(model)
    live.bridge.topOfBook.emit(
        {
            pairs[0]: book(pairs[0], "99.00", "100.50"),
            pairs[last]: book(pairs[last], "101.00", "101.50"),
        }
    )
    frames.frame()
    assert text(model, 0, COL["bid"]) == "▼ " + price("99", pairs[0])
    assert last not in {row for row, _ in spy.cells}  # out of view: not formatted, not signalled

    clock.now += FLASH_SECONDS / FADE_STEPS / 2  # within the first step of the fade
    bar = table.verticalScrollBar()
    bar.setValue(bar.maximum())
    assert panel.visible_rows()[1] == last
    table.viewport().repaint()
    image = table.viewport().grab().toImage()
    row_y = table.rowViewportPosition(last)
    height = table.rowHeight(last)

    def cell_rect(column: int) -> QRect:
        return QRect(table.columnViewportPosition(column), row_y, table.columnWidth(column), height)

    assert text(model, last, COL["bid"]) == "▲ " + price("101", pairs[last])
    tint = DEFAULT_PALETTE.up_flash
    bid = pixel(image, cell_rect(COL["bid"]))
    plain = pixel(image, cell_rect(COL["pair"]))
    assert bid != plain  # the bid cell is painted with the fade's tint, the pair cell is not
    # the tint over the base: nearer the up colour's hue than the plain cell
    assert abs(bid.green() - tint.green()) + abs(bid.red() - tint.red()) < abs(
        plain.green() - tint.green()
    ) + abs(plain.red() - tint.red())


def test_the_table_paints_the_traded_row_highlighted_and_the_others_plain(
    qtbot: QtBot, live: Live
) -> None:
    """The watchlist paints its own cells (``WatchlistTable``): the traded pair's row in the
    palette's highlight, every other row on the base colour."""
    panel = shown(qtbot, TopOfBookPanel(live.context), 700, 300)
    model, table = panel.model, panel.table
    qtbot.waitUntil(lambda: filled(model), timeout=5000)
    selected = model.row_of(live.session.selected_pair or "")
    assert selected is not None
    other = 1 if selected == 0 else 0
    table.viewport().repaint()
    image = table.viewport().grab().toImage()
    palette = table.palette()
    groups = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)
    for column in (COL["pair"], COL["bid"]):
        x = table.columnViewportPosition(column) + 2
        chosen = image.pixelColor(x, table.rowViewportPosition(selected) + 2)
        plain = image.pixelColor(x, table.rowViewportPosition(other) + 2)
        assert chosen in [palette.color(g, QPalette.ColorRole.Highlight) for g in groups]
        assert plain in [palette.color(g, QPalette.ColorRole.Base) for g in groups]


# -- hidden columns: not formatted on a tick ----------------------------------------------------


def test_hidden_columns_are_formatted_when_read_and_when_shown_again(
    model: TopOfBookModel, clock: FakeClock
) -> None:
    model.set_hidden_columns({COL["bid_size"], COL["ask_size"], COL["mid"]})
    spy = ChangeSpy(model)
    model.update({"ETH/USD": book("ETH/USD", "3100.00", "3100.50")})  # bid down, ask up
    # bid, ask, spread and bp change; the hidden columns between them join one signal
    assert spy.ranges == [(1, COL["bid"], 1, COL["spread_bps"])]
    assert text(model, 1, COL["mid"]) == "3,100.25"  # formatted on the spot when read
    assert model.column_texts(COL["mid"])[1] == "3,100.25"
    spy.clear()
    model.set_hidden_columns({COL["bid_size"], COL["ask_size"]})
    assert {(row, COL["mid"]) for row in range(3)} <= spy.cells  # repainted once shown
    assert text(model, 1, COL["mid"]) == "3,100.25"
    spy.clear()
    model.update({"ETH/USD": book("ETH/USD", "3100.00", "3100.60")})
    assert (1, COL["mid"]) in spy.cells and text(model, 1, COL["mid"]) == "▲ 3,100.30"


def test_the_panel_tells_the_model_which_columns_the_trader_hides(qtbot: QtBot, live: Live) -> None:
    run(qtbot, live.session.top_of_book.stop())
    panel = shown(qtbot, TopOfBookPanel(live.context), 900, 300)
    model = panel.model
    pair = model.pairs[0]
    assert panel.table.isColumnHidden(COL["mid"])  # hidden by default
    live.bridge.topOfBook.emit({pair: book(pair, "100", "101")})
    qtbot.waitUntil(lambda: key(model, 0, COL["bid"]) == Decimal(100))
    live.bridge.topOfBook.emit({pair: book(pair, "100", "103")})
    qtbot.waitUntil(lambda: key(model, 0, COL["ask"]) == Decimal(103))
    assert model.widest(COL["mid"]) == 0  # never formatted while hidden
    panel.columns.set_shown("mid", True)  # what the header menu does
    spy = ChangeSpy(model)
    live.bridge.topOfBook.emit({pair: book(pair, "100", "105")})
    qtbot.waitUntil(lambda: key(model, 0, COL["ask"]) == Decimal(105))
    assert (0, COL["mid"]) in spy.cells
    mid = live.context.precision.price_text(Decimal("102.5"), pair)
    assert text(model, 0, COL["mid"]) == "▲ " + mid
    assert model.widest(COL["mid"]) >= len("▲ " + mid)  # formatted since shown


@pytest.mark.parametrize("points", [7, 9, 14, 18])
def test_the_quick_width_bound_never_undercuts_a_number(app: QApplication, points: int) -> None:
    """The table skips measuring a text whose quick bound fits its cell: a bound below the real
    width clipped a number's leading digit with no "…" (``41,234,567.89`` read ``11,…``). Holds
    for whatever font the machine gives: the bound is checked against that font's own layout."""
    table = WatchlistTable()
    font = QFont(NUMBER_FAMILY)
    font.setPointSize(points)
    face = table.painter.face(font)
    for text in ("▲ 41,234,567.89", "1,234,567.89", "0.0000000800", "▼ 91,066.37", "—"):
        assert face.reach(text) >= QFontMetricsF(font).horizontalAdvance(text), text
    table.deleteLater()


def test_the_first_fit_applies_no_tick_waiting_out_of_view(qtbot: QtBot, live: Live) -> None:
    """Fitting the columns to the first data reads only what rows in view showed (the model
    keeps each column's longest text): the ticks of rows out of view keep waiting for their
    row to be read, so the first frame costs the rows in view, not the whole watchlist."""
    run(qtbot, live.session.top_of_book.stop())
    frames = FrameClock()
    panel = TopOfBookPanel(live.context, clock=FakeClock(), frames=frames)
    panel = shown(qtbot, panel, 700, 300)
    model, table = panel.model, panel.table
    pairs = model.pairs
    assert len(pairs) >= 3
    table.setFixedHeight(table.horizontalHeader().height() + table.rowHeight(0) * 2)
    qtbot.waitUntil(lambda: panel.visible_rows()[1] < len(pairs) - 1, timeout=2000)
    first, last = panel.visible_rows()
    live.bridge.topOfBook.emit({pair: book(pair, "100.00", "100.50") for pair in pairs})
    frames.frame()
    waiting = set(model.staged())
    assert waiting == set(pairs) - set(pairs[first : last + 1])  # out of view: still waiting
    bid = COL["bid"]
    assert table.columnWidth(bid) >= table.fontMetrics().horizontalAdvance(model.longest_text(bid))
    assert model.longest_text(bid) in {text(model, row, bid) for row in range(first, last + 1)}
