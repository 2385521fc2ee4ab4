// A module of its own, so that CoreDNS is not a dependency of glance-krm:
// hack/node-assets.sh copies this folder, resolves it (go mod tidy) and
// builds it.
module glance-krm-node/coredns

go 1.26

require github.com/coredns/coredns v1.15.0
