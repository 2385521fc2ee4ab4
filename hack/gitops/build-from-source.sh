#!/usr/bin/env bash
# Kept as the workplace ships it: hack/gitops-assets.sh runs it where
# GLANCE_KRM_GITOPS_TOOLS names no prebuilt output of it.
# Rebuild the prebuilt GitOps test binaries of shared/tools/gitops/ from the
# Go module proxy alone (no other network), static linux/amd64.
#
#   build-from-source.sh [DEST] [NAME...]
#
# DEST (default ./gitops-bin) receives plain executables named argocd,
# source-controller, kustomize-controller, kube-router, plus the install
# manifests in DEST/argocd-config/ and DEST/flux-config/<controller>/.
# NAME restricts the build to some of those four. Whatever DEST already holds
# (the binary, or NAME.xz when COMPRESS=1) is skipped, so the script is
# idempotent. COMPRESS=1 also writes DEST/NAME.xz (xz -9) and keeps the binary.
# GITOPS_BUILD_WORK=DIR keeps the wrapper modules there (default: a temp dir).
# Builds run under `nice -n 19`, one at a time.
set -euo pipefail

ARGOCD_MODULE=github.com/argoproj/argo-cd/v3
ARGOCD_VERSION=v3.6.2
ARGOCD_GOTOOLCHAIN=go1.27.3          # argo-cd v3.6.2 declares go 1.27.0
ARGOCD_KUBECTL_VERSION=v0.37.0       # k8s.io/client-go in argo-cd's go.mod, for `version` output

SOURCE_CONTROLLER_MODULE=github.com/fluxcd/source-controller
SOURCE_CONTROLLER_VERSION=v1.9.6
# source-controller v1.9.6 requires github.com/fluxcd/pkg/artifact v0.18.3, which the
# module proxy here refuses (403 "This module version is not available"); v0.18.0 is
# served and upstream's v0.18.0..v0.18.2 differ in go.mod/go.sum only.
SOURCE_CONTROLLER_EXTRA_REPLACE=github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.0
KUSTOMIZE_CONTROLLER_MODULE=github.com/fluxcd/kustomize-controller
KUSTOMIZE_CONTROLLER_VERSION=v1.9.6
FLUX_GOTOOLCHAIN=local               # go 1.26.x (both declare go 1.26.0)

KUBE_ROUTER_MODULE=github.com/cloudnativelabs/kube-router/v2
KUBE_ROUTER_VERSION=v2.1.0           # test-only: known security flaws, never run outside the test node
KUBE_ROUTER_GOTOOLCHAIN=local

