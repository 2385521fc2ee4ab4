#!/usr/bin/env bash
# Builds every image glance-krm ships from the top-level Dockerfile, from
# the binaries `make build` and `make build-cross` wrote:
# - each target for the host's platform as a local image NAME:TAG (what
#   podman runs and the test node imports), with docker (when its engine
#   answers), podman or buildah;
# - each target for every platform in PLATFORMS as one OCI image index,
#   written as an OCI layout to build/oci/<target> (its digest in
#   build/oci/<target>.digest), with buildah: no RUN step, so no emulation.
#   The layers' times are SOURCE_DATE_EPOCH (the last commit's), so the same
#   binaries give the same digest.
# Usage: hack/image.sh TAG
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-dev}"
platforms="${PLATFORMS:-linux/amd64 linux/arm64}"
source hack/containers/env.sh
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  build() { docker build -q --target "$1" -t "$2" .; }
elif command -v podman >/dev/null; then
  build() { podman build -q --isolation chroot --target "$1" -t "$2" .; }
elif command -v buildah >/dev/null; then
  build() { buildah bud -q --isolation chroot --target "$1" -t "$2" .; }
else
  echo "no docker engine, podman or buildah: make deps-containers installs podman and buildah" >&2
  exit 1
fi
command -v buildah >/dev/null || { echo "the OCI image indexes need buildah: make deps-containers installs it" >&2; exit 1; }
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
rm -rf build/oci && mkdir -p build/oci
for target in fn controller argocd-cmp; do
  name="ghcr.io/c5c3/glance-krm-$target"
  build "$target" "$name:$tag" >/dev/null
  # --manifest adds to a list of that name: start from none.
  buildah manifest rm "$name:$tag-index" >/dev/null 2>&1 || true
  buildah build -q --isolation chroot --timestamp "$epoch" --platform "${platforms// /,}" \
    --target "$target" --manifest "$name:$tag-index" . >/dev/null
  buildah manifest push -q --all --format oci --digestfile "build/oci/$target.digest" \
    "$name:$tag-index" "oci:build/oci/$target:$tag"
  echo "$name:$tag $(cat "build/oci/$target.digest") ($platforms)"
done
