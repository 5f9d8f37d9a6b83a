"""The hours in which the service grants credit, as it states them in a refusal.

A 424 "Credit Not Available" outside business hours may name the window, as in
``(Mon-Fri 09:00-17:00 America/New_York)``; an order queued to retry at the window then waits
for its next opening instead of probing. A refusal that names no window (a service that does
not say, or credit withdrawn for the account) leaves the retry probing at its own pace until
its deadline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
CREDIT_REFUSAL = "Credit Not Available"
_WINDOW = re.compile(
    r"(?P<d1>Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?:-(?P<d2>Mon|Tue|Wed|Thu|Fri|Sat|Sun))?\s+"
    r"(?P<t1>\d{1,2}:\d{2})-(?P<t2>\d{1,2}:\d{2})\s+(?P<tz>[A-Za-z_]+(?:/[A-Za-z_+-]+)*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CreditWindow:
    """A weekly window: ``days`` (0 = Monday) from ``start`` to ``end`` in ``zone``."""

    text: str
    days: frozenset[int]
    start: time
    end: time
    zone: ZoneInfo

    @classmethod
    def find(cls, message: str) -> CreditWindow | None:
        """The window a refusal names, or None."""
        match = _WINDOW.search(message)
        if match is None:
            return None
        first = DAYS.index(match["d1"].lower())
        last = DAYS.index(match["d2"].lower()) if match["d2"] else first
        days = frozenset((first + i) % 7 for i in range((last - first) % 7 + 1))
        start, end = _clock(match["t1"]), _clock(match["t2"])
        if start is None or end is None or end <= start:
            return None
        try:
            zone = ZoneInfo(match["tz"])
        except (ZoneInfoNotFoundError, ValueError):
            return None
        return cls(match.group(0), days, start, end, zone)

    def is_open(self, moment: datetime) -> bool:
        local = moment.astimezone(self.zone)
        return local.weekday() in self.days and self.start <= local.time() < self.end

    def next_open(self, after: datetime) -> datetime:
        """When the window is next open at or after ``after`` (itself when open)."""
        if self.is_open(after):
            return after
        local = after.astimezone(self.zone)
        for ahead in range(8):
            day = (local + timedelta(days=ahead)).date()
            opening = datetime.combine(day, self.start, tzinfo=self.zone)
            if day.weekday() in self.days and opening >= local:
                return opening.astimezone(UTC)
        return after + timedelta(days=7)  # unreachable for a window of at least one day


def is_credit_refusal(detail: str) -> bool:
    return detail.strip().startswith(CREDIT_REFUSAL)


def _clock(text: str) -> time | None:
    hours, minutes = (int(part) for part in text.split(":"))
    if hours > 23 or minutes > 59:
        return None
    return time(hours, minutes)
