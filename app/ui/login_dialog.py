"""The login dialog: where to connect, who logs in, and why it did not work, in plain words.

Opened with ``open()`` (never ``exec()``); ``ask_login`` awaits it. "Log in" runs
``app.services.connect.connect`` as a task owned by the dialog, which stays open while it runs
and after a failure (with every value kept). Enter logs in from any field, at any time, and
"Log in" is always the default button; Escape cancels. User, service URL and account are
remembered in the settings; the password only in the OS keyring, and only when the trader asks
for it. The error box takes the colours of the theme in force each time it is shown (the dialog
is modal: no theme switch happens while it is open).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services.connect import LoginFailed, connect, throttle_words
from app.services.terminal import Terminal
from app.ui.frame_clock import FrameClock
from app.ui.level_text import show_level
from app.ui.login_wait import LoginWait
from app.ui.notices import notice_colours
from app.ui.palette import TradePalette, current_palette
from app.ui.preferences import Preferences
from app.ui.secrets import KeyringLike, PasswordVault, system_keyring
from app.ui.tasks import TaskOwner

log = logging.getLogger("tradeterm.ui.login")

SANDBOX = "sandbox"
SERVICE = "service"
KEY_USER = "login/user"
KEY_BASE_URL = "login/base_url"
KEY_ACCOUNT = "login/account"
KEY_ENVIRONMENT = "login/environment"
DEMO = "demo"


def error_css(palette: TradePalette) -> str:
    """The error box: error-coloured text and frame on the theme's background tinted with the
    error colour (a notice's tint, on which the error colour reads at 5:1 in both themes)."""
    background, _, border = notice_colours("error", palette)
    return (
        f"QLabel {{ color: {palette.error.name()}; background: {background.name()};"
        f" border: 1px solid {border.name()}; border-radius: 3px; padding: 4px; }}"
    )


@dataclass(frozen=True)
class _Entered:
    """The values of one login attempt, read once when it starts."""

    environment: str
    base_url: str
    user: str
    password: str
    account: str
    remember: bool


@dataclass(frozen=True)
class _Kept:
    """What the trader typed for the service, kept while the sandbox is chosen."""

    base_url: str
    user: str
    password: str
    account: str
    remember: bool


def _text(settings: QSettings, key: str) -> str:
    value: Any = settings.value(key, "")
    return value if isinstance(value, str) else ""


class LoginDialog(QDialog):
    loggedIn = Signal(object)  # Terminal

    def __init__(
        self,
        settings: QSettings,
        parent: QWidget | None = None,
        *,
        sandbox_url: str | None = None,
        keyring: KeyringLike | None = None,
        frames: FrameClock | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Log in to Tradeterm")
        self._settings = settings
        self._sandbox_url = sandbox_url
        self._tasks = TaskOwner(self)
        self._login_task: asyncio.Task[None] | None = None
        self._service_values = _Kept("", "", "", "", remember=False)
        if keyring is not None:
            self._vault: PasswordVault | None = PasswordVault(keyring)
            self._no_keyring_reason = ""
        else:
            status = system_keyring()
            self._vault = PasswordVault(status.store) if status.store is not None else None
            self._no_keyring_reason = status.reason
        if not Preferences.load(settings).remember_password_allowed:
            self._vault = None
            self._no_keyring_reason = "Remembering passwords is switched off in Settings."

        self.environment_combo = QComboBox()
        if sandbox_url:
            self.environment_combo.addItem("Embedded sandbox", SANDBOX)
        self.environment_combo.addItem("Service URL", SERVICE)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("https://host or http://host:port")
        self.user_edit = QLineEdit()
        self.password_edit = QLineEdit()
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.account_edit = QLineEdit()
        self.remember_box = QCheckBox("Remember password (in the OS keyring)")
        self.error_label = QLabel()
        self.error_label.setObjectName("loginError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(error_css(current_palette()))
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)  # indeterminate
        self.busy_bar.setTextVisible(False)
        self.busy_bar.setMaximumHeight(8)
        self.busy_label = QLabel("Logging in…")
        self.busy_row = QWidget()
        busy_layout = QHBoxLayout(self.busy_row)
        busy_layout.setContentsMargins(0, 0, 0, 0)
        busy_layout.addWidget(self.busy_label)
        busy_layout.addWidget(self.busy_bar, 1)
        self.busy_row.hide()

        self.login_button = QPushButton("Log in")
        self.buttons = QDialogButtonBox()
        self.buttons.addButton(self.login_button, QDialogButtonBox.ButtonRole.AcceptRole)
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        assert cancel is not None
        self.cancel_button: QPushButton = cancel
        # No button takes "default" from focus: a focused (or focus-inheriting) Cancel became
        # the default, and Enter closed the dialog. Enter is ours: keyPressEvent.
        for button in (self.login_button, self.cancel_button):
            button.setAutoDefault(False)
        self.buttons.accepted.connect(self.start_login)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("&Environment", self.environment_combo)
        form.addRow("Service &URL", self.url_edit)
        form.addRow("&User", self.user_edit)
        form.addRow("&Password", self.password_edit)
        form.addRow("&Account", self.account_edit)
        form.addRow("", self.remember_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.busy_row)
        layout.addWidget(self.buttons)

        self.login_button.setDefault(True)  # now that it is in the dialog (it draws as such)
        self.wait = LoginWait(
            self.error_label,
            self.login_button,
            lambda: show_level(self.error_label, throttle_words(0), "success"),
            frames,
        )
        self._prefill()
        self.environment_combo.currentIndexChanged.connect(self._environment_changed)

    # -- state --------------------------------------------------------------------------------

    @property
    def environment(self) -> str:
        data: Any = self.environment_combo.currentData()
        return data if isinstance(data, str) else SERVICE

    @property
    def login_in_flight(self) -> bool:
        return self._login_task is not None and not self._login_task.done()

    @property
    def keyring_available(self) -> bool:
        return self._vault is not None

    def _prefill(self) -> None:
        self.url_edit.setText(_text(self._settings, KEY_BASE_URL))
        self.user_edit.setText(_text(self._settings, KEY_USER))
        self.account_edit.setText(_text(self._settings, KEY_ACCOUNT))
        remembered = _text(self._settings, KEY_ENVIRONMENT)
        if self._sandbox_url and remembered in ("", SANDBOX):
            self.environment_combo.setCurrentIndex(self.environment_combo.findData(SANDBOX))
            self._service_values = self._keep()
            self._enter_sandbox()
        else:
            self.environment_combo.setCurrentIndex(self.environment_combo.findData(SERVICE))
            self._update_remember_box()
        if self._vault is not None and self.user_edit.text() and self.url_edit.text():
            self._tasks.spawn(
                self._load_password(self.user_edit.text(), self.url_edit.text()),
                "read the remembered password",
            )
        for edit in (self.user_edit, self.password_edit, self.account_edit):
            if not edit.text():
                edit.setFocus()
                break
        else:
            self.login_button.setFocus()

    async def _load_password(self, user: str, base_url: str) -> None:
        assert self._vault is not None
        password = await self._vault.load(user, base_url)
        if (
            password
            and self.environment == SERVICE
            and self.user_edit.text() == user
            and self.url_edit.text() == base_url
            and not self.password_edit.text()
        ):
            self.password_edit.setText(password)
            self.remember_box.setChecked(True)

    def _keep(self) -> _Kept:
        return _Kept(
            self.url_edit.text(),
            self.user_edit.text(),
            self.password_edit.text(),
            self.account_edit.text(),
            remember=self.remember_box.isChecked(),
        )

    def _environment_changed(self, _index: int) -> None:
        self.error_label.hide()
        if self.environment == SANDBOX:
            self._service_values = self._keep()
            self._enter_sandbox()
            return
        kept = self._service_values
        self.url_edit.setReadOnly(False)
        self.url_edit.setText(kept.base_url)
        self.user_edit.setText(kept.user)
        self.password_edit.setText(kept.password)
        self.account_edit.setText(kept.account)
        self.remember_box.setChecked(kept.remember)
        self._update_remember_box()

    def _enter_sandbox(self) -> None:
        """The embedded sandbox: its URL, and the seeded demo login."""
        self.url_edit.setText(self._sandbox_url or "")
        self.url_edit.setReadOnly(True)
        self.user_edit.setText(DEMO)
        self.password_edit.setText(DEMO)
        self.account_edit.setText(DEMO)
        self.remember_box.setChecked(False)
        self._update_remember_box()

    def _update_remember_box(self) -> None:
        if self.environment == SANDBOX:
            self.remember_box.setEnabled(False)
            self.remember_box.setToolTip("The embedded sandbox's demo login needs no remembering.")
        elif self._vault is None:
            self.remember_box.setEnabled(False)
            self.remember_box.setChecked(False)
            self.remember_box.setToolTip(self._no_keyring_reason)
        else:
            self.remember_box.setEnabled(True)
            self.remember_box.setToolTip(
                "The password is kept in the OS keyring only, never in the settings file."
            )

    def _entered(self) -> _Entered:
        return _Entered(
            self.environment,
            self.url_edit.text().strip(),
            self.user_edit.text().strip(),
            self.password_edit.text(),
            self.account_edit.text().strip(),
            self.remember_box.isEnabled() and self.remember_box.isChecked(),
        )

    # -- the login ----------------------------------------------------------------------------

    def start_login(self) -> None:
        """Start one login (Log in / Enter); ignored while one is running or while the service's
        throttle is counted down (a login then would only be refused again)."""
        if self.login_in_flight or self.wait.waiting:
            return
        entered = self._entered()
        self._set_busy(True)
        self.error_label.hide()
        self._login_task = self._tasks.spawn(self._login(entered), "log in")

    async def _login(self, entered: _Entered) -> None:
        try:
            terminal = await connect(
                entered.base_url,
                entered.user,
                entered.password,
                entered.account,
                sandbox=entered.environment == SANDBOX,
            )
        except LoginFailed as exc:
            self._failed(str(exc), exc.retry_after)
            return
        except Exception as exc:
            # Never the password: connect() does not put it in any message.
            log.error("Login to %s failed unexpectedly", entered.base_url, exc_info=exc)
            detail = str(exc).strip() or type(exc).__name__
            self._failed(f"The login did not work because of an unexpected error: {detail}.")
            return
        self.busy_label.setText("Saving…")
        try:
            await self._remember(entered)
        except asyncio.CancelledError:
            await terminal.aclose()  # cancelled after all: the terminal is nobody's
            raise
        self._set_busy(False)
        self._login_task = None
        self.password_edit.clear()  # the client keeps only the hash; the dialog keeps nothing
        self.loggedIn.emit(terminal)
        self.accept()

    async def _remember(self, entered: _Entered) -> None:
        self._settings.setValue(KEY_ENVIRONMENT, entered.environment)
        if entered.environment == SERVICE:
            self._settings.setValue(KEY_BASE_URL, entered.base_url)
            self._settings.setValue(KEY_USER, entered.user)
            self._settings.setValue(KEY_ACCOUNT, entered.account)
        self._settings.sync()
        if self._vault is None or entered.environment != SERVICE:
            return
        if entered.remember:
            await self._vault.save(entered.user, entered.base_url, entered.password)
        else:
            await self._vault.forget(entered.user, entered.base_url)

    def _failed(self, message: str, retry_after: float | None = None) -> None:
        self._login_task = None
        self._set_busy(False)
        self.error_label.setText(message)
        self.error_label.setProperty("level", "error")
        self.error_label.setStyleSheet(error_css(current_palette()))
        self.error_label.show()
        if retry_after is not None:
            self.wait.start(retry_after)  # counted down; Log in held until it ends
        field = self._field_for(message)
        field.setFocus(Qt.FocusReason.OtherFocusReason)
        if isinstance(field, QLineEdit):
            field.selectAll()

    def _field_for(self, message: str) -> QWidget:
        """The field to correct after ``message`` (LoginFailed carries words only)."""
        text = message.lower()
        where: QWidget = self.url_edit if self.environment == SERVICE else self.environment_combo
        if text.startswith("enter the user"):
            return self.user_edit
        if text.startswith("enter the account") or text.startswith("account "):
            return self.account_edit
        if "service url" in text or any(
            words in text
            for words in ("cannot reach", "secure connection", "did not answer", "connection to")
        ):
            return where
        return self.password_edit

    def _set_busy(self, busy: bool) -> None:
        self.login_button.setEnabled(not busy and not self.wait.waiting)
        self.busy_label.setText("Logging in…")
        self.busy_row.setVisible(busy)
        for widget in (
            self.environment_combo,
            self.url_edit,
            self.user_edit,
            self.password_edit,
            self.account_edit,
        ):
            widget.setEnabled(not busy)
        if busy:
            self.remember_box.setEnabled(False)
        else:
            self._update_remember_box()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter logs in from any field, whatever had focus before or failed: Qt's own
        default-button rule let a button that once had focus take Enter. Escape
        cancels (QDialog's). An open combo box popup takes its own Enter first."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            self.start_login()
            return
        super().keyPressEvent(event)

    def reject(self) -> None:
        """Cancel (Escape, close): stop a running login and close."""
        if self._login_task is not None:
            self._login_task.cancel()
            self._login_task = None
            self._set_busy(False)
        super().reject()


async def ask_login(dialog: LoginDialog) -> Terminal | None:
    """Open ``dialog`` (if not open yet) and wait for a terminal, or None when it is
    cancelled."""
    future: asyncio.Future[Terminal | None] = asyncio.get_running_loop().create_future()

    def logged_in(terminal: Terminal) -> None:
        if not future.done():
            future.set_result(terminal)

    def gone(*_: object) -> None:
        if not future.done():
            future.set_result(None)

    dialog.loggedIn.connect(logged_in)
    dialog.rejected.connect(gone)
    dialog.destroyed.connect(gone)
    if not dialog.isVisible():
        dialog.open()
    try:
        return await future
    finally:
        with contextlib.suppress(RuntimeError):
            dialog.loggedIn.disconnect(logged_in)
            dialog.rejected.disconnect(gone)
            dialog.destroyed.disconnect(gone)
