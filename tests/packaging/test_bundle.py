"""The installable bundle, built the way a release is: ``packaging/build.sh`` makes the
one-folder PyInstaller bundle from this checkout, and the bundled executable then runs the
terminal on its own embedded sandbox (a child started from the bundle, not from a Python),
offscreen, with no virtual environment on PATH.

SLOW: the module builds the bundle once (PyInstaller, about 1-2 minutes on 2 cores, more when
pip has to download PySide6 for build/venv first); hence the generous timeouts. The tests that
need the build are marked ``bundle``: a plain ``pytest`` leaves them out and ``pytest -m bundle``
runs them, the second step of ``.ci/run``. The checks of the files behind the bundle (icons,
desktop entry, metainfo) need no build and run with the rest of the suite.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import httpx
import pytest

from tests.harness import run_captured
from tests.packaging.support import ROOT, bare_env, log_tail, run

LINUX_FILES = ROOT / "packaging" / "linux"
APP_ID = "io.tradeterm.Tradeterm"
ICON_SIZES = (16, 32, 48, 64, 128, 256)
BUILD_TIMEOUT = 1500  # seconds for build.sh, including a first download of the dependencies
TEST_TIMEOUT = 1800  # per test; the first one also pays for the module's build
MAX_BUNDLE_MB = 230  # ~191 MB with keyring; a jump means an excluded Qt module or package came back
SMOKE_LINE = re.compile(r"smoke test: balances and top of book received from (http://\S+);")


def bundle_test(test: Callable[..., None]) -> Callable[..., None]:
    """Marks a test that builds or runs the Linux bundle: slow, and run as its own step of
    .ci/run (the static checks of the packaging files below stay in the main suite)."""
    for mark in (
        pytest.mark.timeout(TEST_TIMEOUT),
        pytest.mark.slow,
        pytest.mark.bundle,
        pytest.mark.skipif(
            not sys.platform.startswith("linux"), reason="the test runs the Linux bundle"
        ),
    ):
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dist/tradeterm/ built by packaging/build.sh into a temporary folder."""
    out = tmp_path_factory.mktemp("bundle")
    bash = shutil.which("bash")
    assert bash is not None
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "TRADETERM_DIST_DIR": str(out / "dist"),
        "TRADETERM_WORK_DIR": str(out / "work"),
    }
    done = run_captured(
        [bash, str(ROOT / "packaging" / "build.sh")], env=env, timeout=BUILD_TIMEOUT
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert re.search(r"^Bundle size: \S+$", done.stdout, re.MULTILINE), done.stdout
    return out / "dist" / "tradeterm"


@bundle_test
def test_bundle_runs_the_terminal_on_its_embedded_sandbox(bundle: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path)
    shot = tmp_path / "window.png"
    done = run(
        [str(bundle / "tradeterm"), "--sandbox", "--smoke-test", "--screenshot", str(shot)], env
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{log_tail(tmp_path)}"
    match = SMOKE_LINE.search(done.stdout)
    assert match, done.stdout
    assert "Traceback" not in done.stderr
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # the child sandbox kept its paper balances in the trader's data folder, and stopped
    assert (tmp_path / ".local" / "share" / "tradeterm" / "sandbox.db").exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{match.group(1)}/api/v1/routing/time", timeout=2)


@bundle_test
def test_bundled_sandbox_serves_and_stops_cleanly(bundle: Path, tmp_path: Path) -> None:
    """uvicorn loads its loop, protocol and lifespan by name: a frozen sandbox that misses one
    never prints its URL or fails its first request."""
    env = bare_env(tmp_path)
    with subprocess.Popen(
        [str(bundle / "tradeterm"), "sandbox", "--port", "0", "--db", ":memory:"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.startswith("Sandbox listening on http://127.0.0.1:"), line
            url = line.split(" on ", 1)[1].strip()
            answer = httpx.get(f"{url}/api/v1/routing/time", timeout=10)
            assert answer.status_code == 200 and "unixMillis" in answer.json()
            info = httpx.get(f"{url}/openapi.json", timeout=10)
            assert info.status_code == 200
        finally:
            child.send_signal(signal.SIGTERM)
            code = child.wait(timeout=30)
    assert code == 0


@bundle_test
def test_bundle_reports_its_version_and_runs_the_command_line(bundle: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path)
    version = run([str(bundle / "tradeterm"), "--version"], env)
    assert version.stdout.strip() == f"tradeterm {metadata.version('tradeterm')}"
    api = run([str(bundle / "tradeterm"), "api", "--help"], env)
    assert api.returncode == 0 and "usage: tradeterm api" in api.stdout


@bundle_test
def test_bundle_has_the_keyring_with_the_secret_service_backend(
    bundle: Path, tmp_path: Path
) -> None:
    """keyring imports its backends by name from its entry points: the bundle's self-check
    loads them as keyring does (no D-Bus needed), and the Secret Service stack under them."""
    done = run([str(bundle / "tradeterm"), "--bundle-self-check"], bare_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    backends = re.search(r"^keyring \S+: backends (.+)$", done.stdout, re.MULTILINE)
    assert backends, done.stdout
    assert "SecretService" in backends.group(1).split(", "), done.stdout
    assert f"resources: {bundle / '_internal' / 'resources'}\n" in done.stdout
    assert "problem:" not in done.stdout
    # the version pinned in the lock, with its metadata (the entry points live there)
    pinned = re.search(
        r"^keyring==(\S+)$", (ROOT / "packaging" / "constraints.txt").read_text(), re.MULTILINE
    )
    assert pinned, "keyring is not pinned in packaging/constraints.txt"
    assert (bundle / "_internal" / f"keyring-{pinned.group(1)}.dist-info").is_dir()


@bundle_test
def test_bundle_carries_resources_and_leaves_out_what_the_app_does_not_use(
    bundle: Path,
) -> None:
    internal = bundle / "_internal"
    # every run-time resource, in _internal/resources (app/resources.py finds them there)
    shipped = [
        path.relative_to(ROOT)
        for path in (ROOT / "resources").rglob("*")
        if path.is_file() and "screenshots" not in path.parts and path.name != "README.md"
    ]
    assert any(path.suffix == ".png" for path in shipped)
    for path in shipped:
        assert (internal / path).is_file(), f"{path} is not in the bundle"
    assert not (internal / "resources" / "screenshots").exists()
    names = {path.name for path in internal.rglob("*")}
    for unwanted in (
        "libQt6Network.so.6",
        "libQt6Qml.so.6",
        "libQt6Quick.so.6",
        "QtNetwork.abi3.so",
        "QtTest.abi3.so",
        "libqgtk3.so",  # would load the system GTK beside bundled glib copies
        "libqeglfs.so",
        "tkinter",
        "pytest",
        "hypothesis",
        "mypy",
    ):
        assert unwanted not in names, f"{unwanted} is in the bundle"
    assert not list(internal.rglob("*.qm")), "Qt translations are in the bundle"
    for needed in ("libqxcb.so", "libqwayland.so", "libqoffscreen.so", "libqsvg.so"):
        assert needed in names, f"{needed} is missing"
    files = [path for path in bundle.rglob("*") if path.is_file() and not path.is_symlink()]
    size = sum(path.stat().st_size for path in files)
    assert size < MAX_BUNDLE_MB * 1024 * 1024, f"bundle is {size / 1024 / 1024:.0f} MB"


@bundle_test
def test_install_script_adds_the_menu_entry_and_removes_it_again(
    bundle: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "prefix"
    env = {**bare_env(tmp_path), "PREFIX": str(prefix)}
    done = run(["/bin/sh", str(bundle / "install.sh")], env)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = prefix / "opt" / "tradeterm" / "tradeterm"
    entry = read_desktop(prefix / "share" / "applications" / f"{APP_ID}.desktop")
    assert entry["Desktop Entry"]["Exec"] == f'"{installed}"'
    assert entry["Desktop Action Sandbox"]["Exec"] == f'"{installed}" --sandbox'
    for size in ICON_SIZES:
        icon = prefix / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert png_size(icon) == (size, size)
    assert (prefix / "share" / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    version = run([str(prefix / "bin" / "tradeterm"), "--version"], env)
    assert version.returncode == 0 and version.stdout.startswith("tradeterm ")

    removed = run(["/bin/sh", str(installed.parent / "install.sh"), "--uninstall"], env)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not installed.parent.exists()
    assert not (prefix / "bin" / "tradeterm").exists()
    assert not (prefix / "share" / "applications" / f"{APP_ID}.desktop").exists()


# --- the files behind the bundle (fast: no build) -------------------------------------------


def read_desktop(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_icons_exist_in_every_size() -> None:
    icons = ROOT / "resources" / "icons"
    svg = ET.parse(icons / "tradeterm.svg").getroot()  # noqa: S314  # our own file
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    for size in ICON_SIZES:
        assert png_size(icons / f"tradeterm-{size}.png") == (size, size)


def test_desktop_entry_and_metainfo_describe_the_same_app() -> None:
    entry = read_desktop(LINUX_FILES / f"{APP_ID}.desktop")["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Icon"] == APP_ID
    assert entry["Exec"].split()[0] == "tradeterm" and entry["Terminal"] == "false"
    assert "Office" in entry["Categories"].split(";")

    component = ET.parse(LINUX_FILES / f"{APP_ID}.metainfo.xml").getroot()  # noqa: S314
    assert component.tag == "component"
    assert component.get("type") == "desktop-application"
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == f"{APP_ID}.desktop"
    assert component.findtext("metadata_license") == "CC0-1.0"
    assert component.findtext("provides/binary") == "tradeterm"
    for required in ("name", "summary", "description/p", "project_license"):
        assert (component.findtext(required) or "").strip(), required
    assert component.find("content_rating") is not None
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    newest = component.find("releases/release")
    assert newest is not None and newest.get("version") == project["version"], (
        "add a <release> for the version in pyproject.toml"
    )


def test_desktop_files_pass_the_freedesktop_validators_where_installed() -> None:
    """desktop-file-validate (desktop-file-utils) and appstreamcli (appstream) check the spec
    in full; they are not project dependencies, so each runs only where it is installed."""
    checks = {
        "desktop-file-validate": [str(LINUX_FILES / f"{APP_ID}.desktop")],
        "appstreamcli": ["validate", "--no-net", str(LINUX_FILES / f"{APP_ID}.metainfo.xml")],
    }
    tools = {name: shutil.which(name) for name in checks}
    if not any(tools.values()):
        pytest.skip("neither desktop-file-validate nor appstreamcli is installed")
    for name, tool in tools.items():
        if tool is not None:
            done = subprocess.run(
                [tool, *checks[name]], capture_output=True, text=True, timeout=60, check=False
            )
            assert done.returncode == 0, f"{name}: {done.stdout}{done.stderr}"
