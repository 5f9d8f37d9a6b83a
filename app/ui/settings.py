"""Where the terminal keeps its settings: an INI file in the user config directory
(``TRADETERM_CONFIG_DIR`` overrides it, e.g. for tests). Never a password."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from PySide6.QtCore import QSettings

from app.private import FILE_MODE, keep_private, private_folder


def config_dir() -> Path:
    override = os.environ.get("TRADETERM_CONFIG_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir("tradeterm", appauthor=False))


def open_settings(folder: Path | None = None) -> QSettings:
    """The settings file, ``0600`` in a ``0700`` folder (Qt keeps a file's mode when it
    rewrites it, so the file is made private before Qt first writes it)."""
    path = private_folder(folder or config_dir()) / "tradeterm.ini"
    if not path.exists():
        path.touch(mode=FILE_MODE)
    keep_private(path)
    return QSettings(str(path), QSettings.Format.IniFormat)
