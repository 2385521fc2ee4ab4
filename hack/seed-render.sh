#!/usr/bin/env bash
# Renders every case of krm/testdata/seed/render/<case>/input.yaml with the
# seed operator's own code (C5C3/cobaltcore at SEED_COMMIT) into
# <case>/seed.json (the config files) and <case>/seed-workload.json (the
# objects its reconcilers build), which fn/glancekrm's seed parity tests compare
# glance-krm's output with, option by option. It builds a copy of the seed
# operator in the cache with hack/seedrender's driver beside its
# controller package; nothing of the seed is copied into this repository.
# The seed's external-secrets API module (a pseudo-version the Go module
# proxy does not serve) is replaced by the API packages of
# external-secrets v0.16.2, which the seed only uses for its runtime
# watches, not for rendering.
# Usage: SEED_SRC=<git dir of C5C3/cobaltcore> hack/seed-render.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SEED_COMMIT=da0515f0
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
: "${SEED_SRC:?set SEED_SRC to a git checkout or mirror of C5C3/cobaltcore}"
work="$CACHE/seedrender/$SEED_COMMIT"
if [ ! -f "$work/.ready" ]; then
  rm -rf "$work" && mkdir -p "$work"
  git -C "$SEED_SRC" archive "$SEED_COMMIT" operators/glance internal/common | tar -x -C "$work"
  eso="$(GOFLAGS=-mod=mod go mod download -json github.com/external-secrets/external-secrets@v0.16.2 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
  cp -r "$eso/apis" "$work/eso-apis" && chmod -R u+w "$work/eso-apis"
  find "$work/eso-apis" -name '*_test.go' -delete
  grep -rl NewWebhookManagedBy "$work/eso-apis" | xargs rm -f
  printf 'module github.com/external-secrets/external-secrets/apis\n\ngo 1.24\n\nrequire (\n\tk8s.io/apimachinery v0.36.4\n\tsigs.k8s.io/controller-runtime v0.24.1\n)\n' > "$work/eso-apis/go.mod"
  (cd "$work/operators/glance" && go mod edit -replace github.com/external-secrets/external-secrets/apis=../../eso-apis)
  touch "$work/.ready"
fi
cp hack/seedrender/zz_glancekrm_render_test.go.in "$work/operators/glance/internal/controller/zz_glancekrm_render_test.go"
for input in krm/testdata/seed/render/*/input.yaml; do
  abs="$(pwd)/$input"; out="$(pwd)/$(dirname "$input")/seed.json"; wout="$(pwd)/$(dirname "$input")/seed-workload.json"
  (cd "$work/operators/glance" && GLANCE_KRM_INPUT="$abs" GLANCE_KRM_OUTPUT="$out" GLANCE_KRM_WORKLOAD_OUTPUT="$wout" \
    GOFLAGS=-mod=mod go test -count=1 -run TestGlanceKRMRender ./internal/controller/ >/dev/null) || {
      echo "seed-render: the seed could not render $input" >&2; exit 1; }
  echo "seed-render: $out"
done
