"""Unhandled exceptions in slots and tasks: logged and shown as a notice; the app keeps running
(vn.py's exception hook idea, without a modal box)."""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

from app.services.log_events import LogLevel

log = logging.getLogger("tradeterm.ui")

Report = Callable[[LogLevel, str], None]


def install(report: Report, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Route uncaught exceptions (Qt slots, asyncio tasks) to ``report(level, message)``."""

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        log.error("unhandled exception:\n%s", "".join(traceback.format_exception(kind, exc, tb)))
        report(LogLevel.ERROR, f"Unexpected error: {exc or kind.__name__} (details in the log)")

    sys.excepthook = excepthook
    if loop is not None:

        def on_loop_error(_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            exc = context.get("exception")
            message = context.get("message", "error in a background task")
            log.error("asyncio: %s", message, exc_info=exc)
            report(LogLevel.ERROR, f"Unexpected error: {exc or message} (details in the log)")

        loop.set_exception_handler(on_loop_error)
