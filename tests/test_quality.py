"""The project's own rules, checked with the tests: layers, no import cycle, the Qt pin, comments
without tracker numbers (lint and types are steps of .ci/run of their own)."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.durations import SLOW_SECONDS, read_durations

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"

#: Which of our packages each layer may import (design.md §1).
ALLOWED = {
    "domain": {"domain"},
    "api": {"api", "domain"},
    # and the one lock between processes (one worker per parent order, one sandbox per file)
    "services": {"services", "api", "domain", "file_lock"},
    # and the process-wide helpers at the top of app/ (log file, private files and secrets,
    # where the shipped resources are)
    "ui": {"ui", "services", "domain", "logs", "private", "resources"},
    "sandbox": {"sandbox", "domain", "file_lock"},
    # the scriptable command line over the client (and the services), and the one place a
    # password is taken from the environment
    "cli": {"cli", "api", "services", "domain", "private"},
}
#: Layers that never touch Qt (design.md §1: "no Qt"), by what they import.
QT_FREE = ("domain", "api", "services", "sandbox", "cli")


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


#: The launch code opens the terminal and hands the window its bridge; the bridge holds it.
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
    """design.md §6: widgets get the bridge (topics, facts, intents, feeds), never the
    terminal, the session or its client, and only the bridge subscribes to a service topic."""
    for path in (APP / "ui").rglob("*.py"):
        if path.name in SESSION_HOLDERS:
            continue
        attributes, names = _attributes_and_names(path)
        where = path.relative_to(ROOT)
        assert not {"session", "client"} & attributes, f"{where} reaches .session or .client"
        held = {"Terminal", "TerminalSession", "ServiceClient"} & names
        assert not held, f"{where} names the terminal, the session or the client"
        assert "subscribe" not in attributes, f"{where} subscribes to a service topic itself"


def test_qt_and_sandbox_stay_apart() -> None:
    for path in [*(APP / "domain").rglob("*.py"), *(APP / "sandbox").rglob("*.py")]:
        text = path.read_text()
        assert "PySide6" not in text and "qasync" not in text, path
        assert "import httpx" not in text, path


def _imported_names(path: Path) -> set[str]:
    """Every module name ``path`` imports, at any level of the file (absolute imports)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize("layer", QT_FREE)
def test_only_the_ui_imports_qt(layer: str) -> None:
    for path in (APP / layer).rglob("*.py"):
        roots = {name.split(".")[0] for name in _imported_names(path)}
        assert not roots & {"PySide6", "qasync", "pyqtgraph"}, f"{path.relative_to(ROOT)}"


