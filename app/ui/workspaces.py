"""Default layouts that fit the screen, and named workspaces the trader saves.

One layout at 1400×860 wasted a large screen and did not fit a small one. Two default
layouts are declared as data (``Plan``): *compact* for 1366×768 and *wide* for 1920×1080 and
larger; the first start picks one from the screen's available size (``plan_for``), and View >
Layout offers both. A plan is a row of columns along the top (each a stack of tab groups) and
one tab group along the whole bottom: the record panels (whose filter bars are the widest
widgets) get the full width, the depth ladder and the tickets a column of full height.

Named workspaces (View > Workspaces) are the docks' state (``QMainWindow.saveState``) kept in
the settings under ``workspaces/<name>``; the window's size is not part of one, so loading a
workspace never resizes the window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from urllib.parse import quote, unquote

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QScrollArea

Area = Qt.DockWidgetArea
GROUP = "workspaces"


@dataclass(frozen=True)
class Group:
    """Docks tabbed together (the first in front), with a share of its column's height."""

    names: tuple[str, ...]
    weight: int = 1


@dataclass(frozen=True)
class Column:
    """Tab groups stacked top to bottom, with a share of the window's width (0: exactly the
    width its docks need, the rest going to the others)."""

    groups: tuple[Group, ...]
    weight: int = 1


@dataclass(frozen=True)
class Plan:
    """A default layout: ``columns`` side by side along the top, ``bottom`` across the whole
    width below them, ``bottom_share`` percent of the height."""

    name: str
    title: str
    columns: tuple[Column, ...]
    bottom: Group
    bottom_share: int

    @property
    def names(self) -> list[str]:
        groups = [g for c in self.columns for g in c.groups]
        return [n for g in (*groups, self.bottom) for n in g.names]


RECORDS = (
    "orders",
    "workingOrders",
    "positions",
    "ledger",
    "deposits",
    "instructions",
    "audit",
    "alerts",
    "log",
)

COMPACT = Plan(
    "compact",
    "&Compact (1366×768)",
    (
        Column((Group(("topOfBook",), 54), Group(("balances",), 46)), 38),
        # the tickets take the width they need; the watchlist and balances get the rest
        Column((Group(("orderTicket", "rfqTicket", "algoTicket")),), 0),
        Column((Group(("chart", "depth")),), 32),
    ),
    Group(RECORDS),
    34,
)

WIDE = Plan(
    "wide",
    "&Wide (1920×1080)",
    (
        Column((Group(("topOfBook",), 56), Group(("balances",), 44)), 28),
        Column((Group(("chart",)),), 34),
        Column((Group(("depth",)),), 17),
        Column((Group(("orderTicket", "rfqTicket", "algoTicket")),), 0),
    ),
    Group(RECORDS),
    # fifteen rows of a record table under its filters, and a deposit card's QR code whole
    49,
)

PLANS = {plan.name: plan for plan in (COMPACT, WIDE)}
#: The smallest available screen area that gets the wide layout.
WIDE_FROM = QSize(1700, 950)


def plan_for(available: QSize) -> Plan:
    """The default layout for a screen whose available area is ``available``."""
    wide = available.width() >= WIDE_FROM.width() and available.height() >= WIDE_FROM.height()
    return WIDE if wide else COMPACT


def arrange(window: QMainWindow, docks: Mapping[str, QDockWidget], plan: Plan) -> bool:
    """Put ``docks`` where ``plan`` says, sized by its weights for the window's current size,
    and show them all. False (nothing moved) when the plan does not name every dock: a window
    of other panels keeps the places its panels ask for."""
    if not docks or any(name not in plan.names for name in docks):
        return False
    columns = [[[docks[n] for n in g.names if n in docks] for g in c.groups] for c in plan.columns]
    columns = [[g for g in groups if g] for groups in columns]
    weights = [
        (c.weight, [g.weight for g in c.groups if any(n in docks for n in g.names)])
        for c in plan.columns
    ]
    kept = [(groups, w) for groups, w in zip(columns, weights, strict=True) if groups]
    bottom = [docks[n] for n in plan.bottom.names if n in docks]
    for dock in docks.values():
        window.removeDockWidget(dock)
    firsts: list[QDockWidget] = []
    for groups, _ in kept:  # the columns, left to right
        first = groups[0][0]
        if firsts:
            window.splitDockWidget(firsts[-1], first, Qt.Orientation.Horizontal)
        else:
            window.addDockWidget(Area.LeftDockWidgetArea, first)
        firsts.append(first)
    for groups, _ in kept:  # each column's groups, top to bottom
        for above, below in pairwise(groups):
            window.splitDockWidget(above[0], below[0], Qt.Orientation.Vertical)
    all_groups = [g for groups, _ in kept for g in groups]
    if bottom:
        window.addDockWidget(Area.BottomDockWidgetArea, bottom[0])
        all_groups.append(bottom)
    for group in all_groups:
        for dock in group:
            dock.show()
        for dock in group[1:]:
            window.tabifyDockWidget(group[0], dock)
        group[0].raise_()
    _size(window, kept, bottom, plan.bottom_share)
    return True


