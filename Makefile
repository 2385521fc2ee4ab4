# glance-krm. Tools are built once into a cache outside the repository and
# reused; nothing here needs anything installed by hand.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

CACHE            ?= $(HOME)/.cache/glance-krm
TOOLBIN          := $(CACHE)/bin
KUSTOMIZE_VERSION      ?= v5.8.2
CONTROLLER_GEN_VERSION ?= v0.23.0
VERSITYGW_VERSION      ?= v1.8.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
# Signs and verifies the images in e2e-packaging (the release workflow
# installs the same version).
COSIGN_VERSION         ?= v3.1.3
# Lints .github/workflows (it runs shellcheck over each run: step).
ACTIONLINT_VERSION     ?= v1.7.12
# Whose ClusterImagePolicy CRD examples/argocd/clusterimagepolicy.yaml is held to (tests/admission).
POLICY_CONTROLLER_VERSION ?= v0.13.1
# Static (CGO_ENABLED=0), because the Argo CD sidecar image is scratch.
KUSTOMIZE        := $(TOOLBIN)/kustomize-$(KUSTOMIZE_VERSION)-static
CONTROLLER_GEN   := $(TOOLBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
VERSITYGW        := $(TOOLBIN)/versitygw-$(VERSITYGW_VERSION)
GOLANGCI_LINT    := $(TOOLBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
COSIGN           := $(TOOLBIN)/cosign-$(COSIGN_VERSION)
ACTIONLINT       := $(TOOLBIN)/actionlint-$(ACTIONLINT_VERSION)
FN_BIN           := $(CURDIR)/bin/glance-krm-fn
# The platforms every image is built for (the top-level Dockerfile's
# TARGETARCH); the binaries are cross-compiled, never emulated.
PLATFORMS        ?= linux/amd64 linux/arm64
HOST_ARCH        := $(shell go env GOARCH)
ARCHES           := $(patsubst linux/%,%,$(PLATFORMS))
CROSS_ARCHES     := $(filter-out $(HOST_ARCH),$(ARCHES))
CONTROLLER_BIN   := $(CURDIR)/bin/glance-krm-controller
GO_TEST_FLAGS    ?= -count=1

export GLANCE_KRM_FN    := $(FN_BIN)
export GLANCE_KRM_CONTROLLER := $(CONTROLLER_BIN)
export KUSTOMIZE_BIN    := $(KUSTOMIZE)
export CONTROLLER_GEN_BIN := $(CONTROLLER_GEN)
export VERSITYGW_BIN    := $(VERSITYGW)
export GLANCE_KRM_CACHE := $(CACHE)
# Under make a missing peer fails a test instead of skipping it
# (internal/testenv): make test never passes by running less.
export GLANCE_KRM_REQUIRE_PEERS := 1

# The root file systems (tests/e2e/glance/rootfs.sh, built by the rootfs
# target), each as the GLANCE_ROOTFS_<NAME> variable a test reads.
rootfs_var = GLANCE_ROOTFS_$(2)="$$(CACHE=$(CACHE) bash tests/e2e/glance/rootfs.sh $(1))"
ROOTFS_GLANCE := $(call rootfs_var,trixie,TRIXIE) $(call rootfs_var,2025.2,2025_2) $(call rootfs_var,2026.1,2026_1) $(call rootfs_var,sid,SID) $(call rootfs_var,keystone,KEYSTONE)
ROOTFS_NODE   := $(ROOTFS_GLANCE) $(call rootfs_var,bookworm,BOOKWORM) $(call rootfs_var,infra,INFRA)

.PHONY: build-fn build-cross rootfs deps-node e2e-node e2e-gitops bench-node flux-render lint short deps-lint help seed-render generate-catalogs generate-secret-options all build example test unit e2e-glance e2e-chainsaw e2e-packaging image deps-containers bench bench-controller fuzz generate tools deps-python deps-glance clean

all: build

## help: this list
help:
	@awk '/^## /{sub(/^## /, ""); print}' $(MAKEFILE_LIST)

## build: the KRM function and controller binaries (bin/, and the same
## bytes in bin/linux_<arch>/ where the Dockerfile takes them)
build: build-fn
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(CONTROLLER_BIN) ./controller
	mkdir -p bin/linux_$(HOST_ARCH) && cp $(CONTROLLER_BIN) bin/linux_$(HOST_ARCH)/

## build-fn: the KRM function alone (bin/glance-krm-fn)
build-fn:
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(FN_BIN) ./fn
	mkdir -p bin/linux_$(HOST_ARCH) && cp $(FN_BIN) bin/linux_$(HOST_ARCH)/

## build-cross: the binaries for the other PLATFORMS (bin/linux_<arch>/)
build-cross:
	for arch in $(CROSS_ARCHES); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags='-s -w' -o bin/linux_$$arch/glance-krm-fn ./fn; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags='-s -w' -o bin/linux_$$arch/glance-krm-controller ./controller; \
	done

## example: render examples/standalone with the real kustomize and the
## function (it builds the function only: the example needs no controller)
example: $(KUSTOMIZE) build-fn
	$(KUSTOMIZE) build --enable-alpha-plugins --enable-exec examples/standalone

## generate: deepcopy and CRDs from the markers in krm/
generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object paths=./krm/...
	$(CONTROLLER_GEN) crd paths=./krm/... output:crd:artifacts:config=krm/crds
	go run ./hack/crdjson
	$(CONTROLLER_GEN) rbac:roleName=glance-krm-controller paths=./controller/... output:rbac:artifacts:config=controller/config/rbac

## generate-secret-options: Glance's secret=True options and every deprecated
## spelling oslo.config still reads, over the Glance of each catalog's release
generate-secret-options: deps-glance
	CACHE=$(CACHE) bash hack/generate-secret-options.sh

## generate-catalogs: per-release option catalogs (krm/catalogs) from Debian's
## glance of each release, and from sources for GLANCE_SRC/GLANCE_STORE_SRC
generate-catalogs: deps-glance
	CACHE=$(CACHE) bash hack/generate-catalogs.sh

## test: the whole suite, with every real peer it needs
test: lint short unit e2e-glance e2e-chainsaw e2e-packaging e2e-node

## lint: golangci-lint (.golangci.yml: the import boundaries, gofmt and
## goimports, errcheck), the house's targets (hack/house: file, function and
## test sizes, one results writer, tests and an Example per package),
## shellcheck over hack/, .ci/ and the test scripts, and actionlint over
## .github/workflows
lint: $(GOLANGCI_LINT) $(ACTIONLINT) deps-lint
	$(GOLANGCI_LINT) run ./...
	HOUSE_STRICT=1 go run ./hack/house
	shellcheck hack/*.sh hack/containers/*.sh .ci/run tests/e2e/glance/*.sh review/*.sh
	$(ACTIONLINT) -shellcheck "$$(command -v shellcheck)"

## short: the fast inner loop, every unit test and no external process
## (go test -short ./...; tests that need a peer skip, saying which target runs them)
short:
	env -u GLANCE_KRM_REQUIRE_PEERS go test -short ./...

## unit: Go tests with real kustomize, controller-gen, oslo.config (bookworm's,
## trixie's and sid's) and a real kube-apiserver + etcd (hack/envtest-assets.sh
## says where it got them)
unit: build tools deps-python deps-glance rootfs
	go vet ./...
	go vet -tags e2e ./tests/e2e/glance/ ./tests/node/ ./internal/testenv/node/
	go vet -tags scale ./tests/scale/
	KUBEBUILDER_ASSETS="$$(CACHE=$(CACHE) bash hack/envtest-assets.sh)" $(ROOTFS_GLANCE) \
	  POLICY_CONTROLLER_CRD="$$(POLICY_CONTROLLER_VERSION=$(POLICY_CONTROLLER_VERSION) bash hack/policy-controller-crd.sh)" \
	  go test $(GO_TEST_FLAGS) ./...

## e2e-glance: each release's glance-api on the rendered config, against a
## real S3 server: bookworm's (2022.2, the oldest) on this machine, trixie's
## (2025.1), 2025.2 and 2026.1 from their release tarballs, and sid's
## (2026.2, under uwsgi) in root file systems built once by
## tests/e2e/glance/rootfs.sh into the cache
e2e-glance: build $(KUSTOMIZE) $(VERSITYGW) deps-glance rootfs
	$(ROOTFS_GLANCE) \
	  go test $(GO_TEST_FLAGS) -tags e2e -v -timeout 30m -run 'TestGlanceMultiStore|TestUpgrade' ./tests/e2e/glance/

## rootfs: every root file system the tests run glance in, two at a time
rootfs:
	CACHE=$(CACHE) bash tests/e2e/glance/rootfs-all.sh

## deps-node: Debian's containerd, runc, CNI plugins, iptables and ipset for the
## test node (never started as services: the test starts its own)
deps-node:
	@command -v containerd >/dev/null && command -v runc >/dev/null && [ -x /usr/lib/cni/bridge ] && command -v iptables >/dev/null && command -v ipset >/dev/null || { \
	  echo "installing containerd, runc, containernetworking-plugins, iptables and ipset from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    containerd runc containernetworking-plugins iptables ipset >/dev/null; }

## e2e-node: what glance-krm generates, on a real single-node cluster the
## test starts and tears down (kubelet, containerd, kube-proxy, CoreDNS,
## metrics-server, the VPA recommender, kube-router enforcing NetworkPolicies; the controller in
## the cluster): the plain-kubectl door, the store drain behind Keystone,
## and Argo CD (upstream's headless install with glance-krm's plugin
## sidecar) and Flux (source-controller, kustomize-controller) each syncing
## a Glance from commits the test makes, side by side (tests/node; the
## engines come unpacked from GLANCE_KRM_GITOPS_TOOLS where it names
## prebuilt ones, else built from the Go module proxy: hack/gitops-assets.sh)
NODE_ENV = GLANCE_KRM_NODE_ASSETS="$$(CACHE=$(CACHE) bash hack/node-assets.sh)" \
	GLANCE_KRM_VPA_RECOMMENDER="$$(CACHE=$(CACHE) bash hack/vpa-assets.sh)" \
	GLANCE_KRM_GITOPS_ASSETS="$$(CACHE=$(CACHE) bash hack/gitops-assets.sh)" \
	$(ROOTFS_NODE) $(call rootfs_var,gitops,GITOPS)
e2e-node: build image $(KUSTOMIZE) $(VERSITYGW) deps-node rootfs
	$(NODE_ENV) go test $(GO_TEST_FLAGS) -p 1 -parallel 8 -tags e2e -v -timeout 50m ./internal/testenv/node/ ./tests/node/

## e2e-gitops: e2e-node's engines only (Argo CD and Flux, on a node
## enforcing NetworkPolicies); make test runs them inside e2e-node
e2e-gitops: build image $(KUSTOMIZE) $(VERSITYGW) deps-node rootfs
	$(NODE_ENV) GLANCE_KRM_NODE_ONLY=argocd,flux \
	  go test $(GO_TEST_FLAGS) -p 1 -parallel 8 -tags e2e -v -timeout 40m -run TestNode ./tests/node/

## bench-node: e2e-node, writing its figures (per release: apply to
## Available, db-sync, a default flip's rollout and failed requests; the
## node's start and memory) into BENCHMARKS.md (not in make test)
bench-node: build image $(KUSTOMIZE) $(VERSITYGW) deps-node rootfs
	$(NODE_ENV) GLANCE_KRM_NODE_BENCH=$(CURDIR)/BENCHMARKS.md \
	  go test -count=1 -parallel 8 -tags e2e -v -timeout 40m -run TestNode ./tests/node/

## e2e-chainsaw: the contract's four chainsaw suites against a real API
## server, with the controller running as a process under its own RBAC
e2e-chainsaw: build $(KUSTOMIZE)
	KUBEBUILDER_ASSETS="$$(CACHE=$(CACHE) bash hack/envtest-assets.sh)" \
	  go test $(GO_TEST_FLAGS) -tags e2e -v -timeout 20m -run TestChainsawSuites ./tests/e2e/glance/

tools: $(KUSTOMIZE) $(CONTROLLER_GEN)

$(KUSTOMIZE):
	mkdir -p $(TOOLBIN)
	CGO_ENABLED=0 GOBIN=$(CACHE)/tmp-kustomize go install -trimpath -ldflags='-s -w' sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(CACHE)/tmp-kustomize/kustomize $@

$(CONTROLLER_GEN):
	mkdir -p $(TOOLBIN)
	GOBIN=$(CACHE)/tmp-controller-gen go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(CACHE)/tmp-controller-gen/controller-gen $@

$(COSIGN):
	mkdir -p $(TOOLBIN)
	GOBIN=$(CACHE)/tmp-cosign go install github.com/sigstore/cosign/v3/cmd/cosign@$(COSIGN_VERSION)
	mv $(CACHE)/tmp-cosign/cosign $@

$(ACTIONLINT):
	mkdir -p $(TOOLBIN)
	GOBIN=$(CACHE)/tmp-actionlint go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	mv $(CACHE)/tmp-actionlint/actionlint $@

$(GOLANGCI_LINT):
	mkdir -p $(TOOLBIN)
	GOBIN=$(CACHE)/tmp-golangci-lint go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(CACHE)/tmp-golangci-lint/golangci-lint $@

## deps-lint: shellcheck from Debian
deps-lint:
	@command -v shellcheck >/dev/null || { \
	  echo "installing shellcheck from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; }

$(VERSITYGW):
	mkdir -p $(TOOLBIN)
	GOBIN=$(CACHE)/tmp-versitygw go install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)
	mv $(CACHE)/tmp-versitygw/versitygw $@

## image: the function, controller and Argo CD sidecar images (docker,
## podman or buildah, whichever works here), each one OCI image index of
## PLATFORMS from the top-level Dockerfile, written to build/oci/
image: build build-cross $(KUSTOMIZE) $(foreach a,$(CROSS_ARCHES),$(KUSTOMIZE)-linux-$(a)) deps-containers
	rm -rf build/argocd-cmp
	for arch in $(ARCHES); do \
	  root=build/argocd-cmp/linux_$$arch/rootfs; \
	  mkdir -p $$root/bin $$root/usr/local/bin; \
	  busybox="$$(CACHE=$(CACHE) bash hack/static-busybox.sh $$arch)"; \
	  cp "$$busybox" $$root/bin/busybox; \
	  cp "$$(dirname "$$(dirname "$$busybox")")/purl" build/argocd-cmp/linux_$$arch/busybox.purl; \
	  ln -s busybox $$root/bin/sh; \
	  if [ $$arch = $(HOST_ARCH) ]; then cp $(KUSTOMIZE) $$root/usr/local/bin/kustomize; \
	  else cp $(KUSTOMIZE)-linux-$$arch $$root/usr/local/bin/kustomize; fi; \
	done
	CACHE=$(CACHE) PLATFORMS="$(PLATFORMS)" bash hack/image.sh dev

# kustomize for another architecture (the sidecar image's), static like
# the host's; go install will not cross-install into a GOBIN.
$(KUSTOMIZE)-linux-%:
	mkdir -p $(TOOLBIN)
	env -u GOBIN GOPATH=$(CACHE)/gopath-cross GOMODCACHE="$$(go env GOMODCACHE)" GOOS=linux GOARCH=$* CGO_ENABLED=0 \
	  go install -trimpath -ldflags='-s -w' sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(CACHE)/gopath-cross/bin/linux_$*/kustomize $@

## e2e-packaging: the images, kustomize container mode, kpt and the Argo CD
## plugin, each with the real tool
e2e-packaging: image $(COSIGN)
	QEMU_AARCH64="$$(CACHE=$(CACHE) bash hack/qemu-user.sh)" COSIGN_BIN=$(COSIGN) \
	  go test $(GO_TEST_FLAGS) -tags e2e -v -timeout 20m ./tests/packaging/

## flux-render: render OVERLAY (a kustomization running glance-krm) into OUT:
## three folders (0-prepare, 1-workload, 2-after) that three chained Flux
## Kustomizations build without plugins (hack/flux-prerender.sh; docs/doors.md)
flux-render: build $(KUSTOMIZE)
	@test -n "$(OVERLAY)" -a -n "$(OUT)" || { echo "usage: make flux-render OVERLAY=<kustomization> OUT=<folder>"; exit 2; }
	KUSTOMIZE=$(KUSTOMIZE) GLANCE_KRM_FN=$(FN_BIN) bash hack/flux-prerender.sh $(OVERLAY) $(OUT)

## bench: benchmarks against their floors, written to BENCHMARKS.md (not in make test)
bench: build $(KUSTOMIZE) image
	CACHE=$(CACHE) bash hack/bench.sh

## bench-controller: the runtime controller at scale (100 Glances, 1,000
## backends, 10,000 unrelated Deployments and Secrets) on a real API server,
## written with goals and verdicts into BENCHMARKS.md (not in make test)
bench-controller: build
	KUBEBUILDER_ASSETS="$$(CACHE=$(CACHE) bash hack/envtest-assets.sh)" \
	  go test -tags scale -count=1 -v -timeout 30m -run TestControllerAtScale ./tests/scale/

## fuzz: each fuzz target for FUZZTIME (make test runs their seed corpus)
FUZZTIME ?= 1m
fuzz:
	for f in FuzzProcess FuzzRules; do \
	  go test -run XXX -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) ./fn/glancekrm/ || exit 1; done
	go test -run XXX -fuzz "^FuzzOsloValue$$" -fuzztime $(FUZZTIME) ./fn/oslo/

## deps-containers: podman, buildah and runc (no container engine service
## runs here); the sidecar's static busybox comes from hack/static-busybox.sh
deps-containers:
	@command -v podman >/dev/null && command -v buildah >/dev/null && command -v runc >/dev/null || { \
	  echo "installing podman, buildah and runc from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc >/dev/null; }

## deps-glance: Debian's glance-api and S3 driver, installed once, never started
deps-glance:
	bash tests/e2e/glance/install-glance.sh

## deps-python: Debian's oslo.config, the parser glance-api reads its files with
deps-python:
	@/usr/bin/python3 -c 'import oslo_config' 2>/dev/null || { \
	  echo "installing python3-oslo.config from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-oslo.config >/dev/null; }
	@/usr/bin/python3 -c 'import oslo_config; print("oslo.config from", oslo_config.__file__)'

clean:
	rm -rf bin

## seed-render: the seed operator's own renders of krm/testdata/seed/render
## (needs SEED_SRC, a checkout or mirror of C5C3/cobaltcore)
seed-render:
	CACHE=$(CACHE) bash hack/seed-render.sh
