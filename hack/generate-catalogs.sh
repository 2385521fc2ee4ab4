#!/usr/bin/env bash
# Writes krm/catalogs/<release>.json for every release glance-krm claims,
# with hack/catalog.py: from Debian's packages where Debian ships the
# release (bookworm on this machine, trixie and sid in the root file
# systems of tests/e2e/glance/rootfs.sh), and from glance's and
# glance_store's sources at the release's tag otherwise (git checkouts of
# openstack/glance and openstack/glance_store in GLANCE_SRC and
# GLANCE_STORE_SRC; skipped with a message when they are absent). Never
# edit the output by hand. `make e2e-glance` checks the Debian ones.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
out=krm/catalogs

/usr/bin/python3 hack/catalog.py 2022.2 bookworm > "$out/2022.2.json"
in_rootfs() { # ROOTFS ENV... -- ARGS: runs catalog.py chrooted
  local R="$1"; shift
  cp hack/catalog.py "$R/tmp/catalog.py"
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  chroot "$R" env "${envs[@]}" python3 /tmp/catalog.py "$@"
  rm -f "$R/tmp/catalog.py"
}
trixie="$(CACHE=$CACHE bash tests/e2e/glance/rootfs.sh trixie)"
sid="$(CACHE=$CACHE bash tests/e2e/glance/rootfs.sh sid)"
in_rootfs "$trixie" -- 2025.1 trixie > "$out/2025.1.json" 2>/dev/null
in_rootfs "$sid" -- 2026.2 sid > "$out/2026.2.json" 2>/dev/null

# Releases Debian does not ship: the sources at the release's tag, on sid's
# python and oslo libraries.
for spec in "2025.2 31.0.0 stable/2025.2" "2026.1 32.0.0 stable/2026.1"; do
  read -r -a parts <<< "$spec"; set -- "${parts[@]}"
  if [ -z "${GLANCE_SRC:-}" ] || [ -z "${GLANCE_STORE_SRC:-}" ]; then
    echo "generate-catalogs: GLANCE_SRC/GLANCE_STORE_SRC unset: $1 kept as committed" >&2
    continue
  fi
  rm -rf "$sid/tmp/src" && mkdir -p "$sid/tmp/src/glance" "$sid/tmp/src/glance_store"
  git -C "$GLANCE_SRC" archive "$2" glance | tar -x -C "$sid/tmp/src/glance"
  git -C "$GLANCE_STORE_SRC" archive "$3" glance_store | tar -x -C "$sid/tmp/src/glance_store"
  source="sources: glance $2 ($(git -C "$GLANCE_SRC" rev-parse "$2")), glance_store $(git -C "$GLANCE_STORE_SRC" describe --tags "$3") ($(git -C "$GLANCE_STORE_SRC" rev-parse "$3")), with Debian sid's oslo libraries"
  in_rootfs "$sid" PYTHONPATH=/tmp/src/glance:/tmp/src/glance_store CATALOG_SOURCE="$source" -- "$1" source > "$out/$1.json" 2>/dev/null
  rm -rf "$sid/tmp/src"
done
