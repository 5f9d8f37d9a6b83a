"""How a record table's width is shared (``app.ui.column_widths``): numbers and times whole,
ids and notes give width first (the widest first), words only when that makes the table fit,
the trader's widths kept, what is left to the last column."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.ui.column_widths import Fit, Need, plan_widths

WHOLE, TEXT, YIELD = Fit.WHOLE, Fit.TEXT, Fit.YIELD


def test_everything_fits_and_the_last_column_takes_what_is_left() -> None:
    needs = [Need(WHOLE, 120, 120), Need(TEXT, 80, 50), Need(YIELD, 200, 90)]
    assert plan_widths(needs, 500) == [120, 80, 300]


def test_ids_give_width_before_numbers_and_words() -> None:
    """The deposits at 1920 px: an amount cut to "25.0…0000" while a name took 700 px. Here
    the names give what the numbers need; the numbers and the words stay whole."""
    needs = [
        Need(WHOLE, 130, 130),  # an amount
        Need(TEXT, 90, 60),  # a status
        Need(YIELD, 300, 100),  # a hash
        Need(YIELD, 160, 100),  # a name
    ]
    widths = plan_widths(needs, 560)
    assert widths[:2] == [130, 90]
    assert sum(widths) == 560
    assert widths[2:] == [180, 160]  # the widest gave first (the name needs no cut)


def test_a_narrow_id_keeps_its_width_while_a_wider_one_gives() -> None:
    needs = [Need(WHOLE, 100, 100), Need(YIELD, 400, 80), Need(YIELD, 120, 80)]
    assert plan_widths(needs, 500) == [100, 280, 120]


def test_ids_stop_at_their_floor_then_words_give() -> None:
    needs = [Need(WHOLE, 300, 300), Need(TEXT, 200, 80), Need(YIELD, 200, 100)]
    widths = plan_widths(needs, 560)
    assert widths[0] == 300
    assert widths[2] == 100  # the id at its floor first
    assert widths[1] == 160  # then the words, only as far as needed
    assert sum(widths) == 560


def test_when_the_table_must_scroll_the_words_stay_whole() -> None:
    """At 1280 px the orders' numbers and times alone are wider than the dock: it scrolls, so
    cutting "resting · 1 h 04 min left" would gain nothing."""
    needs = [Need(WHOLE, 900, 900), Need(TEXT, 200, 80), Need(YIELD, 300, 100)]
    assert plan_widths(needs, 1000) == [900, 200, 100]


def test_numbers_are_never_cut_the_table_scrolls() -> None:
    needs = [Need(WHOLE, 700, 700), Need(WHOLE, 600, 600)]
    assert plan_widths(needs, 1000) == [700, 600]


def test_a_width_the_trader_chose_is_kept() -> None:
    needs = [Need(WHOLE, 120, 120, pinned=60), Need(YIELD, 300, 100, pinned=400)]
    assert plan_widths(needs, 300) == [60, 400]
    needs = [Need(WHOLE, 120, 120), Need(YIELD, 300, 100, pinned=80)]
    assert plan_widths(needs, 500) == [420, 80]  # the rest to the last column not pinned


needs_strategy = st.lists(
    st.builds(
        lambda fit, wanted, cut, pinned: Need(
            fit, wanted, wanted if fit is WHOLE else max(1, wanted - cut), pinned
        ),
        st.sampled_from(list(Fit)),
        st.integers(1, 600),
        st.integers(0, 600),
        st.one_of(st.none(), st.integers(1, 600)),
    ),
    min_size=1,
    max_size=16,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(needs_strategy, st.integers(0, 4000))
@example(  # a whole-pixel cap gave a pixel too many, and the stretch column took it
    [
        Need(YIELD, 59, 25),
        Need(YIELD, 43, 43),
        Need(WHOLE, 34, 34, pinned=60),
        Need(TEXT, 25, 1),
        Need(TEXT, 34, 1),
        Need(YIELD, 43, 1),
    ],
    166,
)
def test_the_rules_hold_for_any_table(needs: list[Need], room: int) -> None:
    widths = plan_widths(needs, room)
    assert len(widths) == len(needs)
    free = [n for n, need in enumerate(needs) if need.pinned is None]
    for n, (need, width) in enumerate(zip(needs, widths, strict=True)):
        if need.pinned is not None:
            assert width == need.pinned
        elif need.fit is WHOLE:
            assert width >= need.wanted
        else:
            assert width >= need.floor
        if need.pinned is None and n != (free[-1] if free else -1):
            assert width <= need.wanted  # only the stretch column grows past what it wants
    if free and sum(need.wanted if need.pinned is None else need.pinned for need in needs) <= room:
        assert sum(widths) == room  # the columns reach the right edge
    cut_text = any(
        w < need.wanted
        for need, w in zip(needs, widths, strict=True)
        if need.fit is TEXT and need.pinned is None
    )
    if cut_text:  # words give only once every id is at its floor, and only to fit exactly
        assert all(
            w == need.floor
            for need, w in zip(needs, widths, strict=True)
            if need.fit is YIELD and need.pinned is None
        )
        assert sum(widths) <= room
