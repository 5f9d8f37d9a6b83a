"""Errors more than one service raises, kept apart from any one of them so that a feed, the
ledger browser and the positions service can all raise them (and the widgets catch them)
without one service importing another for its exception."""

from __future__ import annotations


class ReadFailed(Exception):
    """The service could not be read; the message says why, in words (for the trader)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
