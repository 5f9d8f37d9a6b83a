"""Retry delays for reads: exponential with full jitter, capped, honouring Retry-After."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """How a read (GET) is retried on network errors, 5xx and 429. Writes are never retried."""

    attempts: int = 4  # total tries, the first included
    base: float = 0.2  # seconds
    cap: float = 5.0  # longest jittered delay
    max_retry_after: float = 30.0  # longest Retry-After honoured; longer gives up at once

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float | None:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 1), or None to
        give up."""
        if attempt >= self.attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        return rng.uniform(0, min(self.cap, self.base * 2 ** (attempt - 1)))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds (HTTP dates are not used here)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return int(text)
    return None
