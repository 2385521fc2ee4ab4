#!/usr/bin/env bash
# Prints the path of sigstore policy-controller's ClusterImagePolicy CRD
# (config/300-clusterimagepolicy.yaml) at POLICY_CONTROLLER_VERSION, from
# the Go module proxy's copy of its repository (go mod download keeps it
# in the module cache; nothing of it enters go.mod). tests/admission
# holds examples/argocd/clusterimagepolicy.yaml to it.
set -euo pipefail

V="${POLICY_CONTROLLER_VERSION:-v0.13.1}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
dir="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/sigstore/policy-controller@$V" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
crd="$dir/config/300-clusterimagepolicy.yaml"
[ -f "$crd" ] || { echo "policy-controller $V: no $crd" >&2; exit 1; }
echo "$crd"
