"""The embedded sandbox watched from the window: when the child exits unasked (killed, crashed)
the trader is told at once, in words, and offered Restart in the status bar; Restart starts it
again on the same database and port, and the feeds, which back off while it is down, find it
there by themselves."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from app.services.log_events import LogLevel
from app.services.sandbox_child import SandboxChild, SandboxStartFailed
from app.ui.bridge import QtTopic
from app.ui.status_bar import StatusBar
from app.ui.tasks import TaskOwner


class SandboxSupervisor(QObject):
    def __init__(
        self,
        child: SandboxChild,
        status: StatusBar,
        notify: Callable[[LogLevel, str], None],
        tasks: TaskOwner,
        back: Callable[[], None] = lambda: None,
    ) -> None:
        """``back``: told when the sandbox runs again (the feeds poll at once, not at the end
        of a long back-off)."""
        super().__init__(status)
        self._child = child
        self._status = status
        self._notify = notify
        self._tasks = tasks
        self._back = back
        self.stopped: QtTopic[str] = QtTopic(child.stopped, self)
        self.stopped.connect(self._on_stopped)
        status.restart_sandbox.clicked.connect(self.restart)

    def _on_stopped(self, words: str) -> None:
        self._status.restart_sandbox.show()
        self._notify(LogLevel.ERROR, f"{words}. Restart it from the status bar (same database).")

    def restart(self) -> None:
        self._status.restart_sandbox.setEnabled(False)
        self._tasks.spawn(self._restart(), "restarting the embedded sandbox")

    async def _restart(self) -> None:
        try:
            await self._child.restart()
        except SandboxStartFailed as exc:
            self._notify(LogLevel.ERROR, f"The embedded sandbox did not restart: {exc}")
            return
        finally:
            self._status.restart_sandbox.setEnabled(True)
        self._status.restart_sandbox.hide()
        self._back()
        self._notify(LogLevel.SUCCESS, "The embedded sandbox is running again (same database)")
