#!/usr/bin/env bash
# Prints the path of a static busybox for the Argo CD sidecar image (a
# scratch image: a dynamically linked busybox would not start there), for
# ARCH (a Debian architecture: amd64, arm64; the host's by default). It
# comes from Debian's busybox-static package, unpacked into the cache
# without installing it (busybox-static conflicts with the busybox a host
# may have), and is checked to have no program interpreter and to be built
# for ARCH, never assumed. Another architecture's package list is read into
# an apt state of its own, so the host's dpkg never gains an architecture.
# The package's purl (name, version, architecture, release) is kept beside
# the binary, in purl, for the image's SBOM.
# Usage: hack/static-busybox.sh [ARCH]
set -euo pipefail
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
host="$(dpkg --print-architecture)"
arch="${1:-$host}"
case "$arch" in
  amd64) machine="Advanced Micro Devices X86-64" ;;
  arm64) machine="AArch64" ;;
  *) echo "static-busybox: no busybox for architecture $arch (amd64, arm64)" >&2; exit 2 ;;
esac
DEST="$CACHE/busybox-static"
[ "$arch" = "$host" ] || DEST="$CACHE/busybox-static-$arch"
bin="$DEST/bin/busybox"
static() {
  ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter' &&
    readelf -h "$1" 2>/dev/null | grep -q "Machine: *$machine$"
}
if [ ! -x "$bin" ] || [ ! -s "$DEST/purl" ] || ! static "$bin"; then
  command -v readelf >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils >/dev/null; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  if [ "$arch" = "$host" ]; then
    (cd "$tmp" && apt-get download busybox-static >/dev/null 2>&1) || {
      apt-get update -qq >&2 && (cd "$tmp" && apt-get download busybox-static >&2); }
  else
    state="$CACHE/apt-$arch"
    mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
    apt=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o "Dir::State::Lists=$state/lists"
      -o "Dir::Cache=$state/cache" -o "Dir::State::status=/dev/null" -o "Acquire::Languages=none" -o "Debug::NoLocking=1")
    (cd "$tmp" && apt-get "${apt[@]}" download "busybox-static:$arch" >/dev/null 2>&1) || {
      apt-get "${apt[@]}" update -qq >&2 && (cd "$tmp" && apt-get "${apt[@]}" download "busybox-static:$arch" >&2); }
  fi
  rm -rf "$DEST" && mkdir -p "$DEST"
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$DEST/root"
  mkdir -p "$DEST/bin" && cp "$DEST/root/bin/busybox" "$bin"
  version="$(dpkg-deb -f "$tmp"/busybox-static_*.deb Version)"
  codename="$(sed -n "s/^VERSION_CODENAME=//p" /etc/os-release)"
  echo "pkg:deb/debian/busybox-static@${version//:/%3A}?arch=$arch&distro=$codename" > "$DEST/purl"
fi
if ! static "$bin"; then
  echo "static-busybox: $bin is not a static $arch ($machine) executable; the sidecar image needs one" >&2
  exit 1
fi
echo "$bin"
