"""Why Qt cannot open a window, in words a trader can act on.

The most common PySide6 failure on Linux is a platform plugin that cannot load: Qt prints
"Could not load the Qt platform plugin "xcb"" and aborts. Two very different causes hide behind
it, and Qt's own hint ("xcb-cursor0 ... is needed") is printed for both:

- no display to talk to (``DISPLAY`` unset, an ssh session without ``-X``, a headless server);
- a system library the plugin links against is missing (``libxcb-cursor0`` and friends).

``diagnose`` tells them apart from Qt's messages and from ``ldd`` on the plugin itself (the
plugin folders Qt searches: ``QT_QPA_PLATFORM_PLUGIN_PATH`` first, then Qt's own), and names
every missing library with the package that provides it on Debian/Ubuntu and on Fedora. Only
``ldd`` is trusted for "missing": Qt's hint about xcb-cursor appears even when it is installed.
Qt-free (a service of the launch, like the sandbox child), so ``tradeterm doctor`` and the
terminal's start-up use the same words.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Library stem (the file name before ``.so``) -> (Debian/Ubuntu package, Fedora package).
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util": ("libxcb-util1", "xcb-util"),
    "libxcb-randr": ("libxcb-randr0", "libxcb"),
    "libxcb-shm": ("libxcb-shm0", "libxcb"),
    "libxcb-sync": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes": ("libxcb-xfixes0", "libxcb"),
    "libxcb-render": ("libxcb-render0", "libxcb"),
    "libxcb-shape": ("libxcb-shape0", "libxcb"),
    "libxcb-xkb": ("libxcb-xkb1", "libxcb"),
    "libxcb-xinerama": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput": ("libxcb-xinput0", "libxcb"),
    "libxcb-glx": ("libxcb-glx0", "libxcb"),
    "libxcb": ("libxcb1", "libxcb"),
    "libxkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb": ("libx11-xcb1", "libX11-xcb"),
    "libX11": ("libx11-6", "libX11"),
    "libSM": ("libsm6", "libSM"),
    "libICE": ("libice6", "libICE"),
    "libGL": ("libgl1", "libglvnd-glx"),
    "libEGL": ("libegl1", "libglvnd-egl"),
    "libOpenGL": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig": ("libfontconfig1", "fontconfig"),
    "libfreetype": ("libfreetype6", "freetype"),
    "libdbus-1": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0": ("libglib2.0-0", "glib2"),
    "libwayland-client": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl": ("libwayland-egl1", "libwayland-egl"),
}
NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
PLUGIN_NAME = re.compile(r'platform plugin "([^"]*)"')
AVAILABLE = re.compile(r"Available platform plugins are: ([^\n]*)")
LDD_SECONDS = 10.0


@dataclass(frozen=True)
class Diagnosis:
    """What is wrong (one line) and what to do about it (lines of advice)."""

    summary: str
    advice: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # library file names ldd could not find

    def text(self) -> str:
        return "\n".join([self.summary, *(f"  {line}" for line in self.advice)])


def plugin_folders(qt_plugins: str | None, env: dict[str, str] | None = None) -> list[Path]:
    """Where Qt looks for platform plugins, in its order: ``QT_QPA_PLATFORM_PLUGIN_PATH``'s
    folders, then ``platforms`` under Qt's plugin folder (``qt_plugins``, from QLibraryInfo)."""
    environ = os.environ if env is None else env
    folders = [Path(part) for part in environ.get("QT_QPA_PLATFORM_PLUGIN_PATH", "").split(":")]
    if qt_plugins:
        folders.append(Path(qt_plugins) / "platforms")
    return [folder for folder in folders if str(folder) not in ("", ".")]


