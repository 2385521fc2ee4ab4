#!/usr/bin/env bash
# Prints a folder with everything the test node runs that Debian does not
# package (containerd, runc, the CNI plugins and iptables come from
# Debian: make deps-node): the Kubernetes binaries (kube-apiserver, etcd,
# kubectl, kubelet, kube-scheduler, kube-controller-manager, kube-proxy;
# found or built by hack/envtest-assets.sh), CoreDNS and metrics-server
# built from the Go module proxy, and the pause program. Built once into
# the cache, again only when a version or this script changes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CACHE:-$HOME/.cache/glance-krm}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
METRICS_SERVER_VERSION="${METRICS_SERVER_VERSION:-v0.8.0}"
key=$(cat "$0" "$ROOT/hack/node/coredns/main.go" "$ROOT/hack/node/coredns/go.mod" "$ROOT/hack/node/pause/main.go" |
  { cat; echo "$COREDNS_VERSION $METRICS_SERVER_VERSION"; } | sha256sum | cut -c1-12)
DEST="$CACHE/node-$key"
say() { printf 'node assets: %s\n' "$*" >&2; }

k8s="$(NODE=1 CACHE="$CACHE" bash "$ROOT/hack/envtest-assets.sh")"
if [ -f "$DEST/.complete" ]; then
  echo "$DEST"; exit 0
fi
rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp"
for b in kube-apiserver etcd kubectl kubelet kube-scheduler kube-controller-manager kube-proxy; do
  ln -s "$k8s/$b" "$DEST.tmp/$b"
done
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT

say "building CoreDNS $COREDNS_VERSION (its kubernetes plugin and a few others)"
cp -r "$ROOT/hack/node/coredns" "$WORK/coredns"
sed -i "s|github.com/coredns/coredns v.*|github.com/coredns/coredns $COREDNS_VERSION|" "$WORK/coredns/go.mod"
(cd "$WORK/coredns" && go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$DEST.tmp/coredns" . >&2)

say "building metrics-server $METRICS_SERVER_VERSION"
CGO_ENABLED=0 GOBIN="$WORK/bin" go install -trimpath -ldflags='-s -w' "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION" >&2
mv "$WORK/bin/metrics-server" "$DEST.tmp/"

(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$DEST.tmp/pause" ./hack/node/pause)
echo "CoreDNS $COREDNS_VERSION, metrics-server $METRICS_SERVER_VERSION; Kubernetes from $(cat "$k8s/SOURCE" 2>/dev/null || echo "$k8s")" > "$DEST.tmp/.complete"
for old in "$CACHE"/node-*; do
  if [ "$old" != "$DEST.tmp" ] && [ -f "$old/.complete" ]; then rm -rf "$old"; fi
done
mv "$DEST.tmp" "$DEST"
say "$(cat "$DEST/.complete")"
echo "$DEST"
