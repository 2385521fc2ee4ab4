#!/usr/bin/env bash
# Publishes what `make image` built: pushes each image's OCI index to
# REGISTRY/glance-krm-<image>:TAG, signs the index and every platform image
# with cosign, and attaches, signed, each platform image's SPDX SBOM and the
# index's SLSA provenance (cosign attest). With --key it signs with that
# key and uploads nothing to a transparency log (what the tests do on a
# registry on loopback); without, keyless, as the release workflow does
# with its OIDC identity. Prints each image's reference by digest: the one
# to pin.
# Usage: hack/release.sh REGISTRY TAG [--key cosign.key] [--allow-http-registry]
set -euo pipefail
cd "$(dirname "$0")/.."
registry="${1:?usage: hack/release.sh REGISTRY TAG [--key K] [--allow-http-registry]}"
tag="${2:?usage: hack/release.sh REGISTRY TAG [--key K] [--allow-http-registry]}"
shift 2
cosign="${COSIGN_BIN:-cosign}"
sign=(--yes)
push=()
while [ $# -gt 0 ]; do
  case "$1" in
    --key) sign+=(--key "$2" --tlog-upload=false --use-signing-config=false); shift 2 ;;
    --allow-http-registry) sign+=(--allow-http-registry); push+=(-insecure); shift ;;
    *) echo "release: unknown argument $1" >&2; exit 2 ;;
  esac
done
ocipush="$(mktemp -d)/ocipush"
trap 'rm -rf "$(dirname "$ocipush")"' EXIT
go build -o "$ocipush" ./hack/ocipush
for target in fn controller argocd-cmp; do
  out="$("$ocipush" "${push[@]}" "build/oci/$target" "$registry/glance-krm-$target:$tag")"
  ref="$(head -n1 <<<"$out")"
  repo="${ref%@*}"
  "$cosign" sign "${sign[@]}" --recursive "$ref" >&2
  "$cosign" attest "${sign[@]}" --type slsaprovenance1 --predicate "build/oci/$target.provenance.predicate.json" "$ref" >&2
  while read -r platform digest; do
    "$cosign" attest "${sign[@]}" --type spdxjson --predicate "build/oci/$target.${platform#linux/}.spdx.json" "$repo@$digest" >&2
  done < <(tail -n +2 <<<"$out")
  echo "$ref"
done