DEST=${1:-$PWD/gitops-bin}
[ $# -gt 0 ] && shift
NAMES=${*:-argocd source-controller kustomize-controller kube-router}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
WORK=${GITOPS_BUILD_WORK:-$(mktemp -d /tmp/gitops-build-src.XXXXXX)}
mkdir -p "$WORK"
export CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOFLAGS=-buildvcs=false

log() { echo "[build-from-source] $*" >&2; }

# Path of MODULE@VERSION's go.mod / source dir in the module cache (downloads it).
mod_field() { # FIELD MODULE VERSION TOOLCHAIN
  (cd "$WORK" && GOTOOLCHAIN=$4 GO111MODULE=on go mod download -json "$2@$3" 2>/dev/null || true) |
    sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p"
}

# Print the replace directives of a go.mod, one per line: OLD[ OLDV] => NEW[ NEWV]
replaces_of() {
  awk '
    { sub(/\/\/.*/, "") }
    /^replace[ \t]*\(/ { blk = 1; next }
    blk && /^[ \t]*\)/ { blk = 0; next }
    /^replace[ \t]/ { sub(/^replace[ \t]+/, ""); if ($0 ~ /=>/) print; next }
    blk && /=>/ { print }
  ' "$1" | sed 's/^[ \t]*//; s/[ \t]*$//'
}

# Write a wrapper module in $WORK/NAME that requires MODULE@VERSION with the
# upstream replace block copied (a dependency's replaces are ignored by Go).
# Local (./dir) replaces become requires of the published module at VERSION.
wrapper() { # NAME MODULE VERSION TOOLCHAIN GOVERSION
  local name=$1 mod=$2 ver=$3 tc=$4 gov=$5 gomod dir line old new
  dir=$WORK/$name
  rm -rf "$dir"; mkdir -p "$dir"
  gomod=$(mod_field GoMod "$mod" "$ver" "$tc")
  [ -s "$gomod" ] || { log "cannot download $mod@$ver"; return 1; }
  printf 'module example.com/gitops-tools/%s\n\ngo %s\n\nrequire %s %s\n' "$name" "$gov" "$mod" "$ver" > "$dir/go.mod"
  while IFS= read -r line; do
    old=${line%%=>*}; new=${line#*=>}
    old=$(echo $old); new=$(echo $new)
    case $new in
      ./*|../*) (cd "$dir" && GOTOOLCHAIN=$tc go mod edit -require "${old%% *}@$ver") ;;
      *) (cd "$dir" && GOTOOLCHAIN=$tc go mod edit -replace "$(echo "$old" | sed 's/ /@/')=$(echo "$new" | sed 's/ /@/')") ;;
    esac
  done < <(replaces_of "$gomod")
}

tidy_build() { # NAME TOOLCHAIN PKG LDFLAGS
  local name=$1 tc=$2 pkg=$3 ldflags=$4 dir=$WORK/$1 t0
  t0=$(date +%s)
  # -e: some test-only dependencies of these modules are not served by the proxy
  (cd "$dir" && GOTOOLCHAIN=$tc go mod tidy -e > tidy.log 2>&1) || { cat "$dir/tidy.log" >&2; return 1; }
  (cd "$dir" && GOTOOLCHAIN=$tc nice -n 19 go build -trimpath -ldflags="-s -w $ldflags" -o "$DEST/$name.tmp" "$pkg")
  mv "$DEST/$name.tmp" "$DEST/$name"
  log "$name built in $(( $(date +%s) - t0 ))s: $(stat -c %s "$DEST/$name") bytes"
}

have() { [ -x "$DEST/$1" ] && { [ "${COMPRESS:-0}" != 1 ] || [ -s "$DEST/$1.xz" ]; }; }

finish() { # NAME
  if [ "${COMPRESS:-0}" = 1 ] && [ ! -s "$DEST/$1.xz" ]; then
    xz -9 -T1 -k -c "$DEST/$1" > "$DEST/$1.xz.tmp" && mv "$DEST/$1.xz.tmp" "$DEST/$1.xz"
  fi
}

build_argocd() {
  wrapper argocd "$ARGOCD_MODULE" "$ARGOCD_VERSION" "$ARGOCD_GOTOOLCHAIN" 1.27.0
  cat > "$WORK/argocd/main.go" <<'GO'
// Multi-call Argo CD binary with the components of a headless core install.
// Dispatches on argv[0] (or $ARGOCD_BINARY_NAME) as upstream's cmd/main.go does.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	_ "unsafe" // go:linkname

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/log"
)

const binaryNameEnv = "ARGOCD_BINARY_NAME"

// Upstream's cmd/main.go calls util/grpc.DisableSRVLookups(), which panics
// unless this flag is true. Only grpc's balancer/grpclb sets it true (in its
// init), and upstream links grpclb through the CLI's cloud SDKs; this slimmer
// binary does not, so the flag is already false. Clear it all the same.
//
//go:linkname enableSRVLookups google.golang.org/grpc/internal/resolver/dns.EnableSRVLookups
var enableSRVLookups bool

func init() {
	// Make sure klog uses the configured log level and format.
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
}

func main() {
	var command *cobra.Command
	// The workaround for the SRV GRPC bug (argo-cd issues 29857, 29989)
	enableSRVLookups = false

	binaryName := filepath.Base(os.Args[0])
	if val := os.Getenv(binaryNameEnv); val != "" {
		binaryName = val
	}
	quiet := false
	switch binaryName {
	case common.CommandApplicationController:
		command = appcontroller.NewCommand()
	case common.CommandRepoServer:
		command = reposerver.NewCommand()
	case common.CommandCMPServer:
		command = cmpserver.NewCommand()
		quiet = true
	case common.CommandGitAskPass: // git's askpass helper, used by the repo-server
		command = gitaskpass.NewCommand()
		quiet = true
	default:
		fmt.Fprintf(os.Stderr, "%s: unknown name; run as (a symlink named) %s, %s, %s or %s, or set %s\n",
			binaryName, common.CommandApplicationController, common.CommandRepoServer,
			common.CommandCMPServer, common.CommandGitAskPass, binaryNameEnv)
		os.Exit(2)
	}
	if quiet {
		command.SilenceErrors = true
		command.SilenceUsage = true
	}
	if err := command.Execute(); err != nil {
		if quiet {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
}
GO
  local p=github.com/argoproj/argo-cd/v3/common
  tidy_build argocd "$ARGOCD_GOTOOLCHAIN" . \
    "-X $p.version=${ARGOCD_VERSION#v} -X $p.gitTag=$ARGOCD_VERSION -X $p.gitTreeState=clean -X $p.kubectlVersion=$ARGOCD_KUBECTL_VERSION"
}

build_flux() { # NAME MODULE VERSION [EXTRA_REPLACE]
  wrapper "$1" "$2" "$3" "$FLUX_GOTOOLCHAIN" 1.26.0
  [ -z "${4:-}" ] || (cd "$WORK/$1" && go mod edit -replace "$4")
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$2" > "$WORK/$1/tools.go"
  tidy_build "$1" "$FLUX_GOTOOLCHAIN" "$2" ""
}

build_kube_router() {
  wrapper kube-router "$KUBE_ROUTER_MODULE" "$KUBE_ROUTER_VERSION" "$KUBE_ROUTER_GOTOOLCHAIN" 1.21
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s/cmd/kube-router"\n' "$KUBE_ROUTER_MODULE" > "$WORK/kube-router/tools.go"
  tidy_build kube-router "$KUBE_ROUTER_GOTOOLCHAIN" "$KUBE_ROUTER_MODULE/cmd/kube-router" \
    "-X $KUBE_ROUTER_MODULE/pkg/version.Version=$KUBE_ROUTER_VERSION"
}

configs() { # install manifests from the module cache
  local d
  if [ ! -d "$DEST/argocd-config" ]; then
    d=$(GOTOOLCHAIN=$ARGOCD_GOTOOLCHAIN mod_field Dir "$ARGOCD_MODULE" "$ARGOCD_VERSION" "$ARGOCD_GOTOOLCHAIN")
    mkdir -p "$DEST/argocd-config"
    cp "$d"/manifests/crds/*.yaml "$DEST/argocd-config/"
    # upstream's whole headless (core) install, for its RBAC/ConfigMaps/Deployments as reference
    xz -9 -c "$d/manifests/core-install.yaml" > "$DEST/argocd-config/core-install.yaml.xz"
  fi
  for c in source-controller:$SOURCE_CONTROLLER_MODULE:$SOURCE_CONTROLLER_VERSION \
           kustomize-controller:$KUSTOMIZE_CONTROLLER_MODULE:$KUSTOMIZE_CONTROLLER_VERSION; do
    IFS=: read -r n m v <<< "$c"
    [ ! -d "$DEST/flux-config/$n" ] || continue
    d=$(mod_field Dir "$m" "$v" "$FLUX_GOTOOLCHAIN")
    mkdir -p "$DEST/flux-config/$n"/{crd/bases,rbac,manager}
    cp "$d"/config/crd/bases/*.yaml "$DEST/flux-config/$n/crd/bases/"
    cp "$d"/config/rbac/*.yaml "$DEST/flux-config/$n/rbac/"
    cp "$d"/config/manager/*.yaml "$DEST/flux-config/$n/manager/"
  done
  chmod -R u+w "$DEST/argocd-config" "$DEST/flux-config"
}

for n in $NAMES; do
  if have "$n"; then log "$n: already in $DEST, skipped"; continue; fi
  if [ ! -x "$DEST/$n" ]; then
    case $n in
      argocd) build_argocd ;;
      source-controller) build_flux source-controller "$SOURCE_CONTROLLER_MODULE" "$SOURCE_CONTROLLER_VERSION" "$SOURCE_CONTROLLER_EXTRA_REPLACE" ;;
      kustomize-controller) build_flux kustomize-controller "$KUSTOMIZE_CONTROLLER_MODULE" "$KUSTOMIZE_CONTROLLER_VERSION" ;;
      kube-router) build_kube_router ;;
      *) log "unknown name $n"; exit 2 ;;
    esac
  fi
  finish "$n"
done
configs
log "done: $DEST"
