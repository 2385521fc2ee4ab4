#!/usr/bin/env bash
# Builds every root file system the tests use (rootfs.sh), two at a time:
# mmdebstrap waits on the network as much as on the CPU. Each is built
# once; a second run only checks the cache. The two releases Debian does
# not ship are copies of trixie's and sid's, so they come last.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
build() { bash "$HERE/rootfs.sh" "$1" > /dev/null || { echo "rootfs-all: $1 failed" >&2; return 1; }; }
pair() { build "$1" & local a=$!; build "$2" & local b=$!; wait "$a"; local ra=$?; wait "$b" && return "$ra"; }
pair trixie bookworm
pair sid infra
pair keystone gitops
pair 2025.2 2026.1
