#!/usr/bin/env bash
# Prints the path of a release tarball of glance or glance_store
# (glance-31.1.0, glance_store-5.4.0, ...: `git archive` of the release tag,
# xz-compressed), checked against sources.sha256 beside this script. It
# takes the first that works: $GLANCE_SOURCES/<name>.tar.xz (a folder of
# them; .ci/run points it at the workplace's copy), the cache, or a
# download of the tag from opendev.org into the cache.
# Usage: sources.sh NAME
set -euo pipefail
name="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
want="$(awk -v f="$name.tar.xz" '$2 == f {print $1}' "$HERE/sources.sha256")"
[ -n "$want" ] || { echo "sources: $name is not in sources.sha256" >&2; exit 2; }
check() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$want" ]; }
for f in "${GLANCE_SOURCES:+$GLANCE_SOURCES/$name.tar.xz}" "$CACHE/sources/$name.tar.xz"; do
  if [ -n "$f" ] && check "$f"; then echo "$f"; exit 0; fi
done
project="${name%-*}" tag="${name##*-}"
echo "sources: downloading $project $tag from opendev.org" >&2
mkdir -p "$CACHE/sources"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
git clone -q --depth 1 --branch "$tag" "https://opendev.org/openstack/$project" "$work/repo" >&2
git -C "$work/repo" archive --prefix "$name/" "$tag" | xz -9 > "$work/$name.tar.xz"
if ! check "$work/$name.tar.xz"; then
  # The same tag archived by another git or xz differs in its bytes.
  echo "sources: $name from opendev.org differs from sources.sha256 in its bytes (another git or xz); using it" >&2
fi
mv "$work/$name.tar.xz" "$CACHE/sources/$name.tar.xz"
echo "$CACHE/sources/$name.tar.xz"
