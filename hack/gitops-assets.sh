#!/usr/bin/env bash
# Prints a folder with the GitOps engines the test node runs (make
# e2e-gitops): Argo CD's multi-call binary (application controller,
# repo-server, cmp-server), Flux's source-controller and
# kustomize-controller, kube-router (NetworkPolicy enforcement, test
# only), with their upstream install manifests in argocd-config/ and
# flux-config/. Where GLANCE_KRM_GITOPS_TOOLS names a folder of prebuilt
# ones (NAME.xz and SHA256SUMS, argocd-config/, flux-config/: what
# hack/gitops/build-from-source.sh writes with COMPRESS=1; .ci/run sets it
# when CI provides one), they are unpacked from it after their checksums
# are checked; otherwise, or where a checksum fails, that script builds
# them from the Go module proxy (argocd needs the go1.27.3 toolchain,
# fetched from the proxy; about 25 minutes). Built or unpacked once into
# the cache.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
TOOLS="${GLANCE_KRM_GITOPS_TOOLS:-}"
NAMES="argocd source-controller kustomize-controller kube-router"
say() { printf 'gitops assets: %s\n' "$*" >&2; }

# The versions are the build script's; the key changes with it.
key=$(sha256sum "$ROOT/hack/gitops/build-from-source.sh" "$0" | sha256sum | cut -c1-12)
DEST="$CACHE/gitops-$key"
if [ -f "$DEST/.complete" ]; then
  echo "$DEST"; exit 0
fi
rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp"
if [ -n "$TOOLS" ] && [ -f "$TOOLS/SHA256SUMS" ] && (cd "$TOOLS" && sha256sum --quiet -c SHA256SUMS) >&2; then
  say "unpacking the prebuilt binaries of $TOOLS"
  for n in $NAMES; do
    xz -dc "$TOOLS/$n.xz" > "$DEST.tmp/$n"
    chmod 0755 "$DEST.tmp/$n"
  done
  cp -r "$TOOLS/argocd-config" "$TOOLS/flux-config" "$DEST.tmp/"
  chmod -R u+w "$DEST.tmp"
  from="prebuilt, $TOOLS"
else
  say "no prebuilt tools (GLANCE_KRM_GITOPS_TOOLS=${TOOLS:-unset}, or a checksum failed): building them from the Go module proxy (about 25 minutes, once)"
  bash "$ROOT/hack/gitops/build-from-source.sh" "$DEST.tmp" >&2
  from="built from the module proxy by hack/gitops/build-from-source.sh"
fi
if [ ! -f "$DEST.tmp/argocd-config/core-install.yaml" ]; then
  xz -dc "$DEST.tmp/argocd-config/core-install.yaml.xz" > "$DEST.tmp/argocd-config/core-install.yaml"
fi
for n in $NAMES; do
  [ -x "$DEST.tmp/$n" ] || { say "$n is missing"; exit 1; }
done
echo "$from" > "$DEST.tmp/.complete"
for old in "$CACHE"/gitops-*; do
  if [ "$old" != "$DEST.tmp" ] && [ -f "$old/.complete" ]; then rm -rf "$old"; fi
done
mv "$DEST.tmp" "$DEST"
echo "$DEST"
