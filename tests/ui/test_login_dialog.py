"""The login dialog against a real sandbox over loopback: success, failures in plain words,
remembered values (never the password in the settings), the keyring, and one login at a time."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import types
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import SIGNAL, QSettings, Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from app.services.session import TerminalSession
from app.services.terminal import Terminal
from app.ui import login_dialog
from app.ui.frame_clock import FrameClock
from app.ui.login_dialog import LoginDialog, ask_login, error_css
from app.ui.qt import QEventLoop
from app.ui.secrets import SERVICE_NAME, system_keyring
from app.ui.theme import apply_theme, trade_palette
from tests.harness import Faults, SandboxProcess, add_client, digest
from tests.helpers.qt import run

LOGIN_TIMEOUT_MS = 15_000


@dataclass(frozen=True)
class Trader:
    user: str
    password: str
    account: str


@pytest.fixture
def trader(sandbox: SandboxProcess) -> Trader:
    """A fresh user whose password differs from its name and account (so "absent" means it)."""
    name = f"ui-{uuid.uuid4().hex[:8]}"
    trader = Trader(name, f"pw-{uuid.uuid4().hex}", f"acct-{name}")
    add_client(sandbox, trader.user, trader.password, {"USD": "1000"}, {})
    return trader


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the optional ``keyring`` package were not installed (import raises ImportError)."""
    monkeypatch.setitem(sys.modules, "keyring", None)


