#!/usr/bin/env bash
# Prints a root file system of Debian SUITE with glance-api and its S3
# driver (and uwsgi, for releases without a standalone server), built with
# mmdebstrap from Debian's packages alone, once, into the cache outside the
# repository (the mirror may serve a frozen snapshot of sid, so the Release
# file's expiry is not checked). It is rebuilt only when the suite, the package list or this
# script change; the host's apt sources are never touched.
# Usage: rootfs.sh SUITE
set -euo pipefail
suite="$1"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
pkgs="glance-api,glance-common,python3-glance-store,python3-boto3,uwsgi-core,uwsgi-plugin-python3"
key=$(printf '%s\n%s\n' "$suite" "$pkgs" | cat - "$0" | sha256sum | cut -c1-12)
dest="$CACHE/rootfs/$suite-$key"
if [ -f "$dest/.complete" ]; then
  echo "$dest"; exit 0
fi
command -v mmdebstrap >/dev/null || {
  echo "rootfs: installing mmdebstrap from Debian" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >&2
}
rm -rf "$dest.tmp" "$CACHE/rootfs/$suite"-*
mkdir -p "$CACHE/rootfs"
sel="$(mktemp)"
trap 'rm -f "$sel"' EXIT
cat > "$sel" <<'SEL'
glance-common glance/configure_db boolean false
glance-common glance/configure_rabbit boolean false
glance-common glance/configure_ksat boolean false
glance-api glance/configure_api-endpoint boolean false
SEL
echo "rootfs: building $suite with $pkgs (a few minutes, once)" >&2
mmdebstrap --variant=apt --include="$pkgs" --aptopt='APT::Install-Recommends "false"' \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --essential-hook="chroot \"\$1\" debconf-set-selections < $sel" \
  "$suite" "$dest.tmp" "$MIRROR" >&2
chroot "$dest.tmp" dpkg-query -W glance-api python3-glance-store python3-oslo.config > "$dest.tmp/.complete"
mv "$dest.tmp" "$dest"
echo "$dest"
