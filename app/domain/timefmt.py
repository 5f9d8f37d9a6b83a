"""ISO 8601 UTC timestamps as the service writes them: ``2026-01-02T03:04:05.123456Z``.

Parsing accepts 0 to 9 fractional digits (nanoseconds are truncated to microseconds, which is
all ``datetime`` holds) and ``Z`` or ``+00:00``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from app.domain.errors import ParseError

_TS_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]00:?00)$"
)


def parse_timestamp(value: object, field: str = "time") -> datetime:
    """An aware UTC datetime from the wire form; anything else raises ParseError."""
    if not isinstance(value, str):
        raise ParseError(field, f"expected an ISO 8601 UTC timestamp, got {type(value).__name__}")
    match = _TS_RE.match(value.strip())
    if not match:
        raise ParseError(field, f"not an ISO 8601 UTC timestamp: {value!r}")
    year, month, day, hour, minute, second, fraction, _zone = match.groups()
    micros = int((fraction or "0").ljust(6, "0")[:6])
    try:
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micros, UTC
        )
    except ValueError as exc:
        raise ParseError(field, f"not a valid date/time: {value!r} ({exc})") from None


def format_timestamp(moment: datetime) -> str:
    """The wire form with microseconds and ``Z``; naive datetimes are refused."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: timestamps must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now() -> datetime:
    return datetime.now(UTC)