def test_only_the_client_imports_httpx() -> None:
    """One module to change when the HTTP library changes (qt-asyncio-notes.md)."""
    for path in APP.rglob("*.py"):
        if path.relative_to(APP).parts[0] == "api":
            continue
        roots = {name.split(".")[0] for name in _imported_names(path)}
        assert "httpx" not in roots, f"{path.relative_to(ROOT)} imports httpx"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = APP) -> dict[str, set[str]]:
    """Module -> the modules of ``app`` it imports, read from the AST: imports at the top,
    inside functions and under ``if TYPE_CHECKING`` all count (each is a dependency, and one
    hidden inside a function is still a circle). ``from app.x import y`` depends on the
    module ``app.x.y`` when there is one, else on ``app.x``; relative imports are resolved."""
    paths = {_module_name(path, root): path for path in root.rglob("*.py")}

    def known(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        wanted: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                wanted.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    wanted.add(full if full in paths else known(base))
        graph[module] = {name for name in wanted if name and name != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without
    recursion): each is at least one import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_the_cycle_finder_finds_a_circle_however_it_is_hidden(tmp_path: Path) -> None:
    """A circle closed by an import inside a function or under TYPE_CHECKING is found."""
    package = tmp_path / "app" / "things"
    package.mkdir(parents=True)
    (tmp_path / "app" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from app.things.b import B\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.things import c\n"
    )
    (package / "c.py").write_text("def f():\n    from .a import A\n")
    (package / "d.py").write_text("from app.things import a\n")
    graph = import_graph(tmp_path / "app")
    assert import_cycles(graph) == [["app.things.a", "app.things.b", "app.things.c"]]


def test_no_import_cycle_anywhere_in_app() -> None:
    cycles = import_cycles(import_graph())
    assert cycles == [], "import circles: " + "; ".join(" ↔ ".join(c) for c in cycles)


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


# -- comments say why, not which ticket ---------------------------------------------------------

#: A tracker reference: an issue, ticket or task and its number (with or without "#"), or a
#: number after "#" in brackets. Built from pieces so this file's own text does not match it.
TRACKER_REFERENCE = re.compile(
    r"\b(?:" + "iss" + "ue|tic" + "ket|ta" + r"sk)s?\s?#?\d+|\(" + "#" + r"\d+\)", re.IGNORECASE
)


def comments_and_docstrings(source: str) -> Iterator[tuple[int, str]]:
    """Each comment and each string standing as a statement of its own (module, class and
    function docstrings, and the ones under an attribute), with its first line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def tracker_references(source: str) -> list[tuple[int, str]]:
    """Where the comments and docstrings of ``source`` name a tracker issue: (line, what)."""
    found = []
    for line, text in comments_and_docstrings(source):
        for match in TRACKER_REFERENCE.finditer(text):
            found.append((line + text.count("\n", 0, match.start()), match.group(0)))
    return sorted(found)


def test_the_tracker_reference_finder_tells_a_ticket_from_an_order_ticket() -> None:
    source = (
        '"""The body cap (' + "iss" + "ue 15).\n\n" + "Iss" + 'ue 13: the layouts."""\n'
        "x = 1  # memory flat when idle (" + "#" + "16)\n"
        "y = 2  # see tic" + "ket #4, ta" + "sk 7 and " + "iss" + "ues 3\n"
        "def f() -> None:\n"
        '    """The order ticket, auth.issue(user), #000000 and &#8212; are words."""\n'
        '    print("' + "iss" + 'ue 9")  # a string the program prints is not a comment\n'
    )
    assert [line for line, _ in tracker_references(source)] == [1, 3, 4, 5, 5, 5]


def test_no_comment_or_docstring_names_a_tracker_issue() -> None:
    """A reader of the code has no tracker: a comment says why, with the measured figure and
    the bench that gives it, never which issue asked for it."""
    found = []
    for path in sorted([*APP.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        name = path.relative_to(ROOT).as_posix()
        found += [f"{name}:{line}: {what}" for line, what in tracker_references(path.read_text())]
    assert found == [], "tracker references:\n" + "\n".join(found)


# -- tests share helpers, never each other -------------------------------------------------------

TESTS = ROOT / "tests"


def borrowed_test_modules(source: str, package: str) -> list[tuple[int, str]]:
    """Where ``source`` (a module of ``package``) imports a conftest or a ``test_`` module, at any
    level of the file, absolute or relative: (line, module)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules: list[str] = []
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                up = parts[: len(parts) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            # ``from tests.ui import conftest`` names the module as an imported name
            modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for module in modules:
            last = module.rpartition(".")[2]
            if last == "conftest" or last.startswith("test_"):
                found.append((node.lineno, module))
    return found


def test_the_borrowing_finder_sees_every_spelling() -> None:
    source = (
        "from tests.ui.conftest import Live\n"
        "import tests.services.test_rfq_desk\n"
        "from tests.ui import test_balances\n"
        "from .conftest import run\n"
        "def f() -> None:\n"
        "    from ..services.test_feeds import logged_in\n"
        "from tests.helpers.qt import run, shown\n"
        "from tests.harness import SandboxProcess\n"
    )
    assert [line for line, _ in borrowed_test_modules(source, "tests.ui")] == [1, 2, 3, 4, 6]


def test_no_test_module_imports_a_conftest_or_another_test_module() -> None:
    """A helper two test files need lives in ``tests/helpers``: importing a test module runs its
    module-level set-up a second time and collects nothing, and a conftest is pytest's to load
    (importing one by name makes a second copy of its module)."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        package = _module_name(path.parent / "__init__.py", TESTS)
        for line, module in borrowed_test_modules(path.read_text(), package):
            found.append(f"{path.relative_to(ROOT)}:{line}: imports {module}")
    assert found == [], "tests importing other tests:\n" + "\n".join(found)


# -- what is slow is marked slow -----------------------------------------------------------------


def _names_slow(expression: ast.AST) -> bool:
    """``expression`` (a decorator, a ``pytestmark`` value) holds ``pytest.mark.slow``."""
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "slow"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
        for node in ast.walk(expression)
    )


def _marks_slow(body: list[ast.stmt]) -> bool:
    """A ``pytestmark = ...`` among ``body`` (a module's or a class's) holds the slow mark."""
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and _names_slow(node.value)
        for node in body
    )


def slow_tests(source: str) -> set[str]:
    """The tests of a module that carry the slow mark, by their node id after the file
    (``test_x``, ``Class::test_x``): on the function, on its class or on the module."""
    tree = ast.parse(source)
    module_slow = _marks_slow(tree.body)
    found: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str, slow: bool) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                marked = _marks_slow(node.body) or any(map(_names_slow, node.decorator_list))
                visit(node.body, f"{prefix}{node.name}::", slow or marked)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                slow or any(map(_names_slow, node.decorator_list))
            ):
                found.add(prefix + node.name)

    visit(tree.body, "", module_slow)
    return found


def test_the_slow_finder_reads_function_class_and_module_marks() -> None:
    source = (
        "import pytest\n"
        "@pytest.mark.slow\n"
        "def test_a() -> None: ...\n"
        "@pytest.mark.parametrize('x', [1])\n"
        "def test_b(x: int) -> None: ...\n"
        "class TestC:\n"
        "    pytestmark = [pytest.mark.anyio, pytest.mark.slow]\n"
        "    async def test_d(self) -> None: ...\n"
        "@pytest.mark.slow\n"
        "class TestE:\n"
        "    def test_f(self) -> None: ...\n"
    )
    assert slow_tests(source) == {"test_a", "TestC::test_d", "TestE::test_f"}
    marked_module = "import pytest\npytestmark = pytest.mark.slow\ndef test_g() -> None: ...\n"
    assert slow_tests(marked_module) == {"test_g"}


def test_every_test_measured_at_a_second_or_more_is_marked_slow() -> None:
    """``-m 'not slow'`` is the quick loop: a test whose call took ``SLOW_SECONDS`` or more in
    the committed measurement (tests/durations.json) carries the mark. Re-measure with
    ``TRADETERM_RECORD_DURATIONS=tests/durations.json pytest ...`` (tests/conftest.py); a test
    no longer there (renamed, removed) is not checked."""
    measured = read_durations()
    assert measured, "tests/durations.json is missing or empty"
    unmarked = []
    slow_by_file: dict[Path, set[str]] = {}
    for node_id, seconds in sorted(measured.items()):
        if seconds < SLOW_SECONDS:
            continue
        file, _, test = node_id.partition("::")
        path = ROOT / file
        if not path.exists():
            continue
        if path not in slow_by_file:
            slow_by_file[path] = slow_tests(path.read_text())
        if test.partition("[")[0] not in slow_by_file[path]:
            unmarked.append(f"{node_id}: {seconds:.2f} s")
    assert unmarked == [], "measured slow, not marked @pytest.mark.slow:\n" + "\n".join(unmarked)
