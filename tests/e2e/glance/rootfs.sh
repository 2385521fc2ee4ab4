#!/usr/bin/env bash
# Prints a root file system built with mmdebstrap from Debian's packages
# alone, once, into the cache outside the repository (the mirror may serve
# a frozen snapshot of sid, so the Release file's expiry is not checked);
# it is rebuilt only when its name, its package list or this script
# change, and the host's apt sources are never touched. NAME is one of:
#
#   bookworm, trixie, sid  Debian's glance-api of that suite (2022.2,
#                          2025.1, 2026.2), its S3 driver, uwsgi;
#   2025.2, 2026.1         a release Debian does not ship: a copy of the
#                          nearest suite's root file system (trixie's
#                          Python 3.13 for 2025.2, sid's 3.14 for 2026.1),
#                          whose packages bring every library, with the
#                          release tarballs of glance and glance_store
#                          (sources.sh, sources.sha256) installed over its
#                          glance with pip, without dependencies;
#   infra                  bookworm's MariaDB and memcached, for the node.
#
# The glance user is uid/gid 42424, the OpenStack images' user the
# generated workload runs as (Debian would pick 64062), so a root file
# system is also a glance image for the test node.
# Usage: rootfs.sh NAME
set -euo pipefail
name="$1"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
HERE="$(cd "$(dirname "$0")" && pwd)"
# pip and pbr install a release from its tarball over a suite's glance.
glance="glance-api,glance-common,python3-glance-store,python3-boto3,uwsgi-core,uwsgi-plugin-python3,python3-pip,python3-pbr,python3-setuptools"
sources="" base=""
case "$name" in
  bookworm | trixie | sid) suite="$name" pkgs="$glance" ;;
  2025.2) base=trixie sources="glance-31.1.0 glance_store-5.2.0" ;;
  2026.1) base=sid sources="glance-32.0.0 glance_store-5.4.0" ;;
  infra) suite=bookworm pkgs="mariadb-server,memcached" ;;
  *) echo "rootfs: unknown name $name" >&2; exit 2 ;;
esac
from=""
if [ -n "$base" ]; then
  from="$(bash "$0" "$base")"
  suite="$base" pkgs="(those of $(basename "$from"))"
fi
key=$(printf '%s\n%s\n%s\n%s\n' "$name" "$pkgs" "$sources" "$from" | cat - "$0" | sha256sum | cut -c1-12)
dest="$CACHE/rootfs/$name-$key"
if [ -f "$dest/.complete" ]; then
  echo "$dest"; exit 0
fi
command -v mmdebstrap >/dev/null || {
  echo "rootfs: installing mmdebstrap from Debian" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >&2
}
tarballs=()
for s in $sources; do
  tarballs+=("$(bash "$HERE/sources.sh" "$s")")
done
rm -rf "$dest.tmp" "$CACHE/rootfs/$name"-*
mkdir -p "$CACHE/rootfs"
sel="$(mktemp)"
trap 'rm -f "$sel"' EXIT
cat > "$sel" <<'SEL'
glance-common glance/configure_db boolean false
glance-common glance/configure_rabbit boolean false
glance-common glance/configure_ksat boolean false
glance-api glance/configure_api-endpoint boolean false
SEL
# Before any package: the glance user at 42424, which the packages' own
# scripts then keep (they create it only when it is missing).
# shellcheck disable=SC2016 # "$1" is the hook's argument, expanded by mmdebstrap's shell
users='echo "glance:x:42424:42424:OpenStack Glance:/var/lib/glance:/bin/false" >> "$1/etc/passwd"
echo "glance:x:42424:" >> "$1/etc/group"'
if [ -n "$from" ]; then
  # pbr takes the version from PBR_VERSION (a tarball has no .git).
  echo "rootfs: $name is $base's root file system with $sources installed over its glance" >&2
  cp -a "$from" "$dest.tmp"
  for t in "${tarballs[@]}"; do
    src=$(basename "$t" .tar.xz); v=${src##*-}
    mkdir -p "$dest.tmp/tmp/src/$src" && tar -xJf "$t" -C "$dest.tmp/tmp/src/$src" --strip-components=1
    chroot "$dest.tmp" env PBR_VERSION="$v" python3 -m pip install --quiet --no-deps --no-build-isolation --no-index \
      --break-system-packages --root-user-action=ignore "/tmp/src/$src" >&2
  done
  rm -rf "$dest.tmp/tmp/src" "$dest.tmp"/usr/lib/python3/dist-packages/glance "$dest.tmp"/usr/lib/python3/dist-packages/glance_store
  chroot "$dest.tmp" python3 -c "import glance, glance_store; print('rootfs:', glance.__file__, glance_store.__file__)" >&2
else
  echo "rootfs: building $name from $suite with $pkgs (a few minutes, once)" >&2
  mmdebstrap --variant=apt --include="$pkgs" --aptopt='APT::Install-Recommends "false"' \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook="$users" \
    --essential-hook="chroot \"\$1\" debconf-set-selections < $sel" \
    "$suite" "$dest.tmp" "$MIRROR" >&2
fi
case "$name" in
  infra) chroot "$dest.tmp" dpkg-query -W mariadb-server memcached > "$dest.tmp/.complete" ;;
  *)
    chroot "$dest.tmp" dpkg-query -W glance-api python3-glance-store python3-oslo.config > "$dest.tmp/.complete"
    [ -z "$sources" ] || echo "over them: $sources (release tarballs, pip install --no-deps)" >> "$dest.tmp/.complete"
    ;;
esac
mv "$dest.tmp" "$dest"
echo "$dest"
