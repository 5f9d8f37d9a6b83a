"""Where the terminal's run-time files (themes, icons, fonts, the user guide) are, in every kind
of install.

The files live in the repository's top-level ``resources/`` folder. Each install puts it
somewhere else, and ``resources_root()`` is the one place that knows where:

- the PyInstaller bundle: ``<bundle>/_internal/resources`` (``packaging/tradeterm.spec`` copies
  it there), found from ``sys._MEIPASS``;
- a checkout or an editable install: ``resources/`` beside the ``app`` package, recognised by the
  ``pyproject.toml`` beside both (so a stray ``resources`` folder in site-packages is never taken);
- a wheel (``pip install .``, non-editable): the data-only package ``tradeterm_resources``, which
  ``pyproject.toml`` maps from ``resources/`` at build time (``package-dir``) and installs
  beside ``app``.

Nothing here imports Qt: the sandbox and the command line may ask too. ``missing()`` lists the
folders the terminal needs and cannot find, for the smoke test and for a self-check.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

#: The package name ``resources/`` is installed under by a wheel (see ``pyproject.toml``).
PACKAGE = "tradeterm_resources"
#: The folders the terminal loads at run time, each with a file that must be in it.
NEEDED = {
    "themes": "dark.qss",
    "icons": "tradeterm-256.png",
    "fonts": "Inter-Regular.otf",
    "manual": "index.md",
}


def resources_root() -> Path:
    """The folder holding ``themes/``, ``icons/``, ``fonts/`` and ``manual/`` (see the module
    docstring).

    When no candidate exists, the checkout's path is returned anyway: callers then fail to
    read a file and say which one, rather than this raising at import time."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle is not None:
        return Path(bundle) / "resources"
    source = Path(__file__).resolve().parent.parent
    if (source / "pyproject.toml").is_file() and (source / "resources").is_dir():
        return source / "resources"
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return source / "resources"


def themes_folder() -> Path:
    return resources_root() / "themes"


def icons_folder() -> Path:
    return resources_root() / "icons"


def fonts_folder() -> Path:
    return resources_root() / "fonts"


def manual_folder() -> Path:
    """The user guide's Markdown pages (Help > User guide, F1)."""
    return resources_root() / "manual"


def missing() -> list[str]:
    """The needed files that are not there ("themes/dark.qss", ...); empty when all are."""
    root = resources_root()
    return [f"{name}/{file}" for name, file in NEEDED.items() if not (root / name / file).is_file()]
