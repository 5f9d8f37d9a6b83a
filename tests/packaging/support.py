"""What the install tests share: a trader's bare session, a clean copy of the checkout, and a
virtual environment that borrows the running suite's installed dependencies (no download)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.harness import run_captured

ROOT = Path(__file__).resolve().parents[2]
#: What a clean clone does not have: local environments, build output, caches.
NOT_IN_A_CLONE = (
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "*.db",
    "*.db-wal",
    "*.db-shm",
)


def bare_env(home: Path) -> dict[str, str]:
    """A trader's session: no venv, no PYTHONPATH, every user folder inside ``home``."""
    keep = {"LANG", "LC_ALL", "TZ", "TMPDIR"}
    env = {key: value for key, value in os.environ.items() if key in keep}
    env.update(
        PATH="/usr/bin:/bin",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        QT_QPA_PLATFORM="offscreen",
    )
    return env


def run(
    argv: list[str], env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``argv`` in the trader's home folder (never the checkout, so it cannot import from it)."""
    return run_captured(argv, env=env, timeout=timeout, cwd=env["HOME"])


def log_tail(home: Path) -> str:
    log = home / ".local" / "state" / "tradeterm" / "log" / "tradeterm.log"
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


def clean_copy(target: Path) -> Path:
    """The checkout as a fresh clone has it (working-tree files, none of the local output), so
    a build here neither writes into the checkout nor picks up its leftovers."""
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*NOT_IN_A_CLONE))
    return target


def borrowing_venv(folder: Path) -> Path:
    """A new virtual environment whose own site-packages comes first and the running suite's
    second (a ``.pth`` line): what is installed into it wins, and its dependencies need no
    download. It has no pip of its own; ``pip_into`` drives the suite's. Returns its python."""
    done = run_captured([sys.executable, "-m", "venv", "--without-pip", str(folder)], timeout=120)
    assert done.returncode == 0, done.stderr
    python = folder / "bin" / "python"
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    own = run_captured([str(python), "-c", query], timeout=60).stdout.strip()
    borrowed = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    (Path(own) / "_suite_dependencies.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    return python


def pip_into(python: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The suite's pip, installing into the environment of ``python``."""
    return run_captured(
        [sys.executable, "-m", "pip", "--python", str(python), *args], timeout=timeout
    )
