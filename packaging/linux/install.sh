#!/bin/sh
# Install this Tradeterm bundle for the current user (no root needed):
#   the folder     -> ~/.local/opt/tradeterm/
#   a command      -> ~/.local/bin/tradeterm
#   the menu entry -> ~/.local/share/applications/io.tradeterm.Tradeterm.desktop
#   icons, AppStream metadata -> ~/.local/share/icons/hicolor/..., ~/.local/share/metainfo/
#
#   ./install.sh              install (or update) from this folder
#   ./install.sh --uninstall  remove all of the above (settings, logs and paper balances stay)
#
# PREFIX=DIR ./install.sh installs under DIR instead (system-wide as root: PREFIX=/usr/local).
set -eu

APP_ID=io.tradeterm.Tradeterm
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-$HOME/.local}
dest=$prefix/opt/tradeterm
share=$prefix/share

remove() {
    rm -f "$prefix/bin/tradeterm" \
        "$share/applications/$APP_ID.desktop" \
        "$share/metainfo/$APP_ID.metainfo.xml" \
        "$share/icons/hicolor/scalable/apps/$APP_ID.svg"
    for size in 16 32 48 64 128 256; do
        rm -f "$share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    # only ever delete a folder that is a Tradeterm bundle
    if [ -x "$dest/tradeterm" ] && [ -d "$dest/_internal" ]; then
        rm -rf "$dest"
    fi
}

refresh() {
    command -v update-desktop-database >/dev/null 2>&1 &&
        update-desktop-database -q "$share/applications" 2>/dev/null || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 &&
        gtk-update-icon-cache -q -t "$share/icons/hicolor" 2>/dev/null || true
}

if [ "${1:-}" = "--uninstall" ]; then
    remove
    refresh
    echo "Tradeterm removed from $prefix"
    exit 0
fi

if [ ! -x "$here/tradeterm" ] || [ ! -d "$here/share" ]; then
    echo "error: run install.sh from inside the tradeterm bundle folder" >&2
    exit 1
fi

if [ "$here" != "$dest" ]; then
    remove
    mkdir -p "$prefix/opt"
    cp -a "$here" "$dest"
fi

mkdir -p "$prefix/bin" "$share/applications" "$share/metainfo"
ln -sf "$dest/tradeterm" "$prefix/bin/tradeterm"
# Exec with the full path: ~/.local/bin is not on every desktop session's PATH.
sed "s|^Exec=tradeterm|Exec=\"$dest/tradeterm\"|" \
    "$dest/share/applications/$APP_ID.desktop" >"$share/applications/$APP_ID.desktop"
cp "$dest/share/metainfo/$APP_ID.metainfo.xml" "$share/metainfo/"
(cd "$dest/share" && find icons -type f) | while read -r icon; do
    mkdir -p "$share/$(dirname "$icon")"
    cp "$dest/share/$icon" "$share/$icon"
done
refresh
echo "Tradeterm installed in $dest"
echo "Start it from the applications menu or with $prefix/bin/tradeterm"
