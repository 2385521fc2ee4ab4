#!/usr/bin/env bash
# Writes krm/catalogs/<release>.json for every release glance-krm claims,
# with hack/catalog.py: from Debian's packages where Debian ships the
# release (bookworm on this machine, trixie and sid in the root file
# systems of tests/e2e/glance/rootfs.sh), and from the release tarballs
# installed over the nearest suite's glance otherwise (rootfs.sh 2025.2 and
# 2026.1). Never edit the output by hand. `make e2e-glance` checks every
# one against the Glance it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
# The oslo-config-generator namespaces the Python scripts read (one list,
# krm/catalogs/namespaces.txt); chroot and env pass the environment on.
OSLO_NAMESPACES="$(tr '\n' ' ' < krm/catalogs/namespaces.txt)"
export OSLO_NAMESPACES
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

# Releases Debian does not ship: their release tarballs installed over the
# nearest suite's glance (rootfs.sh 2025.2, 2026.1).
in_rootfs "$(CACHE=$CACHE bash tests/e2e/glance/rootfs.sh 2025.2)" -- 2025.2 trixie > "$out/2025.2.json" 2>/dev/null
in_rootfs "$(CACHE=$CACHE bash tests/e2e/glance/rootfs.sh 2026.1)" -- 2026.1 trixie > "$out/2026.1.json" 2>/dev/null
