#!/usr/bin/env bash
# Build the one-folder bundle dist/tradeterm/ with PyInstaller, from a clean clone.
#
#   bash packaging/build.sh
#
# It makes (or reuses) its own virtual environment, build/venv, so test tools never end up in
# the bundle; installs the app there (editable: PyInstaller reads the source tree) with its
# `bundle` extra — PyInstaller and keyring (with the Secret Service backend on Linux) — at the
# versions pinned in packaging/constraints.txt; runs packaging/tradeterm.spec; prints the
# bundle's size and the build time. Environment: PYTHON (interpreter for the venv, default
# python3), TRADETERM_BUILD_VENV, TRADETERM_DIST_DIR (default dist), TRADETERM_WORK_DIR
# (default build/pyinstaller).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${TRADETERM_BUILD_VENV:-$root/build/venv}
dist=${TRADETERM_DIST_DIR:-$root/dist}
work=${TRADETERM_WORK_DIR:-$root/build/pyinstaller}
SECONDS=0

if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    -c "$root/packaging/constraints.txt" -e "$root[bundle]"

# Qt must not look for a display while PyInstaller's hooks query it.
QT_QPA_PLATFORM=offscreen "$venv/bin/python" -m PyInstaller \
    --noconfirm --clean --log-level WARN \
    --distpath "$dist" --workpath "$work" \
    "$root/packaging/tradeterm.spec"

bundle="$dist/tradeterm"
if command -v ldd >/dev/null 2>&1 && [ -d "$bundle/_internal/PySide6/Qt/plugins/platforms" ]; then
    # Qt's platform plugins need a few X11/Wayland libraries; what the build machine lacks is
    # not bundled and must then be on the trader's system.
    missing=$({ LD_LIBRARY_PATH="$bundle/_internal" ldd \
        "$bundle"/_internal/PySide6/Qt/plugins/platforms/*.so 2>/dev/null || true; } |
        awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
    if [ -n "$missing" ]; then
        echo "Note: not bundled, the target system must provide: $missing"
    fi
fi
echo "Bundle: $bundle"
echo "Bundle size: $(du -sh "$bundle" | cut -f1)"
echo "Build time: ${SECONDS} s"
