"""The project's own rules, checked with the tests: lint, types, layers, the Qt pin."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"

#: Which of our packages each layer may import (design.md §1).
ALLOWED = {
    "domain": {"domain"},
    "api": {"api", "domain"},
    "services": {"services", "api", "domain"},
    # and the process-wide helpers at the top of app/ (log file, private files and secrets,
    # where the shipped resources are)
    "ui": {"ui", "services", "domain", "logs", "private", "resources"},
    "sandbox": {"sandbox", "domain"},
}


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_is_clean() -> None:
    lint = _run("ruff", "check", "app", "tests")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", "app", "tests")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def _our_imports(path: Path) -> set[str]:
    """The top-level packages under ``app`` that ``path`` imports (``app.x...`` -> ``x``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "app" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers_import_only_what_design_allows(layer: str) -> None:
    folder = APP / layer
    if not folder.exists():
        pytest.skip(f"app/{layer} does not exist yet")
    for path in folder.rglob("*.py"):
        extra = _our_imports(path) - ALLOWED[layer]
        assert not extra, f"{path.relative_to(ROOT)} imports app.{extra} (not allowed for {layer})"


def test_nothing_but_main_imports_ui() -> None:
    for path in APP.rglob("*.py"):
        if path.parts[-2:] == ("app", "__main__.py") or "ui" in path.relative_to(APP).parts[:1]:
            continue
        assert "ui" not in _our_imports(path), f"{path.relative_to(ROOT)} imports app.ui"


#: The launch code opens the session and hands the window its bridge; the bridge holds it.
SESSION_HOLDERS = {"bridge.py", "launch.py", "login_dialog.py"}


def _attributes_and_names(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text(), str(path))
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return attributes, names


def test_widgets_never_hold_the_session_or_the_client() -> None:
    """design.md §6: widgets get the bridge (topics, facts, intents, feeds), never the session
    or its client, and only the bridge subscribes to a service topic."""
    for path in (APP / "ui").rglob("*.py"):
        if path.name in SESSION_HOLDERS:
            continue
        attributes, names = _attributes_and_names(path)
        where = path.relative_to(ROOT)
        assert not {"session", "client"} & attributes, f"{where} reaches .session or .client"
        assert not {"TerminalSession", "ServiceClient"} & names, f"{where} names the session"
        assert "subscribe" not in attributes, f"{where} subscribes to a service topic itself"


def test_qt_and_sandbox_stay_apart() -> None:
    for path in [*(APP / "domain").rglob("*.py"), *(APP / "sandbox").rglob("*.py")]:
        text = path.read_text()
        assert "PySide6" not in text and "qasync" not in text, path
        assert "import httpx" not in text, path


def test_pyside_survives_many_none_returning_calls() -> None:
    """PySide6 6.12.0 on CPython 3.11 aborts (none_dealloc) after a few thousand setText calls;
    the pin in pyproject.toml keeps us off it. This loop crashes on a bad build."""
    script = (
        "import os, sys\n"
        "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "from PySide6.QtWidgets import QApplication, QLabel\n"
        "app = QApplication(sys.argv)\n"
        "label = QLabel()\n"
        "for i in range(300_000):\n"
        "    label.setText(str(i))\n"
        "print(label.text())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "299999"
