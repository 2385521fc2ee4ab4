#!/usr/bin/env bash
# Writes krm/v1alpha1/zz_generated.secret_options.go with
# hack/secret-options.py: a scan of the Glance of every release
# glance-krm has an option catalog for, where hack/generate-catalogs.sh
# reads it (bookworm on this machine; trixie, sid and the release
# tarballs of 2025.2 and 2026.1 in the root file systems of
# tests/e2e/glance/rootfs.sh), then their union. Never edit the output by
# hand; `make unit` checks it against the same Glances.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
# The oslo-config-generator namespaces the Python scripts read (one list,
# krm/catalogs/namespaces.txt); chroot and env pass the environment on.
OSLO_NAMESPACES="$(tr '\n' ' ' < krm/catalogs/namespaces.txt)"
export OSLO_NAMESPACES
scans="$(mktemp -d)"
trap 'rm -rf "$scans"' EXIT

LANG=C.UTF-8 PYTHONPATH='' /usr/bin/python3 hack/secret-options.py scan 2022.2 > "$scans/2022.2.json"
for r in trixie:2025.1 2025.2:2025.2 2026.1:2026.1 sid:2026.2; do
  R="$(CACHE=$CACHE bash tests/e2e/glance/rootfs.sh "${r%%:*}")"
  cp hack/secret-options.py "$R/tmp/secret-options.py"
  chroot "$R" env LANG=C.UTF-8 PYTHONPATH='' python3 /tmp/secret-options.py scan "${r#*:}" > "$scans/${r#*:}.json"
  rm -f "$R/tmp/secret-options.py"
done
/usr/bin/python3 hack/secret-options.py write "$scans"/*.json > krm/v1alpha1/zz_generated.secret_options.go
gofmt -w krm/v1alpha1/zz_generated.secret_options.go
