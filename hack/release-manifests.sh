#!/usr/bin/env bash
# Writes a release's install manifests into OUT: glance-krm-crds.yaml (the
# CRDs of krm/crds) and glance-krm-controller.yaml (controller/config with
# its image pinned to the released index's digest), what users apply:
#   kubectl apply -f glance-krm-crds.yaml -f glance-krm-controller.yaml
# Usage: hack/release-manifests.sh CONTROLLER_REF OUT
# (CONTROLLER_REF: repository@sha256:…, as hack/release.sh prints it)
set -euo pipefail
cd "$(dirname "$0")/.."
ref="${1:?usage: hack/release-manifests.sh REPOSITORY@sha256:DIGEST OUT}"
out="${2:?usage: hack/release-manifests.sh REPOSITORY@sha256:DIGEST OUT}"
case "$ref" in
  *@sha256:*) ;;
  *) echo "release-manifests: $ref is not pinned by digest (repository@sha256:…)" >&2; exit 2 ;;
esac
kustomize="${KUSTOMIZE_BIN:-kustomize}"
mkdir -p "$out"
for crd in krm/crds/*.yaml; do
  echo "---"
  cat "$crd"
done > "$out/glance-krm-crds.yaml"
overlay="$(mktemp -d build/release-XXXXXX)"
trap 'rm -rf "$overlay"' EXIT
cat > "$overlay/kustomization.yaml" <<EOK
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../controller/config
images:
  - name: glance-krm-controller
    newName: ${ref%@*}
    digest: ${ref#*@}
EOK
"$kustomize" build "$overlay" > "$out/glance-krm-controller.yaml"
echo "$out/glance-krm-crds.yaml"
echo "$out/glance-krm-controller.yaml"
