#!/usr/bin/env bash
# Source me: points podman and buildah at test-only settings (never /etc):
# runc, cgroupfs, file events, and vfs storage in the cache.
_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
_cache="${CACHE:-$HOME/.cache/glance-krm}/containers"
mkdir -p "$_cache"
cat > "$_cache/storage.conf" <<EOC
[storage]
driver = "vfs"
graphroot = "$_cache/storage"
runroot = "$_cache/run"
EOC
export CONTAINERS_CONF="$_here/containers.conf"
export CONTAINERS_STORAGE_CONF="$_cache/storage.conf"
