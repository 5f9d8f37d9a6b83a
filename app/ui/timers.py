"""``make_timer``: the one place a dock or view sets up a ``QTimer`` it owns."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def make_timer(
    parent: QObject,
    interval_ms: int,
    slot: Callable[[], object],
    *,
    single_shot: bool = False,
    name: str = "",
) -> QTimer:
    """A timer owned by ``parent`` calling ``slot`` (not started): the set-up every dock repeats."""
    timer = QTimer(parent)
    if name:
        timer.setObjectName(name)
    timer.setSingleShot(single_shot)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer
