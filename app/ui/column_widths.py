"""How a table's width is shared among its columns (no Qt: the plan alone, tested without a
screen; ``app.ui.column_sizer`` measures the texts and applies it).

Each column wants the width of its title and of the widest value in view. When they do not all
fit, columns give width back in this order, and only as far as needed:

- ``Fit.YIELD`` (ids, names, notes): first, widest first, down to a short readable stub; they
  are cut at the right and show the whole value in their tooltip;
- ``Fit.TEXT`` (words: a status, a pair, what was sent): next, widest first, down to about
  their title — only when that makes the table fit: when it has to scroll sideways anyway,
  the words stay whole;
- ``Fit.WHOLE`` (numbers and times): never; when even they do not fit, the table scrolls
  sideways rather than show a cut number.

Why this order: the trader saw amounts cut in the middle ("25.0…0000") and times cut at their
end while an id or a name took hundreds of pixels. A width the trader dragged is kept as it is
(``Need.pinned``). What is left over goes to the last column that is not pinned (the table's
stretch), so the columns always reach the right edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum


class Fit(Enum):
    """How a column behaves when the table is too narrow for every column's values."""

    #: Numbers and times: always whole (the table scrolls sideways first).
    WHOLE = "whole"
    #: Words: cut at the right only when the ids and notes can give no more.
    TEXT = "text"
    #: Ids and free text: give width first; cut at the right, whole in the tooltip.
    YIELD = "yield"


#: The order in which columns give width back.
GIVING_ORDER = (Fit.YIELD, Fit.TEXT)


@dataclass(frozen=True, slots=True)
class Need:
    """One shown column: how it fits, the width it wants (title and widest value, margins
    included), the least it may be cut to, and the trader's own width (None: sized here)."""

    fit: Fit
    wanted: int
    floor: int
    pinned: int | None = None


def plan_widths(needs: Sequence[Need], room: int) -> list[int]:
    """The width of each column in ``needs`` (the shown ones, in visual order) for a table
    ``room`` pixels wide."""
    widths = [need.wanted if need.pinned is None else need.pinned for need in needs]
    excess = sum(widths) - room
    for fit in GIVING_ORDER:
        if excess <= 0:
            break
        group = [n for n, need in enumerate(needs) if need.fit is fit and need.pinned is None]
        floors = [min(needs[n].floor, widths[n]) for n in group]
        if fit is Fit.TEXT and sum(widths[n] for n in group) - sum(floors) < excess:
            break  # the table scrolls anyway: the words stay whole, to be read by scrolling
        excess -= _give(widths, floors, group, excess)
    if excess < 0:
        free = [n for n, need in enumerate(needs) if need.pinned is None]
        if free:
            widths[free[-1]] -= excess  # the stretch: the columns reach the right edge
    return widths


def _give(widths: list[int], floors: list[int], group: list[int], excess: int) -> int:
    """Cut the widest of ``group`` first (each to no less than its floor) until ``excess``
    pixels are given or none is left to give; returns the pixels given."""
    if not group:
        return 0
    before = [widths[n] for n in group]
    spare = sum(w - f for w, f in zip(before, floors, strict=True))
    if spare <= excess:
        for n, floor in zip(group, floors, strict=True):
            widths[n] = floor
        return spare
    # The highest cap under which the group gives at least ``excess``: columns wider than it
    # are cut to it (never under their floor), narrower ones keep their width.
    low, high = 0, max(before)
    while low < high:
        cap = (low + high + 1) // 2
        given = sum(w - max(f, min(w, cap)) for w, f in zip(before, floors, strict=True))
        if given >= excess:
            low = cap
        else:
            high = cap - 1
    given = 0
    for n, width, floor in zip(group, before, floors, strict=True):
        widths[n] = max(floor, min(width, low))
        given += width - widths[n]
    # A whole-pixel cap may give a few pixels more than asked: they go back, one each, to the
    # columns cut to it, not to the stretch column (which may be one that gave all it could).
    for n, width in zip(group, before, strict=True):
        if given <= excess:
            break
        if widths[n] < width and widths[n] == low:
            widths[n] += 1
            given -= 1
    return given
