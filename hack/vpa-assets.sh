#!/usr/bin/env bash
# Prints the path of the VerticalPodAutoscaler's recommender, built once
# into the cache from the module go.mod pins (k8s.io/autoscaler/
# vertical-pod-autoscaler, whose Go types and CRD the function and the
# tests already use). The module's go.mod carries exclude directives, so
# `go install pkg@version` refuses it: it is built inside a copy of the
# module, as its own main module.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
MODULE=k8s.io/autoscaler/vertical-pod-autoscaler
version="$(cd "$ROOT" && go list -m -f '{{.Version}}' "$MODULE")"
DEST="$CACHE/vpa-recommender-$version"
if [ -x "$DEST/vpa-recommender" ]; then
  echo "$DEST/vpa-recommender"; exit 0
fi
printf 'vpa assets: building the recommender of %s %s\n' "$MODULE" "$version" >&2
dir="$(cd "$ROOT" && go mod download -json "$MODULE@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
cp -r "$dir" "$WORK/src" && chmod -R u+w "$WORK/src"
rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp"
(cd "$WORK/src" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$DEST.tmp/vpa-recommender" ./pkg/recommender >&2)
rm -rf "$DEST" && mv "$DEST.tmp" "$DEST"
echo "$DEST/vpa-recommender"
