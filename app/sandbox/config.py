"""Sandbox settings and the credit-hours schedule (``always``, ``never`` or a weekly window)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_SCHEDULE_RE = re.compile(
    r"^(?P<d1>[A-Za-z]{3})(?:-(?P<d2>[A-Za-z]{3}))?\s+"
    r"(?P<t1>\d{2}:\d{2})-(?P<t2>\d{2}:\d{2})\s+(?P<tz>\S+)$"
)


@dataclass(frozen=True)
class CreditHours:
    """When credit may be granted. ``Mon-Fri 09:00-17:00 America/New_York`` is a weekly window."""

    text: str
    days: frozenset[int] = frozenset()
    start: time = time(0)
    end: time = time(0)
    zone: ZoneInfo | None = None
    always: bool = False
    never: bool = False

    @classmethod
    def parse(cls, text: str) -> CreditHours:
        cleaned = text.strip()
        if cleaned.lower() == "always":
            return cls("always", always=True)
        if cleaned.lower() == "never":
            return cls("never", never=True)
        match = _SCHEDULE_RE.match(cleaned)
        if not match:
            raise ValueError(
                f"credit hours must be 'always', 'never' or like "
                f"'Mon-Fri 09:00-17:00 America/New_York', got {text!r}"
            )
        first = _day_index(match["d1"])
        last = _day_index(match["d2"]) if match["d2"] else first
        days = {(first + i) % 7 for i in range((last - first) % 7 + 1)}
        start, end = _clock(match["t1"]), _clock(match["t2"])
        if end <= start:
            raise ValueError(f"credit hours end before they start: {text!r}")
        try:
            zone = ZoneInfo(match["tz"])
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone in credit hours: {match['tz']!r}") from None
        return cls(cleaned, frozenset(days), start, end, zone)

    def is_open(self, moment: datetime) -> bool:
        if self.always:
            return True
        if self.never or self.zone is None:
            return False
        local = moment.astimezone(self.zone)
        return local.weekday() in self.days and self.start <= local.time() < self.end


def _day_index(name: str) -> int:
    try:
        return _DAYS.index(name.lower())
    except ValueError:
        raise ValueError(f"unknown weekday {name!r}; use Mon, Tue, ... Sun") from None


def _clock(text: str) -> time:
    hours, minutes = (int(part) for part in text.split(":"))
    if hours > 23 or minutes > 59:
        raise ValueError(f"not a time of day: {text!r}")
    return time(hours, minutes)


@dataclass(frozen=True)
class SandboxConfig:
    """Everything a sandbox process is started with (see ``python -m app sandbox --help``)."""

    db_path: str = ":memory:"
    token_ttl: float = 86400.0
    quote_ttl: float = 10.0
    credit_hours: CreditHours = field(default_factory=lambda: CreditHours.parse("always"))
    seed: int = 1
    tick_seconds: float = 0.25
    #: Enables the test-only routes under /api/v1/sandbox/admin when set (header X-Sandbox-Admin).
    admin_token: str | None = None
    #: Failed logins of one user from one address within ``login_window`` seconds before 429.
    login_failures_allowed: int = 5
    #: Failed logins from one address (any users) within ``login_window`` seconds before 429.
    login_address_failures_allowed: int = 30
    login_window: float = 60.0
    #: Seconds a request's body may take to arrive after its headers before 408: a client that
    #: sends the headers and then withholds the body cannot hold a request open for ever.
    body_timeout: float = 5.0
    #: Seconds a connection may take to send a request's headers before it is closed.
    header_timeout: float = 10.0
    #: Seconds an idle keep-alive connection stays open: above every client's and proxy's own
    #: idle limit (60 s is common), so the server never closes a connection a client reuses.
    keep_alive: float = 75.0
