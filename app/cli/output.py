"""Readable output: aligned tables and key/value blocks, and exact JSON.

Numbers are shown from their Decimal text (never through a float, never with an exponent), so
what a trader reads is exactly what the service sent; in tables with thousands grouped and a
column's decimal points one under the other. ``--json`` keeps the exact wire strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from app.domain import Amount, Price, format_decimal, format_timestamp


@dataclass(frozen=True)
class TextColumn:
    """A table column; ``numeric`` columns are right-aligned on the decimal point."""

    header: str
    numeric: bool = False


def exact_text(value: object) -> str | None:
    """A Decimal, time, Amount or Price as its exact wire text (else None): the table and the
    JSON write these alike."""
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, Amount | Price):
        return str(value)
    return None


def cell(value: object) -> str:
    """The display text of one value: Decimals exact and plain, times in the wire form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = exact_text(value)
    return str(value) if text is None else text


def table(columns: Sequence[TextColumn], rows: Sequence[Sequence[object]]) -> str:
    """Columns separated by two spaces; text left-aligned, numbers right-aligned on the
    decimal point (``numeric_cell``: a Decimal grouped, exact)."""
    texts = [
        [
            numeric_cell(value) if column.numeric else cell(value)
            for value, column in zip(row, columns, strict=True)
        ]
        for row in rows
    ]
    for index, column in enumerate(columns):
        if column.numeric:
            _align_points(texts, index)
    widths = [
        max([len(column.header), *(len(row[index]) for row in texts)])
        for index, column in enumerate(columns)
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(width) if column.numeric else value.ljust(width)
            for value, width, column in zip(values, widths, columns, strict=True)
        ]
        return "  ".join(parts).rstrip()

    lines = [line([column.header for column in columns])]
    lines += [line(row) for row in texts]
    return "\n".join(lines)


def numeric_cell(value: object) -> str:
    """A number for a table: a Decimal exact with its thousands grouped (``250,000.00``);
    integers (orderings, counts, ids) and texts as they are."""
    if isinstance(value, Decimal):
        return format(value, ",f")
    return cell(value)


def _align_points(texts: list[list[str]], index: int) -> None:
    """Pad the cells of column ``index`` on the right so that their decimal points line up; a
    cell without one ends where the points are (``12`` under ``3.50`` reads ``12   ``)."""
    cells = [row[index] for row in texts]
    places = [len(text) - len(text.split(".", 1)[0]) for text in cells]
    widest = max(places, default=0)
    for row, text, own in zip(texts, cells, places, strict=True):
        if text:
            row[index] = text + " " * (widest - own)


def fields(pairs: Sequence[tuple[str, object]]) -> str:
    """A key/value block: labels padded to one width, values as ``cell`` shows them."""
    shown = [(label, cell(value)) for label, value in pairs if value is not None]
    width = max((len(label) for label, _ in shown), default=0)
    return "\n".join(f"{label.ljust(width)}  {value}".rstrip() for label, value in shown)


def blocks(*parts: str) -> str:
    """Sections separated by one blank line (empty sections dropped)."""
    return "\n\n".join(part for part in parts if part)


def to_json(data: Any) -> str:
    """Indented JSON; a Decimal that slipped through is written as its exact text."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=_encode)


def _encode(value: object) -> object:
    text = exact_text(value)
    if text is None:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")
    return text
