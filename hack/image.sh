#!/usr/bin/env bash
# Builds every image glance-krm ships from the top-level Dockerfile, from
# the binaries `make build` and `make build-cross` wrote:
# - each target for the host's platform as a local image NAME:TAG (what
#   podman runs and the test node imports), with docker (when its engine
#   answers), podman or buildah;
# - each target for every platform in PLATFORMS as one OCI image index,
#   written as an OCI layout to OUT/<target> (build/oci by default; its
#   digest in OUT/<target>.digest), with buildah: no RUN step, so no emulation.
#   The layers' times are SOURCE_DATE_EPOCH (the last commit's), so the same
#   binaries give the same digest;
# - for each index, an SPDX SBOM per platform and an in-toto SLSA provenance
#   statement beside it (OUT/<target>.<arch>.spdx.json,
#   <target>.provenance.json; hack/attest), which a release attaches to
#   the index it pushes.
# Usage: [OUT=dir] hack/image.sh TAG
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-dev}"
platforms="${PLATFORMS:-linux/amd64 linux/arm64}"
out="${OUT:-build/oci}"
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
rm -rf "$out" && mkdir -p "$out"
attest="$(mktemp -d)/attest"
trap 'rm -rf "$(dirname "$attest")"' EXIT
go build -o "$attest" ./hack/attest
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
dirty=false
[ -z "$(git status --porcelain 2>/dev/null)" ] || dirty=true
for target in fn controller argocd-cmp; do
  name="ghcr.io/c5c3/glance-krm-$target"
  build "$target" "$name:$tag" >/dev/null
  # --manifest adds to a list of that name: start from none.
  buildah manifest rm "$name:$tag-index" >/dev/null 2>&1 || true
  # One platform at a time: built side by side, they join the index in
  # the order they finish, and the index's digest would vary with it.
  for platform in $platforms; do
    buildah build -q --no-cache --isolation chroot --timestamp "$epoch" --platform "$platform" \
      --target "$target" --manifest "$name:$tag-index" . >/dev/null
  done
  buildah manifest push -q --all --format oci --digestfile "$out/$target.digest" \
    "$name:$tag-index" "oci:$out/$target:$tag"
  buildah manifest rm "$name:$tag-index" >/dev/null
  purls=() # what has no Go build info: the sidecar's Debian busybox
  if [ "$target" = argocd-cmp ]; then
    for p in build/argocd-cmp/linux_*/busybox.purl; do
      arch="${p#build/argocd-cmp/linux_}"
      purls+=(-purl "/bin/busybox@${arch%%/*}=$(cat "$p")")
    done
  fi
  "$attest" -layout "$out/$target" -image "$name" -commit "$commit" -dirty="$dirty" -epoch "$epoch" "${purls[@]}" >/dev/null
  echo "$name:$tag $(cat "$out/$target.digest") ($platforms)"
done
# The indexes' images, untagged now, would pile up run after run.
buildah rmi --prune >/dev/null 2>&1 || true