class MemoryKeyring:
    """A keyring in a dict: proves where the password goes, and that it goes nowhere else."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service_name: str, username: str) -> str | None:
        return self.entries.get((service_name, username))

    def set_password(self, service_name: str, username: str, password: str) -> None:
        self.entries[(service_name, username)] = password

    def delete_password(self, service_name: str, username: str) -> None:
        del self.entries[(service_name, username)]


@pytest.fixture
def make_dialog(qtbot: QtBot, qloop: QEventLoop, settings: QSettings) -> Callable[..., LoginDialog]:
    def make(**kwargs: Any) -> LoginDialog:
        dialog = LoginDialog(settings, **kwargs)
        qtbot.addWidget(dialog)
        dialog.open()
        return dialog

    return make


def fill(dialog: LoginDialog, url: str, user: str, password: str, account: str) -> None:
    dialog.environment_combo.setCurrentIndex(dialog.environment_combo.findData("service"))
    dialog.url_edit.setText(url)
    dialog.user_edit.setText(user)
    dialog.password_edit.setText(password)
    dialog.account_edit.setText(account)


def log_in(qtbot: QtBot, dialog: LoginDialog) -> Terminal:
    with qtbot.waitSignal(dialog.loggedIn, timeout=LOGIN_TIMEOUT_MS) as signal:
        QTest.mouseClick(dialog.login_button, Qt.MouseButton.LeftButton)
    terminal = signal.args[0]
    assert isinstance(terminal, Terminal)
    assert isinstance(terminal.session, TerminalSession)
    return terminal


def fail(qtbot: QtBot, dialog: LoginDialog) -> str:
    """Press Log in, wait for the attempt to end, return the message shown in the dialog."""
    QTest.mouseClick(dialog.login_button, Qt.MouseButton.LeftButton)
    assert dialog.login_in_flight
    assert not dialog.login_button.isEnabled()
    assert dialog.busy_row.isVisible()
    qtbot.waitUntil(lambda: not dialog.login_in_flight, timeout=LOGIN_TIMEOUT_MS)
    assert dialog.isVisible()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.login_button.isEnabled()
    assert not dialog.busy_row.isVisible()
    assert dialog.error_label.isVisible()
    return dialog.error_label.text()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def settings_text(settings: QSettings) -> str:
    settings.sync()
    return Path(settings.fileName()).read_text(encoding="utf-8")


def values(dialog: LoginDialog) -> tuple[str, str, str, str]:
    return (
        dialog.url_edit.text(),
        dialog.user_edit.text(),
        dialog.password_edit.text(),
        dialog.account_edit.text(),
    )


# -- success ------------------------------------------------------------------------------------


def test_login_emits_the_session_and_closes(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    assert [
        dialog.environment_combo.itemText(i) for i in range(dialog.environment_combo.count())
    ] == ["Service URL"]
    assert dialog.password_edit.echoMode() == QLineEdit.EchoMode.Password
    fill(dialog, sandbox.url, "demo", "demo", "demo")
    asked = asyncio.get_event_loop().create_task(ask_login(dialog))
    terminal = log_in(qtbot, dialog)
    session = terminal.session
    qtbot.waitUntil(asked.done)
    assert asked.result() is terminal
    assert session.environment.account == "demo"
    assert session.environment.user == "demo"
    assert session.environment.base_url == sandbox.url
    assert not session.environment.sandbox
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert not dialog.isVisible()
    run(qtbot, terminal.aclose())


def test_embedded_sandbox_prefills_demo_and_enter_logs_in(
    qtbot: QtBot,
    make_dialog: Callable[..., LoginDialog],
    sandbox: SandboxProcess,
    settings: QSettings,
) -> None:
    dialog = make_dialog(sandbox_url=sandbox.url, keyring=MemoryKeyring())
    assert dialog.environment_combo.currentText() == "Embedded sandbox"
    assert values(dialog) == (sandbox.url, "demo", "demo", "demo")
    assert dialog.url_edit.isReadOnly()
    assert not dialog.remember_box.isEnabled()
    # The service choice keeps its own values; coming back gives demo again.
    fill(dialog, "https://trading.example", "alice", "secret", "acct-1")
    dialog.environment_combo.setCurrentIndex(dialog.environment_combo.findData("sandbox"))
    assert values(dialog) == (sandbox.url, "demo", "demo", "demo")
    dialog.environment_combo.setCurrentIndex(dialog.environment_combo.findData("service"))
    assert values(dialog) == ("https://trading.example", "alice", "secret", "acct-1")
    assert not dialog.url_edit.isReadOnly()
    dialog.environment_combo.setCurrentIndex(dialog.environment_combo.findData("sandbox"))

    with qtbot.waitSignal(dialog.loggedIn, timeout=LOGIN_TIMEOUT_MS) as signal:
        QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
    terminal: Terminal = signal.args[0]
    session = terminal.session
    assert session.environment.sandbox
    assert session.environment.account == "demo"
    run(qtbot, terminal.aclose())
    # The sandbox's throwaway URL and demo login do not replace the trader's own values.
    assert settings.value("login/environment") == "sandbox"
    assert settings.value("login/user") is None
    assert settings.value("login/base_url") is None


# -- failures in plain words ----------------------------------------------------------------------


def test_wrong_password_is_said_and_everything_is_kept(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess, trader: Trader
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    fill(dialog, sandbox.url, trader.user, "not-the-password", trader.account)
    message = fail(qtbot, dialog)
    assert "Wrong user or password" in message
    assert values(dialog) == (sandbox.url, trader.user, "not-the-password", trader.account)
    assert dialog.focusWidget() is dialog.password_edit
    # The same dialog then logs in once the password is corrected.
    dialog.password_edit.setText(trader.password)
    terminal = log_in(qtbot, dialog)
    assert terminal.session.environment.account == trader.account
    run(qtbot, terminal.aclose())


def test_a_login_throttle_counts_down_and_holds_log_in_until_it_ends(
    qtbot: QtBot, qloop: QEventLoop, settings: QSettings, sandbox: SandboxProcess, trader: Trader
) -> None:
    now = [100.0]
    frames = FrameClock(clock=lambda: now[0])
    dialog = LoginDialog(settings, keyring=MemoryKeyring(), frames=frames)
    qtbot.addWidget(dialog)
    dialog.open()
    fill(dialog, sandbox.url, trader.user, trader.password, trader.account)
    faults = Faults(sandbox)
    faults({"kind": "retry_after", "retryAfter": 3, "path": r"^/api/v1/identity/jwt$"})
    try:
        QTest.mouseClick(dialog.login_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.login_in_flight, timeout=LOGIN_TIMEOUT_MS)
    finally:
        faults.clear()
    assert dialog.error_label.text() == "Too many logins: try again in 3 s."
    assert not dialog.login_button.isEnabled()
    QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)  # Enter during the wait: no login
    assert not dialog.login_in_flight
    seen = []
    for moment in (100.5, 101.0, 102.0, 102.9):
        now[0] = moment
        frames.frame()
        seen.append(dialog.error_label.text())
    assert seen == [
        "Too many logins: try again in 3 s.",
        "Too many logins: try again in 2 s.",
        "Too many logins: try again in 1 s.",
        "Too many logins: try again in 1 s.",
    ]
    assert not dialog.login_button.isEnabled()
    now[0] = 103.0
    frames.frame()
    assert dialog.error_label.text() == "You can log in again now."
    assert dialog.login_button.isEnabled()
    assert values(dialog) == (sandbox.url, trader.user, trader.password, trader.account)
    terminal = log_in(qtbot, dialog)  # and the same values log in
    run(qtbot, terminal.aclose())


def test_unreachable_server(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], trader: Trader
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    url = f"http://127.0.0.1:{closed_port()}"
    fill(dialog, url, trader.user, trader.password, trader.account)
    message = fail(qtbot, dialog)
    assert message.startswith(f"Cannot reach {url}")
    assert "Traceback" not in message
    assert values(dialog) == (url, trader.user, trader.password, trader.account)
    assert dialog.focusWidget() is dialog.url_edit


def test_tls_to_a_plain_http_port(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess, trader: Trader
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    url = sandbox.url.replace("http://", "https://")
    assert url.startswith("https://")
    fill(dialog, url, trader.user, trader.password, trader.account)
    message = fail(qtbot, dialog)
    assert "Secure connection" in message and "TLS" in message
    assert dialog.focusWidget() is dialog.url_edit


def test_unknown_account(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess, trader: Trader
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    fill(dialog, sandbox.url, trader.user, trader.password, "no-such-account")
    message = fail(qtbot, dialog)
    assert "Account no-such-account does not exist" in message
    assert dialog.account_edit.text() == "no-such-account"
    assert dialog.focusWidget() is dialog.account_edit


def test_missing_field_points_at_it(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    fill(dialog, sandbox.url, "", "x", "demo")
    assert fail(qtbot, dialog) == "Enter the user."
    assert dialog.focusWidget() is dialog.user_edit


def test_the_error_box_is_in_the_theme_in_force_when_shown(
    qtbot: QtBot,
    make_dialog: Callable[..., LoginDialog],
    sandbox: SandboxProcess,
    app: QApplication,
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())  # built in the dark theme
    apply_theme(app, "light")
    fill(dialog, sandbox.url, "", "x", "demo")
    assert fail(qtbot, dialog) == "Enter the user."
    light = trade_palette("light")
    assert dialog.error_label.styleSheet() == error_css(light)
    dialog.error_label.ensurePolished()
    assert dialog.error_label.palette().color(QPalette.ColorRole.WindowText) == light.error


def test_unexpected_error_is_readable_and_logged_without_the_password(
    qtbot: QtBot,
    make_dialog: Callable[..., LoginDialog],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(*args: object, **kwargs: object) -> Terminal:
        raise RuntimeError("the session could not be built")

    monkeypatch.setattr(login_dialog, "connect", broken)
    dialog = make_dialog(keyring=MemoryKeyring())
    fill(dialog, "http://127.0.0.1:9", "alice", "hunter2-secret", "acct-1")
    with caplog.at_level(logging.DEBUG):
        message = fail(qtbot, dialog)
    assert "the session could not be built" in message
    assert "Traceback" not in message and "RuntimeError" not in message
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors and errors[0].exc_info is not None
    assert "hunter2-secret" not in caplog.text


# -- remembering ------------------------------------------------------------------------------


def test_remembers_user_url_account_but_never_the_password(
    qtbot: QtBot,
    make_dialog: Callable[..., LoginDialog],
    sandbox: SandboxProcess,
    settings: QSettings,
    trader: Trader,
    no_keyring: None,
) -> None:
    dialog = make_dialog()
    fill(dialog, sandbox.url, trader.user, trader.password, trader.account)
    run(qtbot, log_in(qtbot, dialog).client.aclose())

    again = make_dialog()
    assert again.environment_combo.currentData() == "service"
    assert values(again) == (sandbox.url, trader.user, "", trader.account)
    assert again.focusWidget() is again.password_edit
    text = settings_text(settings)
    assert trader.user in text and trader.account in text
    assert trader.password not in text
    assert digest(trader.password) not in text


def test_remember_is_disabled_without_keyring(
    make_dialog: Callable[..., LoginDialog], no_keyring: None
) -> None:
    dialog = make_dialog()
    assert not dialog.keyring_available
    assert not dialog.remember_box.isEnabled()
    assert not dialog.remember_box.isChecked()
    assert "keyring" in dialog.remember_box.toolTip()
    assert "not installed" in dialog.remember_box.toolTip()


@pytest.fixture
def fake_keyring_package(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A stand-in ``keyring`` package with its fail/null/chainer backend classes."""
    package = types.ModuleType("keyring")
    backends = types.ModuleType("keyring.backends")
    modules = {"keyring": package, "keyring.backends": backends}
    for name, cls_name in (("fail", "Keyring"), ("null", "Keyring"), ("chainer", "ChainerBackend")):
        module = types.ModuleType(f"keyring.backends.{name}")
        setattr(module, cls_name, type(cls_name, (), {"backends": ()}))
        modules[module.__name__] = module
        setattr(backends, name, module)
    memory = MemoryKeyring()
    package.get_password = memory.get_password  # type: ignore[attr-defined]
    package.set_password = memory.set_password  # type: ignore[attr-defined]
    package.delete_password = memory.delete_password  # type: ignore[attr-defined]
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return package


