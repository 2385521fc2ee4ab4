#!/usr/bin/env bash
# Builds the function and controller images from the binaries `make build`
# wrote, with docker (when its engine answers), podman or buildah.
# Usage: hack/image.sh TAG
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-dev}"
source hack/containers/env.sh
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  build() { docker build -q -f "$1" -t "$2" .; }
elif command -v podman >/dev/null; then
  build() { podman build -q --isolation chroot -f "$1" -t "$2" .; }
elif command -v buildah >/dev/null; then
  build() { buildah bud -q --isolation chroot -f "$1" -t "$2" .; }
else
  echo "no docker engine, podman or buildah: make deps-containers installs podman and buildah" >&2
  exit 1
fi
build build/fn.Dockerfile "ghcr.io/c5c3/glance-krm-fn:$tag"
build build/controller.Dockerfile "ghcr.io/c5c3/glance-krm-controller:$tag"
build build/argocd-cmp.Dockerfile "ghcr.io/c5c3/glance-krm-argocd-cmp:$tag"
