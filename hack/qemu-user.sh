#!/usr/bin/env bash
# Prints the path of qemu-aarch64-static, the user-mode emulator the
# packaging tests run the arm64 binaries under. It comes from Debian's
# qemu-user-static package, unpacked into the cache and never installed:
# nothing registers with binfmt_misc, so an arm64 program runs only when
# handed to the emulator by name (one process; a nested exec would not be
# emulated).
set -euo pipefail
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
DEST="$CACHE/qemu-user-static"
bin="$DEST/usr/bin/qemu-aarch64-static"
if [ ! -x "$bin" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download qemu-user-static >/dev/null 2>&1) || {
    apt-get update -qq >&2 && (cd "$tmp" && apt-get download qemu-user-static >&2); }
  rm -rf "$DEST" && mkdir -p "$DEST"
  dpkg-deb -x "$tmp"/qemu-user-static_*.deb "$DEST"
fi
"$bin" --version >/dev/null
echo "$bin"
