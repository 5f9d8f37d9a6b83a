"""A login throttle counted down where the trader reads it: "Too many logins: try again in 24 s"
becomes 23, 22 … and then "You can log in again now", with Log in held until then.

Why: the service says how long to wait once (Retry-After); a number frozen in the dialog leaves
the trader guessing, and a Log in pressed early only extends the throttle. The count is from a
monotonic deadline, redrawn once a second from the shared frame clock (no timer of its own).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtWidgets import QAbstractButton, QLabel

from app.services.connect import throttle_words
from app.ui.frame_clock import FrameClock, shared_frame_clock


class LoginWait:
    """Counts one throttle down in ``label``; ``button`` stays disabled until it ends, and
    ``ended`` is called once it has (the dialog restyles its line)."""

    def __init__(
        self,
        label: QLabel,
        button: QAbstractButton,
        ended: Callable[[], None],
        frames: FrameClock | None = None,
    ) -> None:
        self._label = label
        self._button = button
        self._ended = ended
        self._frames = frames or shared_frame_clock()
        self._deadline: float | None = None
        self._shown = ""
        self._frames.listen(self._on_frame)

    @property
    def waiting(self) -> bool:
        """A throttle is being counted down (a login now would be refused)."""
        return self._deadline is not None

    def start(self, seconds: float) -> None:
        self._deadline = self._frames.now() + max(0.0, seconds)
        self._button.setEnabled(False)
        self._show(self._frames.now())

    def stop(self) -> None:
        self._deadline = None

    def _on_frame(self, now: float) -> None:
        if self._deadline is not None:
            self._show(now)

    def _show(self, now: float) -> None:
        assert self._deadline is not None
        left = self._deadline - now
        text = throttle_words(left)
        if text != self._shown:
            self._shown = text
            self._label.setText(text)
        if left <= 0:
            self._deadline = None
            self._button.setEnabled(True)
            self._ended()
            return
        # the next whole second of the count (a frame a hair late shows the same number)
        self._frames.request(left - (math.ceil(left) - 1))
