"""Log in again after "login expired": the feeds are halted and nothing polls until
the trader gives the password again. Same user, account and service as the session (shown, not
editable); the password is hashed by the client and not kept; a failure says why in the
dialog and keeps what was typed. Window-modal, opened with ``open()`` (the loop keeps running).
Asked for from the File menu at another time, it says why the trader might (or need not): the
login's real state, never "expired" while it holds.
"""

from __future__ import annotations

import html
import logging

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.services.connect import LoginFailed, throttle_words
from app.services.health import Health
from app.ui.bridge import SessionBridge
from app.ui.frame_clock import FrameClock
from app.ui.level_text import error_line, show_level
from app.ui.login_wait import LoginWait
from app.ui.tasks import TaskOwner

log = logging.getLogger("tradeterm.ui")


def reason_now(bridge: SessionBridge) -> str:
    """Why the trader would log in again, as it is now: the login expired; the service does
    not answer (logging in again will not help until it does); or the login still holds (the
    trader asked anyway)."""
    state = bridge.health_now
    if state.health is Health.AUTH_EXPIRED:
        return "The login expired: prices, balances and orders are not being read."
    if state.health is Health.OFFLINE:
        return (
            "The service does not answer, so nothing is being read; the login itself has not "
            "expired, and logging in again waits for the service to answer."
        )
    left = bridge.token_seconds_left
    remaining = "" if left is None else f" ({duration_words(left)} left on it)"
    return f"The login is still valid{remaining}: logging in again replaces it."


def duration_words(seconds: float) -> str:
    """``23 h 57 min``, ``4 min``, ``under a minute``."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "under a minute"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


class ReloginDialog(QDialog):
    loggedIn = Signal()

    def __init__(
        self,
        bridge: SessionBridge,
        parent: QWidget | None = None,
        *,
        frames: FrameClock | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("reloginDialog")
        self.setWindowTitle("Log in again")
        self._bridge = bridge
        self._tasks = TaskOwner(self)
        self.in_flight = False
        env = bridge.environment
        who = (
            f"as <b>{html.escape(env.user)}</b>, account <b>{html.escape(env.account)}</b>, on "
            f"{html.escape(env.label)}"
        )
        self.intro = intro = QLabel(f"{html.escape(reason_now(bridge))} Log in again {who}.", self)
        intro.setWordWrap(True)
        self.password_edit = QLineEdit(self)
        self.password_edit.setObjectName("reloginPassword")
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setAccessibleName("Password")
        self.error_label = error_line(self, "reloginError")
        self.buttons = QDialogButtonBox(self)
        self.login_button = self.buttons.addButton(
            "&Log in", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.login_button.setDefault(True)
        self.wait = LoginWait(
            self.error_label,
            self.login_button,
            lambda: show_level(self.error_label, throttle_words(0), "success"),
            frames,
        )
        self.buttons.accepted.connect(self.start_login)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&Password", self.password_edit)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.password_edit.setFocus()

    def start_login(self) -> None:
        """Log in / Enter: one attempt at a time, none while a throttle is counted down."""
        if self.in_flight or self.wait.waiting:
            return
        self.in_flight = True
        self.login_button.setEnabled(False)
        self.error_label.hide()
        self._tasks.spawn(self._login(self.password_edit.text()), "log in again")

    async def _login(self, password: str) -> None:
        try:
            await self._bridge.log_in_again(password)
        except LoginFailed as exc:
            self._failed(str(exc), exc.retry_after)
            return
        except Exception as exc:  # never a traceback for the trader; the log has it
            log.error("Logging in again failed unexpectedly", exc_info=exc)
            self._failed(f"The login did not work because of an unexpected error: {exc}.")
            return
        finally:
            self.in_flight = False
            self.login_button.setEnabled(not self.wait.waiting)
        self.loggedIn.emit()
        self.accept()

    def _failed(self, message: str, retry_after: float | None = None) -> None:
        show_level(self.error_label, message, "error")
        self.error_label.show()
        if retry_after is not None:
            self.wait.start(retry_after)  # counted down; Log in held until it ends
        self.password_edit.setFocus()
