"""The command line's own failure: the user asked for something that cannot be sent."""

from __future__ import annotations


class UsageError(Exception):
    """Bad or missing input found before any request (exit code 2)."""