def split_width(total: int, weights: list[int], needs: list[int]) -> list[int]:
    """Split ``total`` px by ``weights``, but give each part at least its ``need`` (taken from
    the others by their weights): a narrow screen squeezes the flexible columns first. A part
    of weight 0 gets exactly its need, at any width."""
    fixed: dict[int, int] = {i: max(1, needs[i]) for i, weight in enumerate(weights) if not weight}
    while True:
        free = [i for i in range(len(weights)) if i not in fixed]
        left = total - sum(fixed.values())
        weight = sum(weights[i] for i in free) or 1
        sizes = {i: left * weights[i] // weight for i in free}
        short = [i for i in free if sizes[i] < needs[i]]
        if not short or len(short) == len(free):
            return [fixed.get(i, sizes.get(i, 0)) for i in range(len(weights))]
        fixed.update((i, needs[i]) for i in short)


def needed_width(dock: QDockWidget) -> int:
    """The width ``dock`` needs: its minimum, or more where a panel scrolls only vertically
    (the order ticket) and would otherwise cut its content off at the right."""
    need = dock.minimumSizeHint().width()
    panel = dock.widget()
    frame = need - panel.minimumSizeHint().width()
    for area in panel.findChildren(QScrollArea):
        content = area.widget()
        off = area.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        if content is not None and off:
            bar = area.verticalScrollBar().sizeHint().width()
            edges = 2 * area.frameWidth()
            # Its preferred width, not its minimum: below it, labels such as "USD to spend"
            # are cut (the area never scrolls sideways) — unless the area says its content
            # fits at its minimum (``FITS_AT_MINIMUM``: its long texts wrap).
            wanted = content.minimumSizeHint().width()
            if not area.property(FITS_AT_MINIMUM):
                wanted = max(wanted, content.sizeHint().width())
            need = max(need, wanted + bar + edges + frame + SLACK)
    return need


#: Property of a scroll area whose content reads whole at its minimum width (its texts wrap):
#: the column is not widened to the content's preferred width for it.
FITS_AT_MINIMUM = "fitsAtMinimum"
#: Pixels of room beyond the computed need: a style sheet's scroll bar can be a few pixels wider
#: than the hint the layout is computed from (seen: 3 px with the shipped themes).
SLACK = 8


def _size(
    window: QMainWindow,
    kept: list[tuple[list[list[QDockWidget]], tuple[int, list[int]]]],
    bottom: list[QDockWidget],
    bottom_share: int,
) -> None:
    """Share the width among the columns and each column's height among its groups."""
    width, height = window.width(), window.height()
    if kept:
        needs = [max(needed_width(d) for g in groups for d in g) for groups, _ in kept]
        window.resizeDocks(
            [groups[0][0] for groups, _ in kept],
            split_width(width, [w[0] for _, w in kept], needs),
            Qt.Orientation.Horizontal,
        )
    top = height * (100 - bottom_share) // 100 if bottom else height
    if kept and bottom:
        window.resizeDocks(
            [kept[0][0][0][0], bottom[0]],
            [top, height - top],
            Qt.Orientation.Vertical,
        )
    for groups, (_, shares) in kept:
        if len(groups) > 1:
            total = sum(shares)
            window.resizeDocks(
                [g[0] for g in groups], [top * s // total for s in shares], Qt.Orientation.Vertical
            )


class WorkspaceStore:
    """Named dock states in the settings (``workspaces/<name>``, the name percent-encoded so a
    slash in it is not a settings group)."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    def _key(self, name: str) -> str:
        return f"{GROUP}/{quote(name, safe='')}"

    def names(self) -> list[str]:
        self._settings.beginGroup(GROUP)
        try:
            keys = self._settings.childKeys()
        finally:
            self._settings.endGroup()
        return sorted((unquote(key) for key in keys), key=str.casefold)

    def save(self, name: str, state: QByteArray) -> None:
        self._settings.setValue(self._key(name), state)
        self._settings.sync()

    def load(self, name: str) -> QByteArray | None:
        value = self._settings.value(self._key(name))
        return value if isinstance(value, QByteArray) else None

    def rename(self, old: str, new: str) -> None:
        state = self.load(old)
        if state is None:
            raise KeyError(old)
        if new in self.names() and new != old:
            raise ValueError(f"a workspace named {new!r} exists")
        self._settings.remove(self._key(old))
        self.save(new, state)

    def delete(self, name: str) -> None:
        self._settings.remove(self._key(name))
        self._settings.sync()
