#!/usr/bin/env bash
# explain-pr.sh BASE_REF KUSTOMIZATION [OUT]: what a pull request does to
# Glance. Renders KUSTOMIZATION (a path in the repository, with glance-krm
# as transformer) at BASE_REF and in the working tree, and writes
# `glance-krm-fn explain --format markdown` of the two to OUT (default
# glance-krm-explain.md), for a pull-request comment. Any CI can run it.
#
# Exit code: explain's: 0 nothing blocks, 1 a blocking warning (a store
# removed, by default) is not acknowledged, 2 usage or a render failed.
# Acknowledge a warning by its ID in GLANCE_KRM_ACKNOWLEDGE
# (space-separated), e.g. from a pull-request label or comment.
#
# A store's removal after its drain passes with the drain's record
# (docs/day2.md): GLANCE_KRM_DRAIN_RECORDS names files or folders
# (space-separated; a folder: each *.yaml and *.yml in it) holding
# records as `kubectl get configmap -l
# glance.openstack.c5c3.io/component=drain-record -o yaml` prints them,
# committed with the pull request or fetched from the cluster by an
# earlier CI step; each is passed to explain's --drain-record.
#
# Environment: KUSTOMIZE (default: kustomize on PATH), GLANCE_KRM_FN
# (default: glance-krm-fn on PATH), GLANCE_KRM_FAIL_ON (explain's
# --fail-on), GLANCE_KRM_ACKNOWLEDGE, GLANCE_KRM_DRAIN_RECORDS.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 BASE_REF KUSTOMIZATION [OUT]" >&2
  exit 2
fi
base=$1 path=$2 out=${3:-glance-krm-explain.md}
kustomize=${KUSTOMIZE:-kustomize}
fnbin=${GLANCE_KRM_FN:-glance-krm-fn}
top=$(git rev-parse --show-toplevel)
rel=$(realpath --relative-to="$top" "$path")
work=$(mktemp -d)
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() { git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
git -C "$top" worktree add --quiet --detach "$work/base" "$base"

render() { # dir -> file; a failed render is reported, not hidden
  if ! "$kustomize" build --enable-alpha-plugins --enable-exec "$1" > "$2" 2> "$2.err"; then
    echo "rendering $1 failed:" >&2
    cat "$2.err" >&2
    exit 2
  fi
}
render "$work/base/$rel" "$work/before.yaml"
render "$top/$rel" "$work/after.yaml"

args=(explain --format markdown)
if [ -n "${GLANCE_KRM_FAIL_ON+set}" ]; then args+=(--fail-on "$GLANCE_KRM_FAIL_ON"); fi
for id in ${GLANCE_KRM_ACKNOWLEDGE:-}; do args+=(--acknowledge "$id"); done
for rec in ${GLANCE_KRM_DRAIN_RECORDS:-}; do
  if [ -d "$rec" ]; then
    found=0
    for f in "$rec"/*.yaml "$rec"/*.yml; do
      [ -f "$f" ] || continue
      args+=(--drain-record "$f")
      found=1
    done
    [ "$found" = 1 ] || echo "GLANCE_KRM_DRAIN_RECORDS: $rec holds no *.yaml or *.yml record" >&2
  elif [ -f "$rec" ]; then
    args+=(--drain-record "$rec")
  else
    echo "GLANCE_KRM_DRAIN_RECORDS: $rec is no file or folder" >&2
    exit 2
  fi
done
code=0
"$fnbin" "${args[@]}" "$work/before.yaml" "$work/after.yaml" > "$out" || code=$?
cat "$out"
exit "$code"
