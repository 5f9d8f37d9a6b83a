"""Logging for the terminal: a rotating file in the user log directory, nothing on stderr
(the GUI's stderr is for one-line fatal reasons). ``TRADETERM_LOG_DIR`` overrides the folder."""

from __future__ import annotations

import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

import platformdirs

from app.private import FILE_MODE, keep_private, private_folder

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def log_dir() -> Path:
    override = os.environ.get("TRADETERM_LOG_DIR")
    return (
        Path(override)
        if override
        else Path(platformdirs.user_log_dir("tradeterm", appauthor=False))
    )


def configure(level: int = logging.INFO) -> Path:
    """Send every log record to ``tradeterm.log`` (5 × 2 MB, rotated); returns its path."""
    folder = private_folder(log_dir())
    path = folder / "tradeterm.log"
    if not path.exists():
        path.touch(mode=FILE_MODE)
    keep_private(path, *folder.glob("tradeterm.log.*"))
    handler = RotatingFileHandler(path, maxBytes=2_000_000, backupCount=5, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
    return path
