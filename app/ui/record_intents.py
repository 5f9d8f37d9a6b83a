"""Asking another dock to show a record: a parent order's child in the Orders dock or the audit
trail. The asking panel names the dock and the words to search; the window brings the dock to
front and the dock puts the words in its search box (widgets never reach into each other)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class RecordIntents(QObject):
    """One per window, shared through the panels' context."""

    show = Signal(str, str)  # the dock's panel name, the words to search

    def show_in(self, panel: str, words: str) -> None:
        self.show.emit(panel, words)
