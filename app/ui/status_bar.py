"""The status bar: can the data be trusted right now, and where am I connected.

Connection state with colour and a word (not colour alone), last request latency, age of the
freshest top-of-book data, server clock offset, token expiry countdown, a SANDBOX badge, and
the version. Ages and countdowns tick once a second from one timer.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from app.services.health import Health, HealthState
from app.services.poller import FeedStatus
from app.ui.bridge import SessionBridge

STATE_STYLE = {
    Health.LIVE: ("● LIVE", "#2ea043"),
    Health.CONNECTING: ("● CONNECTING", "#d4a72c"),
    Health.DEGRADED: ("▲ DEGRADED", "#d4a72c"),
    Health.OFFLINE: ("✖ OFFLINE", "#e5534b"),
    Health.AUTH_EXPIRED: ("✖ LOGIN EXPIRED", "#e5534b"),
}


def _label(parent: QWidget, name: str, tip: str) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setToolTip(tip)
    return label


class StatusBar(QStatusBar):
    def __init__(self, bridge: SessionBridge, version: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        session = bridge.session
        self.state = _label(self, "state", "Connection state")
        self.latency = _label(self, "latency", "Duration of the last successful request")
        self.age = _label(self, "age", "Age of the latest top-of-book data")
        self.offset = _label(self, "offset", "Server clock minus local clock")
        self.token = _label(self, "token", "Time until the login token is renewed or expires")
        self.badge = _label(self, "sandbox", "Connected to the embedded sandbox: paper trading")
        self.version = _label(self, "version", "Tradeterm version")
        self.version.setText(f"v{version}")
        if session.environment.sandbox:
            self.badge.setText(" SANDBOX ")
            self.badge.setStyleSheet(
                "QLabel { background:#d4a72c; color:#000; font-weight:bold; border-radius:3px; }"
            )
        else:
            self.badge.hide()
        for widget in (self.state, self.latency, self.age, self.offset, self.token):
            self.addWidget(widget)
        self.addPermanentWidget(self.badge)
        self.addPermanentWidget(self.version)
        self._top: FeedStatus | None = None
        self.show_health(session.health.current)
        bridge.health.connect(self.show_health)
        bridge.feedStatus.connect(self._feed)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.tick)
        self._timer.start()
        self.tick()

    def show_health(self, state: HealthState) -> None:
        text, colour = STATE_STYLE.get(state.health, (state.health.upper(), "#d4a72c"))
        self.state.setText(text)
        self.state.setStyleSheet(f"QLabel {{ color:{colour}; font-weight:bold; }}")
        self.state.setToolTip(f"Connection {state.health}: {state.reason}")

    def _feed(self, status: FeedStatus) -> None:
        if status.last_latency is not None and status.failures == 0:
            self.latency.setText(f"{status.last_latency * 1000:.0f} ms")
        if status.name == "top of book":
            self._top = status
            self.tick()

    def tick(self) -> None:
        session = self._bridge.session
        age = self._top.age(time.monotonic()) if self._top else None
        self.age.setText("data —" if age is None else f"data {age:.1f} s")
        clock = session.client.clock
        offset_ms = clock.offset.total_seconds() * 1000
        self.offset.setText(f"clock {offset_ms:+.0f} ms")
        left = session.client.token_seconds_left
        if left is None:
            self.token.setText("token —")
        else:
            hours, rest = divmod(int(max(0, left)), 3600)
            self.token.setText(f"token {hours:d}:{rest // 60:02d}:{rest % 60:02d}")
