#!/usr/bin/env bash
# flux-prerender.sh OVERLAY OUTDIR: render a kustomization that runs
# glance-krm into folders Flux's kustomize-controller builds as they are
# (no plugins), one per sync wave, in the order they are applied:
#   OUTDIR/0-prepare   the rendered files, Services, NetworkPolicies, RBAC
#                      and the db-sync Job (expand, migrate)
#   OUTDIR/1-workload  the Deployments
#   OUTDIR/2-after     the db-contract Job, the store drains, the HPA, PDB,
#                      HTTPRoute, db-purge CronJob, the Glance and its
#                      GlanceBackends
# each with resources.yaml and a kustomization.yaml naming it. Objects of
# your own go by their argocd.argoproj.io/sync-wave (none: the first).
# Three Flux Kustomizations apply them, each dependsOn the one before and
# wait: true (examples/flux/flux.yaml).
#
# Run it in CI on every change, then publish OUTDIR (`flux push artifact
# oci://… --path OUTDIR …`, or commit it). What the folders held from the
# previous run is read first: the rendered copies the build no longer
# holds are carried over into 0-prepare (glance-krm-fn keep-history, at
# most three per Glance and kind), so that Flux, which prunes what leaves
# its output as soon as it applied the new set, keeps the configuration
# the old pods mount until they are replaced. A single-folder OUTDIR an
# earlier version of this script wrote is read the same way, then its two
# files are removed.
#
# What Flux applies is exactly what kustomize built, each object byte for
# byte (the function does not run again: a base's functionConfig, an
# overlay's patches and images: all hold), followed by the carried copies.
#
# Environment: KUSTOMIZE (default: kustomize on PATH), GLANCE_KRM_FN
# (default: the exec path the build declares for glance-krm, in OVERLAY or
# any kustomization it builds on; else glance-krm-fn on PATH).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 OVERLAY OUTDIR" >&2
  exit 2
fi
overlay=$1 out=$2
kustomize=${KUSTOMIZE:-kustomize}

# declared DIR: the exec path of the glance-krm function a kustomization
# (or one it builds on: resources, components, bases) declares, resolved
# as kustomize resolves it, from the declaring kustomization's folder.
declared() {
  local dir=$1 k="" f p r
  for f in kustomization.yaml kustomization.yml Kustomization; do
    if [ -f "$dir/$f" ]; then k=$dir/$f; break; fi
  done
  [ -n "$k" ] || return 1
  for f in "$dir"/*.yaml "$dir"/*.yml; do
    if [ ! -f "$f" ] || ! grep -q 'config.kubernetes.io/function' "$f"; then continue; fi
    p=$(awk '/exec:/ {e = 1} e && /path:/ {print $2; exit}' "$f")
    case $p in
      */glance-krm-fn*|glance-krm-fn*) ;;
      *) continue ;;
    esac
    case $p in /*) echo "$p" ;; *) echo "$dir/$p" ;; esac
    return 0
  done
  while read -r r; do
    if [ -d "$dir/$r" ] && declared "$dir/$r"; then return 0; fi
  done < <(awk '
    /^(resources|components|bases): *\[/ { s = $0; sub(/^[^[]*\[/, "", s); sub(/\].*$/, "", s); n = split(s, a, ","); for (i = 1; i <= n; i++) { gsub(/[ "\047]/, "", a[i]); print a[i] }; next }
    /^(resources|components|bases):/ { l = 1; next }
    /^[^ #-]/ { l = 0 }
    l && /^ *- / { print $2 }' "$k")
  return 1
}
fnbin=${GLANCE_KRM_FN:-$(declared "$overlay" || echo glance-krm-fn)}
mkdir -p "$out"
build=$(mktemp)
trap 'rm -f "$build"' EXIT
# The build whole first: a build that fails writes nothing.
"$kustomize" build --enable-alpha-plugins --enable-exec "$overlay" > "$build"
"$fnbin" flux-steps "$out" < "$build"
