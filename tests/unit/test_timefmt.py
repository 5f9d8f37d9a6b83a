"""Timestamps: 0 to 9 fractional digits in, microseconds and Z out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.domain import ParseError, format_timestamp, parse_timestamp


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("2026-01-02T03:04:05Z", 0),
        ("2026-01-02T03:04:05.1Z", 100000),
        ("2026-01-02T03:04:05.123456Z", 123456),
        ("2026-01-02T03:04:05.123456789Z", 123456),
        ("2026-01-02T03:04:05.5+00:00", 500000),
    ],
)
def test_fractional_digits_zero_to_nine(text: str, micros: int) -> None:
    assert parse_timestamp(text) == datetime(2026, 1, 2, 3, 4, 5, micros, UTC)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-01-02",
        "2026-01-02T03:04:05",
        "2026-13-02T03:04:05Z",
        "2026-01-02T03:04:05+01:00",
        "2026-01-02T03:04:05.1234567890Z",
        None,
    ],
)
def test_bad_timestamps_raise_parse_error(text: object) -> None:
    with pytest.raises(ParseError):
        parse_timestamp(text, "endAt")


def test_format_round_trips() -> None:
    moment = datetime(2026, 11, 21, 20, 0, 1, 42, UTC)
    assert format_timestamp(moment) == "2026-11-21T20:00:01.000042Z"
    assert parse_timestamp(format_timestamp(moment)) == moment
    with pytest.raises(ValueError, match="naive"):
        format_timestamp(datetime(2026, 1, 1))
