"""The status bar: can the data be trusted right now, and where am I connected.

Connection state with colour and a word (not colour alone), last request latency, age of the
freshest top-of-book data, server clock offset, token expiry countdown, a SANDBOX badge, and
the version; while the kill switch is on, "TRADING HALTED" and the reason in place of the clock
offset and token countdown (in the error colour, the words saying it too). Ages and
countdowns tick once a second from the application's frame clock (``app.ui.frame_clock``), and
the state's style is set only when it changes. Numbers are grouped (1,234 ms); the state's
tooltip gives the reason in words (no URL: the log has it). The state's colour (success,
warning, error) and the badge (the theme's background on its warning colour) come from the
palette in force and follow a theme switch.

Every label has a fixed width, measured once from the widest text it can show (``WIDEST``), so a
longer state ("✗ LOGIN EXPIRED" after "● LIVE") never widens the status bar and with it the
window (with widths that followed the text, the window grew 1600 → 1667 px when the
connection went offline).
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QStatusBar, QWidget

from app.domain.words import in_words
from app.services.health import Health, HealthState
from app.services.poller import FeedStatus
from app.services.risk import RiskState
from app.ui.bridge import SessionBridge
from app.ui.frame_clock import FrameClock, shared_frame_clock
from app.ui.palette import TradePalette, current_palette, follow_palette, level_colour

#: Each state's text and message level (its colour in the palette); others show as a warning.
STATE_STYLE = {
    Health.LIVE: ("● LIVE", "success"),
    Health.CONNECTING: ("● CONNECTING", "warning"),
    Health.DEGRADED: ("▲ DEGRADED", "warning"),
    Health.OFFLINE: ("✗ OFFLINE", "error"),
    Health.AUTH_EXPIRED: ("✗ LOGIN EXPIRED", "error"),
}


#: The widest text each label shows (a bold state; numbers with room for large values).
WIDEST = {
    "state": max((text for text, _ in STATE_STYLE.values()), key=len) + "  ",
    "latency": "99,999 ms",
    "age": "data 99,999.9 s",
    "offset": "clock +99,999 ms",
    "token": "token 999:59:59",
    # its height (its width is the offset's and the token's, whose room it takes when shown)
    "halted": "■ TRADING HALTED",
}
HALTED_TEXT = "■ TRADING HALTED"


def state_css(level: str, palette: TradePalette) -> str:
    colour = level_colour(level, palette) or palette.warning
    return f"QLabel {{ color:{colour.name()}; font-weight:bold; }}"


def badge_css(palette: TradePalette) -> str:
    """The SANDBOX badge: the theme's background on its warning colour (the same contrast as
    warning text on that background, so it reads in both themes)."""
    return (
        f"QLabel {{ background:{palette.warning.name()}; color:{palette.background.name()};"
        " font-weight:bold; border-radius:3px; }"
    )


def _label(parent: QWidget, name: str, tip: str) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setToolTip(tip)
    return label


class StatusBar(QStatusBar):
    #: The trader asked to log in again (the button shown while the login is expired).
    logInAgainRequested = Signal()

    def __init__(
        self,
        bridge: SessionBridge,
        version: str,
        parent: QWidget | None = None,
        *,
        frames: FrameClock | None = None,
    ) -> None:
        """``frames``: the frame clock (the application's by default)."""
        super().__init__(parent)
        self._shown_health: tuple[str, str] | None = None
        self._bridge = bridge
        self.state = _label(self, "state", "Connection state")
        self.latency = _label(self, "latency", "Duration of the last successful request")
        self.age = _label(self, "age", "Age of the latest top-of-book data")
        self.offset = _label(self, "offset", "Server clock minus local clock")
        self.token = _label(self, "token", "Time until the login token is renewed or expires")
        self.badge = _label(self, "sandbox", "Connected to the embedded sandbox: paper trading")
        self.log_in_again = QPushButton("Log in again…", self)
        self.log_in_again.setObjectName("logInAgain")
        self.log_in_again.setToolTip("The login expired and nothing is read until you log in")
        self.log_in_again.clicked.connect(self.logInAgainRequested.emit)
        policy = self.log_in_again.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # its room is kept: showing it widens nothing
        self.log_in_again.setSizePolicy(policy)
        self.log_in_again.hide()
        self.restart_sandbox = QPushButton("Restart sandbox", self)
        self.restart_sandbox.setObjectName("restartSandbox")
        self.restart_sandbox.setToolTip(
            "The embedded sandbox stopped: start it again on the same database"
        )
        if bridge.environment.sandbox:  # its room is kept: showing it widens nothing
            kept = self.restart_sandbox.sizePolicy()
            kept.setRetainSizeWhenHidden(True)
            self.restart_sandbox.setSizePolicy(kept)
        self.restart_sandbox.hide()
        self.halted = _label(self, "halted", "The kill switch is on: nothing is sent")
        self.halted.setProperty("level", "error")
        self.version = _label(self, "version", "Tradeterm version")
        self.version.setText(f"v{version}")
        if bridge.environment.sandbox:
            self.badge.setText(" SANDBOX ")
            self.badge.setStyleSheet(badge_css(current_palette()))
        else:
            self.badge.hide()
        for widget in (self.state, self.latency, self.age, self.offset, self.token):
            self.addWidget(widget)
            self._fix_width(widget)
        # Halted, it takes the room of the clock offset and the token countdown (hidden
        # meanwhile): the status bar, and with it the window, keeps its width.
        self._fix_width(self.halted)
        self.halted.setFixedWidth(self.offset.width() + self.token.width())
        self.halted.hide()
        self.addWidget(self.halted)
        self.addWidget(self.log_in_again)
        self.addWidget(self.restart_sandbox)
        self.addPermanentWidget(self.badge)
        self.addPermanentWidget(self.version)
        self._top: FeedStatus | None = None
        self.show_health(bridge.health_now)
        follow_palette(self.set_palette)
        bridge.health.connect(self.show_health)
        bridge.feedStatus.connect(self._feed)
        self._frames = frames if frames is not None else shared_frame_clock()
        self._tick_due = 0.0
        self._frames.listen(self._on_frame)
        self.tick()

    def _fix_width(self, label: QLabel) -> None:
        """One size for good, from the widest text the label can show (bold for the state)."""
        font = QFont(label.font())
        font.setBold(label in (self.state, self.halted))
        width = QFontMetrics(font).horizontalAdvance(WIDEST[label.objectName()]) + 8
        shown = label.text()
        label.setText(WIDEST[label.objectName()])
        height = label.sizeHint().height()
        label.setText(shown)
        # Fixed in both directions: Qt then skips the layout invalidation a new text causes, so
        # the age and latency ticking never relayout the window.
        label.setFixedSize(width, height)
        label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def show_health(self, state: HealthState) -> None:
        text, level = STATE_STYLE.get(state.health, (state.health.upper(), "warning"))
        if self._shown_health != (text, level):  # a style sheet set again re-polishes
            self._shown_health = (text, level)
            self.state.setText(text)
            self.state.setProperty("level", level)
            self.state.setStyleSheet(state_css(level, current_palette()))
        self.state.setToolTip(f"Connection {state.health}: {in_words(state.reason)}")
        if state.health in (Health.OFFLINE, Health.AUTH_EXPIRED):
            self.latency.setText("—")  # no last good latency while nothing answers
        self.log_in_again.setVisible(state.health == Health.AUTH_EXPIRED)

    def show_risk(self, state: RiskState) -> None:
        """The kill switch: "TRADING HALTED" and why (elided to the label; whole in the
        tooltip) in place of the clock offset and token countdown while it is on."""
        self.offset.setVisible(not state.halted)
        self.token.setVisible(not state.halted)
        if not state.halted:
            self.halted.hide()
            return
        full = f"{HALTED_TEXT}: {state.why}"
        metrics = QFontMetrics(self.halted.font())
        shown = metrics.elidedText(full, Qt.TextElideMode.ElideRight, self.halted.width() - 8)
        self.halted.setText(shown if shown.startswith(HALTED_TEXT) else HALTED_TEXT)
        self.halted.setToolTip(f"Trading is halted by the kill switch: {state.why}")
        self.halted.setStyleSheet(state_css("error", current_palette()))
        self.halted.show()

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the state and the badge in its colours."""
        self.state.setStyleSheet(state_css(str(self.state.property("level")), palette))
        if not self.halted.isHidden():
            self.halted.setStyleSheet(state_css("error", palette))
        if not self.badge.isHidden():
            self.badge.setStyleSheet(badge_css(palette))

    def _feed(self, status: FeedStatus) -> None:
        if status.last_latency is not None and status.failures == 0:
            self.latency.setText(f"{status.last_latency * 1000:,.0f} ms")
        if status.name == "top of book":
            self._top = status
            self.tick()

    def _on_frame(self, now: float) -> None:
        if now >= self._tick_due:
            self.tick()

    def tick(self) -> None:
        """The ages and countdowns (once a second, from the frame clock)."""
        self._tick_due = self._frames.now() + 1.0
        self._frames.request(1.0)
        age = self._top.age(time.monotonic()) if self._top else None
        self.age.setText("data —" if age is None else f"data {age:,.1f} s")
        offset_ms = self._bridge.clock_offset.total_seconds() * 1000
        self.offset.setText(f"clock {offset_ms:+,.0f} ms")
        left = self._bridge.token_seconds_left
        if left is None:
            self.token.setText("token —")
        else:
            hours, rest = divmod(int(max(0, left)), 3600)
            self.token.setText(f"token {hours:d}:{rest // 60:02d}:{rest % 60:02d}")
