#!/usr/bin/env bash
# Prints the path of a static busybox for the Argo CD sidecar image (a
# scratch image: a dynamically linked busybox would not start there). It
# comes from Debian's busybox-static package, unpacked into the cache
# without installing it (busybox-static conflicts with the busybox a host
# may have), and is checked to have no program interpreter, never assumed.
set -euo pipefail
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
DEST="$CACHE/busybox-static"
bin="$DEST/bin/busybox"
static() { ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter' && readelf -h "$1" >/dev/null 2>&1; }
if [ ! -x "$bin" ] || ! static "$bin"; then
  command -v readelf >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils >/dev/null; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download busybox-static >/dev/null 2>&1) || {
    apt-get update -qq >&2 && (cd "$tmp" && apt-get download busybox-static >&2); }
  rm -rf "$DEST" && mkdir -p "$DEST"
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$DEST/root"
  mkdir -p "$DEST/bin" && cp "$DEST/root/bin/busybox" "$bin"
fi
if ! static "$bin"; then
  echo "static-busybox: $bin is dynamically linked; the sidecar image needs a static one" >&2
  exit 1
fi
echo "$bin"