@pytest.mark.parametrize(
    ("backend", "why"),
    [
        ("fail.Keyring", "no usable backend"),
        ("null.Keyring", "switched off"),
        ("chainer.ChainerBackend", "no usable backend"),
    ],
)
def test_keyring_without_a_backend_disables_remember(
    make_dialog: Callable[..., LoginDialog],
    fake_keyring_package: types.ModuleType,
    backend: str,
    why: str,
) -> None:
    module_name, cls_name = backend.split(".")
    cls = getattr(sys.modules[f"keyring.backends.{module_name}"], cls_name)
    fake_keyring_package.get_keyring = cls  # type: ignore[attr-defined]
    assert system_keyring().store is None
    dialog = make_dialog()
    assert not dialog.remember_box.isEnabled()
    assert why in dialog.remember_box.toolTip()


def test_keyring_with_a_backend_is_used(
    make_dialog: Callable[..., LoginDialog], fake_keyring_package: types.ModuleType
) -> None:
    class Backend:
        backends = ("one",)

    fake_keyring_package.get_keyring = Backend  # type: ignore[attr-defined]
    assert system_keyring().store is fake_keyring_package
    dialog = make_dialog()
    assert dialog.keyring_available
    assert dialog.remember_box.isEnabled()


def test_remembered_password_goes_only_to_the_keyring(
    qtbot: QtBot,
    make_dialog: Callable[..., LoginDialog],
    sandbox: SandboxProcess,
    settings: QSettings,
    trader: Trader,
) -> None:
    keyring = MemoryKeyring()
    dialog = make_dialog(keyring=keyring)
    assert dialog.remember_box.isEnabled()
    fill(dialog, sandbox.url, trader.user, trader.password, trader.account)
    dialog.remember_box.setChecked(True)
    run(qtbot, log_in(qtbot, dialog).client.aclose())
    assert keyring.entries == {(SERVICE_NAME, f"{trader.user}@{sandbox.url}"): trader.password}
    text = settings_text(settings)
    assert trader.password not in text and digest(trader.password) not in text

    again = make_dialog(keyring=keyring)
    qtbot.waitUntil(lambda: again.password_edit.text() == trader.password)
    assert again.remember_box.isChecked()
    # Unticking forgets it at the next successful login.
    again.remember_box.setChecked(False)
    run(qtbot, log_in(qtbot, again).client.aclose())
    assert keyring.entries == {}


