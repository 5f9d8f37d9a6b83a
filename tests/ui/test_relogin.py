"""Log in again after "login expired": the status bar offers it, the dialog asks only the
password, says why a login fails and keeps what was typed, and the feeds resume; asked for at
another time, it says the login's real state."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.services.health import Health
from app.ui.frame_clock import FrameClock
from app.ui.main_window import MainWindow
from app.ui.relogin_dialog import ReloginDialog
from tests.harness import Faults
from tests.helpers.live import Live

TRADING_PATHS = r"^/api/v1/(accounting|routing)/"  # everything but the login
WAIT_MS = 10_000


def test_an_expired_login_is_renewed_from_the_status_bar(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    window = MainWindow(live.context, [], "test")
    qtbot.addWidget(window)
    window.show()
    said: list[str] = []
    live.bridge.logEvent.connect(lambda event: said.append(event.message))
    button = window.status.log_in_again
    qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=WAIT_MS)
    assert button.isHidden()

    faults({"kind": "unauthorized", "path": TRADING_PATHS})  # the token is refused from now on
    qtbot.waitUntil(lambda: "LOGIN EXPIRED" in window.status.state.text(), timeout=WAIT_MS)
    assert button.isVisible()
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = window.relogin
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    assert live.account.user in dialog.intro.text() and live.account.account in dialog.intro.text()
    assert dialog.intro.text().startswith("The login expired")

    QTest.keyClicks(dialog.password_edit, "not the password")
    QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(dialog.error_label.isVisible, timeout=WAIT_MS)
    assert dialog.error_label.text() == "Wrong password."
    assert dialog.password_edit.text() == "not the password"  # kept, to correct
    assert live.session.health.current.health == Health.AUTH_EXPIRED  # still halted

    faults.clear()
    dialog.password_edit.clear()
    QTest.keyClicks(dialog.password_edit, live.account.password)
    QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=WAIT_MS)
    assert button.isHidden()
    assert any(line.startswith("logged in again as ") for line in said)


def test_asked_while_the_login_holds_the_dialog_says_so(qtbot: QtBot, live: Live) -> None:
    """File > Log in again with the token good for hours: not "The login expired"."""
    window = MainWindow(live.context, [], "test")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "LIVE" in window.status.state.text(), timeout=WAIT_MS)
    dialog = window.log_in_again()
    text = dialog.intro.text()
    assert text.startswith("The login is still valid (23 h ") and "expired" not in text
    dialog.reject()


def test_offline_the_dialog_says_the_service_does_not_answer(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    window = MainWindow(live.context, [], "test")
    qtbot.addWidget(window)
    window.show()
    faults({"kind": "status", "status": 503, "path": TRADING_PATHS})
    qtbot.waitUntil(lambda: "OFFLINE" in window.status.state.text(), timeout=WAIT_MS)
    dialog = window.log_in_again()
    assert dialog.intro.text().startswith("The service does not answer")
    assert "has not expired" in dialog.intro.text()
    dialog.reject()


def test_a_throttled_login_again_counts_down(qtbot: QtBot, live: Live, faults: Faults) -> None:
    now = [50.0]
    frames = FrameClock(clock=lambda: now[0])
    dialog = ReloginDialog(live.bridge, frames=frames)
    qtbot.addWidget(dialog)
    dialog.show()
    faults({"kind": "retry_after", "retryAfter": 2, "path": r"^/api/v1/identity/jwt$"})
    QTest.keyClicks(dialog.password_edit, live.account.password)
    QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(dialog.error_label.isVisible, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not dialog.in_flight, timeout=WAIT_MS)
    assert dialog.error_label.text() == "Too many logins: try again in 2 s."
    assert not dialog.login_button.isEnabled()
    now[0] = 51.2
    frames.frame()
    assert dialog.error_label.text() == "Too many logins: try again in 1 s."
    faults.clear()
    now[0] = 52.0
    frames.frame()
    assert dialog.error_label.text() == "You can log in again now."
    assert dialog.login_button.isEnabled()
    assert dialog.password_edit.text() == live.account.password  # kept
    QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: dialog.result() == dialog.DialogCode.Accepted, timeout=WAIT_MS)
