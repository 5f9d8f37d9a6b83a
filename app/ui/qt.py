"""The one import of qasync, pinned to PySide6 (qasync picks a binding from ``QT_API``)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_API", "pyside6")

import qasync

QEventLoop = qasync.QEventLoop

__all__ = ["QEventLoop"]
