#!/usr/bin/env bash
# Prints a root file system built from Debian's packages alone, once, into
# the cache outside the repository; the host's apt sources are never
# touched. NAME is one of:
#
#   bookworm, trixie, sid  Debian's glance-api of that suite (2022.2,
#                          2025.1, 2026.2), its S3 driver, uwsgi;
#   2025.2, 2026.1         a release Debian does not ship: a copy of the
#                          nearest suite's root file system, trixie's
#                          (Python 3.13; sid's oslo.policy 6.0 no longer
#                          registers enforce_scope, which glance 32 reads),
#                          whose packages bring every library, with the
#                          release tarballs of glance and glance_store
#                          (sources.sh, sources.sha256) installed over its
#                          glance with pip, without dependencies;
#   infra                  bookworm's MariaDB and memcached, for the node;
#   gitops                 bookworm's git and redis-server: with Argo CD's
#                          binary, its repo-server (git reads the test's
#                          repository over file://) and its Redis;
#   keystone               bookworm's Keystone (python3-keystone, its
#                          MySQL driver, uwsgi): the Identity service the
#                          tests bootstrap on MariaDB, so tokens are real.
#
# The glance user is uid/gid 42424, the OpenStack images' user the
# generated workload runs as (Debian would pick 64062), so a root file
# system is also a glance image for the test node. Each is rebuilt only
# when what makes it changes: its name, packages or sources, or the text
# of the function below that builds it (the mirror may serve a frozen
# snapshot of sid, so the Release file's expiry is not checked).
# Usage: rootfs.sh NAME
set -euo pipefail
name="$1"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
HERE="$(cd "$(dirname "$0")" && pwd)"

# debian DEST SUITE PACKAGES: mmdebstrap, with the glance user at 42424
# before any package (the packages' scripts keep a user that exists) and
# debconf answered.
debian() {
  local dest="$1" suite="$2" pkgs="$3" sel
  sel="$(mktemp)"
  cat > "$sel" <<'SEL'
glance-common glance/configure_db boolean false
glance-common glance/configure_rabbit boolean false
glance-common glance/configure_ksat boolean false
glance-api glance/configure_api-endpoint boolean false
SEL
  # shellcheck disable=SC2016 # "$1" is the hook's argument, expanded by mmdebstrap's shell
  mmdebstrap --variant=apt --include="$pkgs" --aptopt='APT::Install-Recommends "false"' \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook='echo "glance:x:42424:42424:OpenStack Glance:/var/lib/glance:/bin/false" >> "$1/etc/passwd"; echo "glance:x:42424:" >> "$1/etc/group"' \
    --essential-hook="chroot \"\$1\" debconf-set-selections < $sel" \
    "$suite" "$dest" "$MIRROR" >&2
  rm -f "$sel"
}

# release DEST FROM TARBALL...: a copy of FROM with each tarball installed
# by pip over its glance. pbr takes the version from PBR_VERSION (a
# tarball has no .git) and, without .git, misses package data (alembic.ini,
# templates) and, building glance 32 from its pyproject.toml, whole
# subpackages: pip installs the metadata and entry points, and the package
# itself is copied from the tarball as it is.
release() {
  local dest="$1" from="$2" t src v pkg site; shift 2
  cp -a "$from" "$dest"
  for t in "$@"; do
    src=$(basename "$t" .tar.xz); v=${src##*-}; pkg=${src%-*}
    mkdir -p "$dest/tmp/src/$src" && tar -xJf "$t" -C "$dest/tmp/src/$src" --strip-components=1
    chroot "$dest" env PBR_VERSION="$v" python3 -m pip install --quiet --no-deps --no-build-isolation --no-index \
      --break-system-packages --root-user-action=ignore "/tmp/src/$src" >&2
    site=$(chroot "$dest" python3 -c "import $pkg, os; print(os.path.dirname($pkg.__file__))")
    cp -a "$dest/tmp/src/$src/$pkg/." "$dest$site/"
  done
  rm -rf "$dest/tmp/src" "$dest"/usr/lib/python3/dist-packages/glance "$dest"/usr/lib/python3/dist-packages/glance_store
  chroot "$dest" python3 -c "import glance.api.v2.router, glance.cmd.api, glance_store; print('rootfs:', glance.__file__, glance_store.__file__)" >&2
}

# pip and pbr install a release from its tarball over a suite's glance.
glance="glance-api,glance-common,python3-glance-store,python3-boto3,uwsgi-core,uwsgi-plugin-python3,python3-pip,python3-pbr,python3-setuptools"
case "$name" in
  bookworm | trixie | sid) suite="$name" pkgs="$glance" ;;
  2025.2) base=trixie sources="glance-31.1.0 glance_store-5.2.0" ;;
  2026.1) base=trixie sources="glance-32.0.0 glance_store-5.4.0" ;;
  infra) suite=bookworm pkgs="mariadb-server,memcached" ;;
  gitops) suite=bookworm pkgs="git,redis-server" ;;
  keystone) suite=bookworm pkgs="python3-keystone,python3-pymysql,uwsgi-core,uwsgi-plugin-python3" ;;
  *) echo "rootfs: unknown name $name" >&2; exit 2 ;;
esac
if [ -n "${base:-}" ]; then
  from="$(bash "$0" "$base")"
  key=$(printf '%s\n' "$name" "$from" "$sources" "$(declare -f release)" | sha256sum | cut -c1-12)
else
  key=$(printf '%s\n' "$name" "$suite" "$pkgs" "$(declare -f debian)" | sha256sum | cut -c1-12)
fi
dest="$CACHE/rootfs/$name-$key"
if [ -f "$dest/.complete" ]; then
  echo "$dest"; exit 0
fi
rm -rf "$dest.tmp" "$CACHE/rootfs/$name"-*
mkdir -p "$CACHE/rootfs"
if [ -n "${base:-}" ]; then
  tarballs=()
  for s in $sources; do
    tarballs+=("$(bash "$HERE/sources.sh" "$s")")
  done
  echo "rootfs: $name is $base's root file system with $sources installed over its glance" >&2
  release "$dest.tmp" "$from" "${tarballs[@]}"
else
  # rootfs-all.sh builds two at once: on a fresh machine both would run
  # apt-get, and the second fail on apt's lock. One installs, under a
  # lock of our own; the other waits and finds it installed.
  command -v mmdebstrap >/dev/null || (
    mkdir -p "$CACHE"
    flock 9
    command -v mmdebstrap >/dev/null && exit 0
    echo "rootfs: installing mmdebstrap from Debian" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >&2
  ) 9> "$CACHE/.apt.lock"
  echo "rootfs: building $name from $suite with $pkgs (a few minutes, once)" >&2
  debian "$dest.tmp" "$suite" "$pkgs"
fi
case "$name" in
  infra) chroot "$dest.tmp" dpkg-query -W mariadb-server memcached > "$dest.tmp/.complete" ;;
  keystone) chroot "$dest.tmp" dpkg-query -W python3-keystone python3-pymysql uwsgi-core > "$dest.tmp/.complete" ;;
  gitops) chroot "$dest.tmp" dpkg-query -W git redis-server > "$dest.tmp/.complete" ;;
  *)
    chroot "$dest.tmp" dpkg-query -W glance-api python3-glance-store python3-oslo.config > "$dest.tmp/.complete"
    [ -z "${sources:-}" ] || echo "over them: $sources (release tarballs, pip install --no-deps)" >> "$dest.tmp/.complete"
    ;;
esac
mv "$dest.tmp" "$dest"
echo "$dest"