# -- one login at a time --------------------------------------------------------------------------


def test_double_enter_starts_one_login(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess, trader: Trader
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    fill(dialog, sandbox.url, trader.user, trader.password, trader.account)
    before = sandbox.logins(trader.user)
    emitted: list[object] = []
    dialog.loggedIn.connect(emitted.append)
    with qtbot.waitSignal(dialog.loggedIn, timeout=LOGIN_TIMEOUT_MS):
        QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
        assert dialog.login_in_flight
        assert not dialog.login_button.isEnabled()
        QTest.keyClick(dialog.password_edit, Qt.Key.Key_Return)
        dialog.start_login()  # even a direct second call is ignored
        assert [t.get_name() for t in asyncio.all_tasks()].count("log in") == 1
    qtbot.waitUntil(lambda: "log in" not in [t.get_name() for t in asyncio.all_tasks()])
    assert len(emitted) == 1
    assert sandbox.logins(trader.user) == before + 1
    terminal = emitted[0]
    assert isinstance(terminal, Terminal)
    run(qtbot, terminal.aclose())


def test_cancel_during_login_stops_it(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    fill(dialog, sandbox.url, "demo", "demo", "demo")
    emitted: list[object] = []
    dialog.loggedIn.connect(emitted.append)
    rejected = SIGNAL("rejected()")
    listeners = dialog.receivers(rejected)
    asked = asyncio.get_event_loop().create_task(ask_login(dialog))
    qtbot.waitUntil(lambda: dialog.receivers(rejected) > listeners)  # ask_login is waiting
    QTest.mouseClick(dialog.login_button, Qt.MouseButton.LeftButton)
    assert dialog.login_in_flight
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(asked.done)
    assert asked.result() is None
    assert not dialog.isVisible()
    assert dialog.result() == QDialog.DialogCode.Rejected
    qtbot.waitUntil(lambda: "log in" not in [t.get_name() for t in asyncio.all_tasks()])
    assert emitted == []


# -- Enter logs in, from anywhere -----------------------------------------------------------------


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None
    return widget


def press_enter(qtbot: QtBot, dialog: LoginDialog) -> None:
    """Enter, delivered as Qt delivers a typed key: to the widget that has the focus."""
    assert focused().window() is dialog
    QTest.keyClick(focused(), Qt.Key.Key_Return)


def activate(qtbot: QtBot, dialog: LoginDialog) -> None:
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)


def assert_log_in_is_default(dialog: LoginDialog) -> None:
    assert dialog.login_button.isDefault()
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).isDefault()


