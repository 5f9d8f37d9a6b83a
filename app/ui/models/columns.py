"""A table column declared as data: everything about one column in one place.

Each table declares one list of ``Column`` at the top of its model module; the generic
``KeyedTableModel`` (``app.ui.models.keyed_table``) reads its headers, tooltips, alignment,
fonts, cells and colours from that list, and panels and tests find a column by its key
(``model.column("price")``) instead of by a parallel IntEnum.

How a column gives width when the table is narrow is declared here too (``fit``, see
``app.ui.column_widths``): numbers and times are always whole, words next, ids and free text
give width first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from app.domain.display import Precision
from app.ui.column_widths import Fit
from app.ui.models.record_cells import Cell
from app.ui.palette import TradePalette

R = TypeVar("R")

ALIGN_NUMBER = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
ALIGN_TEXT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


@dataclass(frozen=True, slots=True)
class Column(Generic[R]):
    """One column of a table whose rows are records of type ``R``.

    ``cell`` turns a record into the cell's display text, sort key and exact export text
    (computed once per record, never per paint). ``numeric`` marks a number column: its sort
    keys are Decimals, it is right-aligned and drawn in the fixed-pitch font unless
    ``alignment`` or ``fixed_pitch`` say otherwise. ``colour`` gives a cell's text colour from
    the palette in force, ``tip`` its tooltip. ``fit``: how the column gives width in a narrow
    table (by default: whole for a number, else as words).
    """

    key: str
    header: str
    cell: Callable[[R, Precision], Cell]
    tooltip: str | None = None
    numeric: bool = False
    alignment: Qt.AlignmentFlag | None = None
    fixed_pitch: bool | None = None
    colour: Callable[[R, TradePalette], QColor | None] | None = None
    tip: Callable[[R, Precision], str | None] | None = None
    fit: Fit | None = None

    @property
    def fitting(self) -> Fit:
        if self.fit is not None:
            return self.fit
        return Fit.WHOLE if self.numeric else Fit.TEXT

    @property
    def cell_alignment(self) -> Qt.AlignmentFlag:
        if self.alignment is not None:
            return self.alignment
        return ALIGN_NUMBER if self.numeric else ALIGN_TEXT

    @property
    def monospace(self) -> bool:
        return self.numeric if self.fixed_pitch is None else self.fixed_pitch


def column_numbers(columns: Sequence[Column[R]]) -> dict[str, int]:
    """Key -> column number; a key may stand only once."""
    numbers = {column.key: number for number, column in enumerate(columns)}
    if len(numbers) != len(columns):
        raise ValueError("column keys must be unique")
    return numbers
