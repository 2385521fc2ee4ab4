#!/usr/bin/env bash
# Prints the directory that holds kube-apiserver, etcd, kubectl and chainsaw
# for tests against a real control plane (envtest's KUBEBUILDER_ASSETS),
# and with NODE=1 also kubelet, kube-scheduler, kube-controller-manager and
# kube-proxy (the test node, hack/node-assets.sh), getting them the first
# way that works, in this order:
#   1. $KUBEBUILDER_ASSETS, if set;
#   2. the prebuilt binaries in ../shared/tools/k8s (checksummed, unpacked
#      once into the cache);
#   3. setup-envtest, where a network allows it (kube-apiserver and etcd);
#   4. a build from the Go module proxy (about 30 minutes on 2 cores).
# Which one happened is written to stderr and to <dir>/SOURCE.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
CHAINSAW_VERSION="${CHAINSAW_VERSION:-v0.2.15}"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${SHARED_TOOLS:-$ROOT/../shared/tools/k8s}"
DEST="$CACHE/k8s-$K8S_VERSION"
BINS=(kube-apiserver etcd kubectl chainsaw)
NODE_BINS=(kubelet kube-scheduler kube-controller-manager kube-proxy)
[ "${NODE:-}" = 1 ] && BINS+=("${NODE_BINS[@]}")

say() { printf 'envtest assets: %s\n' "$*" >&2; }
complete() { for b in "${BINS[@]}"; do [ -x "$1/$b" ] || return 1; done; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ "${NODE:-}" != 1 ]; then
  say "using \$KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  echo "$KUBEBUILDER_ASSETS"; exit 0
fi
if complete "$DEST"; then
  say "cached in $DEST ($(cat "$DEST/SOURCE" 2>/dev/null || echo unknown source))"
  echo "$DEST"; exit 0
fi
mkdir -p "$DEST"

if [ -f "$SHARED/SHA256SUMS" ]; then
  (cd "$SHARED" && sha256sum --quiet -c SHA256SUMS) >&2
  for b in "${BINS[@]}"; do
    [ -x "$DEST/$b" ] && continue
    xz -dc "$SHARED/$b.xz" > "$DEST/.$b.tmp" && chmod +x "$DEST/.$b.tmp" && mv "$DEST/.$b.tmp" "$DEST/$b"
  done
  echo "prebuilt Kubernetes $K8S_VERSION / etcd $ETCD_VERSION / chainsaw $CHAINSAW_VERSION from $SHARED" > "$DEST/SOURCE"
  say "$(cat "$DEST/SOURCE")"
  echo "$DEST"; exit 0
fi

WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
if GOBIN="$WORK" go install sigs.k8s.io/controller-runtime/tools/setup-envtest@latest >&2 2>/dev/null &&
   dir="$("$WORK/setup-envtest" use -p path --bin-dir "$WORK/envtest" "${K8S_VERSION#v}" 2>/dev/null)"; then
  cp "$dir/kube-apiserver" "$dir/etcd" "$DEST/"
  [ -x "$dir/kubectl" ] && cp "$dir/kubectl" "$DEST/"
  echo "setup-envtest $K8S_VERSION" > "$DEST/SOURCE"
  say "downloaded by setup-envtest"
else
  say "setup-envtest cannot download here; building from the Go module proxy (about 30 minutes)"
fi

# kube-apiserver, kubectl and the node's: k8s.io/kubernetes pins its
# staging modules at v0.0.0; a throwaway module replaces each with its
# published version. Upstream builds kubelet with cgo, the rest static.
K8S_CMDS=(kube-apiserver kubectl)
[ "${NODE:-}" = 1 ] && K8S_CMDS+=("${NODE_BINS[@]}")
missing=""
for cmd in "${K8S_CMDS[@]}"; do [ -x "$DEST/$cmd" ] || missing=1; done
if [ -n "$missing" ]; then
  mkdir -p "$WORK/k8s" && cd "$WORK/k8s"
  gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  staging="v0.${K8S_VERSION#v1.}"
  {
    printf 'module envtest-build\n\n'
    awk '$1 == "go" {print; exit}' "$gomod"
    printf '\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
    awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print "\t" $1 " => " $1 " '"$staging"'"}' "$gomod" | sort -u
    printf ')\n'
  } > go.mod
  pkgs=()
  for c in "${K8S_CMDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c@$K8S_VERSION"); done
  go get "${pkgs[@]}" >&2
  minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  done
  for cmd in "${K8S_CMDS[@]}"; do
    cgo=0; [ "$cmd" = kubelet ] && cgo=1
    [ -x "$DEST/$cmd" ] || CGO_ENABLED=$cgo go build -trimpath -ldflags "$ldflags" -o "$DEST/$cmd" "k8s.io/kubernetes/cmd/$cmd" >&2
  done
fi
if [ ! -x "$DEST/etcd" ]; then
  mkdir -p "$WORK/etcd" && cd "$WORK/etcd"
  printf 'module etcd-build\n\ngo 1.24\n' > go.mod
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
  go build -trimpath -ldflags "-s -w" -o "$DEST/etcd" go.etcd.io/etcd/server/v3 >&2
fi
[ -x "$DEST/chainsaw" ] || GOBIN="$DEST" go install "github.com/kyverno/chainsaw@$CHAINSAW_VERSION" >&2
[ -f "$DEST/SOURCE" ] || echo "built from the Go module proxy: Kubernetes $K8S_VERSION, etcd $ETCD_VERSION, chainsaw $CHAINSAW_VERSION" > "$DEST/SOURCE"
say "$(cat "$DEST/SOURCE")"
echo "$DEST"