def test_enter_after_clicking_a_field_logs_in_not_cancel(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess
) -> None:
    """The trader's report: the sandbox dialog opens with Log in focused; a click into Password
    and Enter closed the dialog (Cancel had become the default) without logging in."""
    dialog = make_dialog(sandbox_url=sandbox.url, keyring=MemoryKeyring())
    activate(qtbot, dialog)
    assert QApplication.focusWidget() is dialog.login_button
    QTest.mouseClick(dialog.password_edit, Qt.MouseButton.LeftButton)
    assert QApplication.focusWidget() is dialog.password_edit
    assert_log_in_is_default(dialog)
    before = sandbox.logins("demo")
    with qtbot.waitSignal(dialog.loggedIn, timeout=LOGIN_TIMEOUT_MS) as signal:
        press_enter(qtbot, dialog)
        assert dialog.login_in_flight
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert sandbox.logins("demo") == before + 1
    run(qtbot, signal.args[0].client.aclose())


FIELDS = ("url", "user", "password", "account", "environment", "alt+p")


def focus_field(dialog: LoginDialog, field: str) -> QWidget:
    """Put the cursor in ``field`` as a trader does: a click, or the label's Alt shortcut
    (the environment choice by Alt+E: a click would open its list)."""
    if field == "environment":
        QTest.keyClick(focused(), Qt.Key.Key_E, Qt.KeyboardModifier.AltModifier)
        return dialog.environment_combo
    if field == "alt+p":
        QTest.keyClick(focused(), Qt.Key.Key_P, Qt.KeyboardModifier.AltModifier)
        return dialog.password_edit
    edit: QLineEdit = getattr(dialog, f"{field}_edit")
    QTest.mouseClick(edit, Qt.MouseButton.LeftButton)
    return edit


@pytest.mark.slow
@pytest.mark.parametrize("field", FIELDS)
def test_enter_in_any_field_after_a_failed_login_logs_in(
    qtbot: QtBot,
    make_dialog: Callable[..., LoginDialog],
    sandbox: SandboxProcess,
    trader: Trader,
    field: str,
) -> None:
    dialog = make_dialog(keyring=MemoryKeyring())
    activate(qtbot, dialog)
    fill(dialog, sandbox.url, trader.user, "not-the-password", trader.account)
    # One failed login by Enter (focus, the busy state and the failure all move things).
    QTest.mouseClick(dialog.password_edit, Qt.MouseButton.LeftButton)
    press_enter(qtbot, dialog)
    assert dialog.login_in_flight
    qtbot.waitUntil(lambda: not dialog.login_in_flight, timeout=LOGIN_TIMEOUT_MS)
    assert dialog.isVisible() and "Wrong user or password" in dialog.error_label.text()
    assert_log_in_is_default(dialog)

    dialog.password_edit.setText(trader.password)
    widget = focus_field(dialog, field)
    assert QApplication.focusWidget() is widget
    assert_log_in_is_default(dialog)
    before = sandbox.logins(trader.user)
    with qtbot.waitSignal(dialog.loggedIn, timeout=LOGIN_TIMEOUT_MS) as signal:
        press_enter(qtbot, dialog)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert sandbox.logins(trader.user) == before + 1
    run(qtbot, signal.args[0].client.aclose())


def test_escape_cancels_from_a_field(
    qtbot: QtBot, make_dialog: Callable[..., LoginDialog], sandbox: SandboxProcess
) -> None:
    dialog = make_dialog(sandbox_url=sandbox.url, keyring=MemoryKeyring())
    activate(qtbot, dialog)
    QTest.mouseClick(dialog.user_edit, Qt.MouseButton.LeftButton)
    before = sandbox.logins("demo")
    QTest.keyClick(focused(), Qt.Key.Key_Escape)
    assert not dialog.isVisible()
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert not dialog.login_in_flight
    assert sandbox.logins("demo") == before
