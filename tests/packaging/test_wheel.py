"""A wheel is a complete install: built from a clean copy of the checkout, installed
non-editable into a fresh virtual environment, its ``tradeterm`` command runs the terminal on
the embedded sandbox with the shipped themes, icons and fonts (``--smoke-test`` fails when they
are missing) — loaded from the install, not from the checkout.

SLOW (a few seconds each): pip builds the wheel in its isolated build environment (setuptools
from pip's cache or the index, as ``pip install -e .`` does) and the environment borrows the
suite's dependencies, so nothing else is downloaded.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from app import resources
from tests.packaging.support import (
    ROOT,
    bare_env,
    borrowing_venv,
    clean_copy,
    log_tail,
    pip_into,
    run,
)

RESOURCE_PACKAGE = "tradeterm_resources"


def runtime_resources() -> list[Path]:
    """Every file under resources/ the terminal may load (not the README's screenshots)."""
    return sorted(
        path.relative_to(ROOT / "resources")
        for path in (ROOT / "resources").rglob("*")
        if path.is_file() and "screenshots" not in path.parts and path.name != "README.md"
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = clean_copy(tmp_path_factory.mktemp("wheel") / "src")
    out = source.parent / "out"
    done = pip_into(Path(sys.executable), "wheel", "--no-deps", "-q", "-w", str(out), str(source))
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    (built,) = out.glob("tradeterm-*.whl")
    return built


@pytest.mark.slow
def test_wheel_carries_every_runtime_resource_and_no_screenshot(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = runtime_resources()
    assert any(path.suffix == ".qss" for path in shipped)
    for path in shipped:
        assert f"{RESOURCE_PACKAGE}/{path.as_posix()}" in names, f"{path} is not in the wheel"
    assert not [name for name in names if "screenshots" in name]
    assert "app/resources.py" in names


@pytest.mark.slow
def test_installed_wheel_runs_the_terminal_with_its_resources(wheel: Path, tmp_path: Path) -> None:
    python = borrowing_venv(tmp_path / "venv")
    installed = pip_into(python, "install", "--no-deps", "-q", str(wheel))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = Path(
        run(
            [str(python), "-c", "import app; print(app.__file__)"], bare_env(tmp_path)
        ).stdout.strip()
    ).parent.parent
    assert site.is_relative_to(tmp_path / "venv"), f"app imported from {site}"
    home = tmp_path / "home"
    home.mkdir()
    env = bare_env(home)
    tradeterm = str(tmp_path / "venv" / "bin" / "tradeterm")

    done = run([tradeterm, "--sandbox", "--smoke-test"], env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{log_tail(home)}"
    assert f"in use from {site / RESOURCE_PACKAGE}\n" in done.stdout, done.stdout
    assert "balances and top of book received" in done.stdout
    assert "Traceback" not in done.stderr

    # the same install without its themes: the terminal would start bare, the smoke test says so
    shutil.rmtree(site / RESOURCE_PACKAGE / "themes")
    bare = run([tradeterm, "--sandbox", "--smoke-test"], env)
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert "resources missing" in bare.stderr and "themes/dark.qss" in bare.stderr, bare.stderr


def test_pyproject_lists_every_app_package() -> None:
    """pyproject.toml lists the packages (a ``find`` table cannot also map resources/ in):
    a package added under app/ and not listed there would be missing from every wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "app").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    listed = set(config["packages"])
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == {RESOURCE_PACKAGE}
    assert config["package-dir"] == {RESOURCE_PACKAGE: "resources"}


def test_checkout_loads_its_own_resources_folder() -> None:
    """In a checkout (and an editable install) the top-level resources/ is used as it is."""
    assert resources.resources_root() == ROOT / "resources"
    assert resources.missing() == []
