"""The README's commands: the launch command installs once and then goes straight to the
terminal; CI runs exactly the README's test command; every install is pinned by the lock.

The slow test runs the real ``packaging/env.py`` in a clean copy of the checkout whose ``.venv``
borrows the suite's installed dependencies (tests/packaging/support.py), so the first setup
installs only the project itself (pip still builds it in its isolated build environment, with
setuptools from pip's cache or the index, as on a fresh machine).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from tests.packaging.support import ROOT, bare_env, borrowing_venv, clean_copy, log_tail, run

STAMP = Path(".venv") / "tradeterm-env.json"


def readme_commands() -> list[str]:
    """The Quick start's shell commands, one per ``sh`` block, in order."""
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    quick_start = quick_start.split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", quick_start, re.DOTALL)
    return [
        line
        for block in blocks
        for line in block.splitlines()
        if line.strip() and not line.startswith("#")
    ]


def ci_steps() -> list[str]:
    """The commands .ci/run runs, in order (not its comments, set-up lines or step titles)."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    skipped = ("#", "set ", "cd ", "step", "}")
    return [line for line in lines if line.strip() and not line.startswith(skipped)]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    launch, test, *_ = readme_commands()
    assert launch == "python3 packaging/env.py setup && .venv/bin/tradeterm --sandbox"
    assert test.split(" && ") == ci_steps()
    assert ci_steps()[0] == "python3 packaging/env.py setup test"


def test_every_install_uses_the_lock_and_the_lock_pins_exact_versions() -> None:
    lock = (ROOT / "packaging" / "constraints.txt").read_text().splitlines()
    pins = [line for line in lock if line and not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[\w.+!]+", pin) for pin in pins), pins
    names = {pin.split("==")[0].lower().replace("_", "-") for pin in pins}
    assert "tradeterm" not in names  # the project itself is never pinned
    # what the terminal, the suite and the bundle build install is pinned
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    wanted += ["keyring", "secretstorage", "jeepney", "pyinstaller", "pyinstaller-hooks-contrib"]
    for requirement in wanted:
        name = re.split(r"[<>=;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        if "win32" not in requirement:
            assert name in names, f"{name} is not pinned in packaging/constraints.txt"
    build = (ROOT / "packaging" / "build.sh").read_text()
    assert '-c "$root/packaging/constraints.txt" -e "$root[bundle]"' in build


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_launch_command_installs_once_then_goes_straight_to_the_terminal(
    tmp_path: Path,
) -> None:
    source = clean_copy(tmp_path / "src")
    borrowing_venv(source / ".venv")
    home = tmp_path / "home"
    home.mkdir()
    # `python3` on PATH as on a trader's machine (the suite's interpreter); pip's own settings
    # and cache as the suite has them
    env = {
        **bare_env(home),
        **{key: value for key, value in os.environ.items() if key.startswith("PIP_")},
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    }
    setup = [sys.executable, str(source / "packaging" / "env.py")]

    first = run([*setup, "setup"], env, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "env: installing tradeterm into" in first.stderr, first.stderr
    stamp = (source / STAMP).stat().st_mtime_ns
    tag = sys.implementation.cache_tag
    assert (source / "app" / "__pycache__" / f"resources.{tag}.pyc").is_file()  # compiled
    assert run([*setup, "check"], env).returncode == 0
    assert run([*setup, "check", "test"], env).returncode == 1  # the test tools were not asked

    # the README's launch command itself, from the checkout, with the smoke test added
    launch = readme_commands()[0].replace("python3 packaging/env.py", shlex.join(setup))
    second = run(["/bin/sh", "-c", f"cd {shlex.quote(str(source))} && {launch} --smoke-test"], env)
    assert second.returncode == 0, f"{second.stdout}\n{second.stderr}\n{log_tail(home)}"
    assert "env:" not in second.stderr, second.stderr  # no pip, no venv: straight to it
    assert "balances and top of book received" in second.stdout
    assert (source / STAMP).stat().st_mtime_ns == stamp

    # a changed pin makes the environment out of date again
    lock = source / "packaging" / "constraints.txt"
    lock.write_text(lock.read_text() + "# changed\n")
    assert run([*setup, "check"], env).returncode == 1
