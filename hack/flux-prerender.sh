#!/usr/bin/env bash
# flux-prerender.sh OVERLAY OUTDIR: render a kustomization that runs
# glance-krm into a folder Flux's kustomize-controller builds as it is
# (no plugins): OUTDIR/resources.yaml and OUTDIR/kustomization.yaml.
#
# Run it in CI on every change, then publish OUTDIR (`flux push artifact
# oci://… --path OUTDIR …`, or commit it). OUTDIR/resources.yaml from the
# previous run is read first: the rendered copies it holds are carried over
# (glance-krm-fn keep-history, at most three per Glance and kind), so that
# Flux, which prunes what leaves its output as soon as it applied the new
# set, keeps the configuration the old pods mount until they are replaced.
#
# Environment: KUSTOMIZE (default: kustomize on PATH), GLANCE_KRM_FN
# (default: glance-krm-fn on PATH), CONFIG (default:
# OVERLAY/glance-krm.yaml, the function configuration the overlay uses;
# without one, the defaults).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 OVERLAY OUTDIR" >&2
  exit 2
fi
overlay=$1 out=$2
kustomize=${KUSTOMIZE:-kustomize}
fnbin=${GLANCE_KRM_FN:-glance-krm-fn}
config=${CONFIG:-$overlay/glance-krm.yaml}
mkdir -p "$out"
tmp=$(mktemp "$out/.resources.XXXXXX")
trap 'rm -f "$tmp"' EXIT
args=(keep-history --previous "$out/resources.yaml")
if [ -f "$config" ]; then args+=(--config "$config"); fi
"$kustomize" build --enable-alpha-plugins --enable-exec "$overlay" | "$fnbin" "${args[@]}" > "$tmp"
chmod 0644 "$tmp"
mv "$tmp" "$out/resources.yaml"
cat > "$out/kustomization.yaml" <<'EOT'
# Written by glance-krm's hack/flux-prerender.sh: the rendered output of an
# overlay, for a builder without plugins (Flux). Do not edit; render again.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - resources.yaml
EOT
