"""How the Qt benches (and the screenshots) run their coroutine: on a qasync loop over the one
QApplication, as the terminal runs, with a scratch folder that is gone afterwards."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtWidgets import QApplication

from app.ui.qt import QEventLoop

T = TypeVar("T")


def qt_app() -> QApplication:
    """The process's QApplication (made once), which does not quit when its last window closes:
    as in the terminal, the asyncio runner ends the loop."""
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    return app


def run_qt(
    bench: Callable[[QApplication, Path], Coroutine[Any, Any, T]], prefix: str | None = None
) -> T:
    """``bench(app, folder)`` run to its end on the Qt loop; ``folder`` is a fresh scratch folder
    (named ``prefix``...), removed afterwards."""
    app = qt_app()
    with (
        tempfile.TemporaryDirectory(prefix=prefix) as folder,
        asyncio.Runner(loop_factory=lambda: QEventLoop(app)) as runner,
    ):
        return runner.run(bench(app, Path(folder)))
