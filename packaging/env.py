"""The project's virtual environment, ``.venv``, installed only when it is missing or out of date.

    python3 packaging/env.py setup [EXTRA ...]   # e.g. `setup test`; silent when up to date
    python3 packaging/env.py check [EXTRA ...]   # exit 0 if up to date, 1 if setup would install
    python3 packaging/env.py lock                # re-resolve packaging/constraints.txt

Standard library only, so it runs on a fresh machine with nothing but python3 (3.11 or newer).

``setup`` creates ``.venv`` if needed and installs the project editable with the extras asked
for, pinned by ``packaging/constraints.txt`` (``pip install -c``), then compiles ``app`` to
bytecode (an editable install leaves none, and the first launch would pay for it). It records
what it installed in a stamp, ``.venv/tradeterm-env.json``: a hash of ``pyproject.toml``, the
constraints and ``.venv/pyvenv.cfg`` (the interpreter it was made from), and the extras. The next
``setup`` whose hash matches and whose extras were all installed does nothing — a second launch
goes straight to the terminal. A changed dependency, pin or Python reinstalls, keeping the extras
installed before. A failed install writes no stamp, so the next run tries again.

``lock`` resolves the newest versions ``pyproject.toml``'s ranges allow, for the test tools and
the bundle build too (extras ``test`` and ``bundle``), in a throwaway environment
``build/lock-venv``, and writes them as the constraints. Run the suite after it (the test command
reinstalls, the stamp having changed): the lock holds the versions the suite passed with.

Environment: ``TRADETERM_VENV`` (default ``.venv`` in the repository root).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "packaging" / "constraints.txt"
STAMP_NAME = "tradeterm-env.json"
LOCK_EXTRAS = ("test", "bundle")
LOCK_HEADER = """\
# The exact versions the suite passes with (pip constraints: `pip install -c` this file).
# Used by packaging/env.py (the README's commands and .ci/run) and packaging/build.sh;
# pyproject.toml keeps open ranges for library users. Refresh, then run the suite:
#   python3 packaging/env.py lock
# Made on {platform} with Python {python}.
"""


def venv_folder() -> Path:
    return Path(os.environ.get("TRADETERM_VENV", ROOT / ".venv")).resolve()


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def fingerprint(venv: Path) -> str:
    """What, changed, makes the environment out of date."""
    digest = hashlib.sha256()
    for path in (ROOT / "pyproject.toml", CONSTRAINTS, venv / "pyvenv.cfg"):
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(missing)")
    return digest.hexdigest()


def read_stamp(venv: Path) -> tuple[str, set[str]]:
    try:
        stamp = json.loads((venv / STAMP_NAME).read_text(encoding="utf-8"))
        return str(stamp["fingerprint"]), set(stamp["extras"])
    except (OSError, ValueError, KeyError, TypeError):
        return "", set()


def up_to_date(venv: Path, extras: set[str]) -> bool:
    if not venv_python(venv).is_file():
        return False
    stamped, installed = read_stamp(venv)
    return stamped == fingerprint(venv) and extras <= installed


def say(message: str) -> None:
    print(f"env: {message}", file=sys.stderr, flush=True)


def call(*argv: str | Path) -> None:
    done = subprocess.run([str(arg) for arg in argv], cwd=ROOT, check=False)
    if done.returncode != 0:
        say(f"failed ({done.returncode}): {' '.join(map(str, argv))}")
        raise SystemExit(done.returncode)


def pip_install(python: Path, *args: str | Path) -> None:
    """pip install quietly into the environment of ``python`` (setup and lock alike)."""
    call(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *args)


def requirement(extras: set[str]) -> str:
    return f"{ROOT}[{','.join(sorted(extras))}]" if extras else str(ROOT)


def setup(extras: set[str]) -> None:
    venv = venv_folder()
    if up_to_date(venv, extras):
        return
    started = time.monotonic()
    python = venv_python(venv)
    if not python.is_file():
        say(f"creating {venv}")
        call(sys.executable, "-m", "venv", venv)
    _, before = read_stamp(venv)
    extras = extras | before  # keep what was installed current too
    say(f"installing tradeterm{'[' + ','.join(sorted(extras)) + ']' if extras else ''} into {venv}")
    pip_install(python, "-c", CONSTRAINTS, "-e", requirement(extras))
    call(python, "-m", "compileall", "-q", ROOT / "app")
    stamp = {"fingerprint": fingerprint(venv), "extras": sorted(extras)}
    (venv / STAMP_NAME).write_text(json.dumps(stamp) + "\n", encoding="utf-8")
    say(f"ready in {time.monotonic() - started:.0f} s")


def lock() -> None:
    venv = ROOT / "build" / "lock-venv"
    shutil.rmtree(venv, ignore_errors=True)
    say(f"resolving the newest allowed versions in {venv}")
    call(sys.executable, "-m", "venv", venv)
    python = venv_python(venv)
    pip_install(python, "-e", requirement(set(LOCK_EXTRAS)))
    frozen = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--exclude", "tradeterm"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    pins = sorted(
        (line for line in frozen.stdout.splitlines() if "==" in line and not line.startswith("#")),
        key=str.lower,
    )
    header = LOCK_HEADER.format(platform=sys.platform, python=sys.version.split()[0])
    CONSTRAINTS.write_text(header + "\n".join(pins) + "\n", encoding="utf-8")
    shutil.rmtree(venv, ignore_errors=True)
    say(f"wrote {len(pins)} pins to {CONSTRAINTS.relative_to(ROOT)}; now run the suite")


def main(argv: list[str]) -> int:
    command, extras = (argv[0], set(argv[1:])) if argv else ("", set())
    if command == "setup":
        setup(extras)
    elif command == "check":
        return 0 if up_to_date(venv_folder(), extras) else 1
    elif command == "lock" and not extras:
        lock()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