def missing_libraries(plugin: Path) -> list[str]:
    """The libraries ``ldd`` cannot find for ``plugin`` and everything it links (ldd follows
    the whole tree); empty when ldd is not there (not Linux) or the plugin is fine."""
    ldd = shutil.which("ldd")
    if ldd is None or not plugin.is_file():
        return []
    try:
        done = subprocess.run(  # ldd on a file path, no shell
            [ldd, str(plugin)],
            capture_output=True,
            text=True,
            timeout=LDD_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return list(dict.fromkeys(NOT_FOUND.findall(done.stdout + done.stderr)))


def install_advice(libraries: Sequence[str]) -> list[str]:
    """The install commands for Debian/Ubuntu and Fedora that provide ``libraries``."""
    apt: list[str] = []
    dnf: list[str] = []
    unknown: list[str] = []
    for library in libraries:
        packages = PACKAGES.get(library.split(".so")[0])
        if packages is None:
            unknown.append(library)
            continue
        apt.append(packages[0])
        dnf.append(packages[1])
    lines = []
    if apt:
        lines.append(f"Debian/Ubuntu: sudo apt install {' '.join(dict.fromkeys(apt))}")
        lines.append(f"Fedora: sudo dnf install {' '.join(dict.fromkeys(dnf))}")
    for library in unknown:
        lines.append(
            f"{library}: find its package with `apt-file search {library}` "
            f"or `dnf provides '*/{library}'`"
        )
    return lines


def diagnose(
    qt_output: str,
    qt_plugins: str | None,
    env: dict[str, str] | None = None,
) -> Diagnosis:
    """Qt's messages of a failed start (``qt_output``) turned into a diagnosis."""
    environ = dict(os.environ if env is None else env)
    names = PLUGIN_NAME.findall(qt_output)
    name = names[-1] if names else environ.get("QT_QPA_PLATFORM", "").split(":")[0] or "xcb"
    available = AVAILABLE.search(qt_output)
    if f'Could not find the Qt platform plugin "{name}"' in qt_output:
        choices = available.group(1).strip() if available else "see Qt's list"
        return Diagnosis(
            f'there is no Qt platform plugin "{name}" (QT_QPA_PLATFORM={name})',
            (f"Pick one Qt has: {choices}; on a desktop, unset QT_QPA_PLATFORM.",),
        )
    missing: list[str] = []
    for folder in plugin_folders(qt_plugins, environ):
        missing += missing_libraries(folder / f"libq{name}.so")
    missing = list(dict.fromkeys(missing))
    advice: list[str] = []
    parts: list[str] = []
    if missing:
        parts.append(f"missing system libraries: {', '.join(missing)}")
        advice += install_advice(missing)
    if name == "xcb" and (
        "could not connect to display" in qt_output or not environ.get("DISPLAY")
    ):
        display = environ.get("DISPLAY")
        parts.append(
            f"cannot connect to the X display {display}"
            if display
            else "no display: DISPLAY is not set"
        )
        advice += [
            "Start Tradeterm from a desktop session (or ssh -X), or set DISPLAY to a running "
            "X server.",
            "On a Wayland desktop: QT_QPA_PLATFORM=wayland tradeterm.",
            "Without any screen (servers, CI): QT_QPA_PLATFORM=offscreen tradeterm --sandbox "
            "--smoke-test.",
        ]
    if name.startswith("wayland") and not environ.get("WAYLAND_DISPLAY"):
        parts.append("no Wayland display: WAYLAND_DISPLAY is not set")
        advice.append("On an X11 desktop: QT_QPA_PLATFORM=xcb tradeterm.")
    if not parts:
        last = _last_words(qt_output)
        parts.append(f'the Qt platform plugin "{name}" cannot start ({last})')
        advice.append("Run QT_DEBUG_PLUGINS=1 tradeterm for Qt's own account of the load.")
    summary = f'Qt cannot load its platform plugin "{name}": {"; ".join(parts)}'
    return Diagnosis(summary, tuple(advice), tuple(missing))


def _last_words(text: str) -> str:
    """Qt's first line of substance, for a failure none of the known causes explain."""
    lines: Iterable[str] = (line.strip() for line in text.splitlines())
    useful = [line for line in lines if line and not line.startswith("Available platform")]
    return useful[0] if useful else "no message"


def startup_advice(qt_output: str, qt_plugins: str | None) -> str:
    """What the terminal prints instead of Qt's abort text when no platform plugin loads."""
    found = diagnose(qt_output, qt_plugins)
    return "\n".join(
        [
            f"error: the terminal cannot open a window. {found.summary}",
            *(f"  {line}" for line in found.advice),
            "  Run `tradeterm doctor` to check the whole machine.",
        ]
    )
