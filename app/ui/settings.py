"""Where the terminal keeps its settings: an INI file in the user config directory
(``TRADETERM_CONFIG_DIR`` overrides it, e.g. for tests). Never a password."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from PySide6.QtCore import QSettings


def config_dir() -> Path:
    override = os.environ.get("TRADETERM_CONFIG_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir("tradeterm", appauthor=False))


def open_settings(folder: Path | None = None) -> QSettings:
    path = (folder or config_dir()) / "tradeterm.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    return QSettings(str(path), QSettings.Format.IniFormat)
