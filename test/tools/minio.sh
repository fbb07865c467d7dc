#!/usr/bin/env bash
# Builds MinIO (the S3-compatible server the object-storage tests run against) into
# ~/.cache/hearth/tools/bin (HEARTH_TOOLS_DIR) from the Go module proxy, once per machine: a binary
# already built at the pinned version is kept, so later runs (and CI on a clean clone) cost nothing.
# The first build takes several minutes on a 2-core machine.
set -euo pipefail

bin="${HEARTH_TOOLS_DIR:-$HOME/.cache/hearth/tools}/bin"
mkdir -p "$bin"

# MinIO publishes no semantic-version tags to the module proxy: pin the commit's pseudo-version.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

if [[ -x "$bin/minio" && "$(cat "$bin/.minio.version" 2>/dev/null)" == "$MINIO_VERSION" ]]; then
  exit 0
fi
echo "building minio $MINIO_VERSION (once per machine, several minutes)…" >&2
# Built in a temporary GOBIN and moved into place, so an interrupted build never leaves a binary
# that looks finished.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
GOBIN="$tmp" GOFLAGS=-trimpath go install -ldflags=-s "github.com/minio/minio@$MINIO_VERSION"
mv "$tmp/minio" "$bin/minio"
echo "$MINIO_VERSION" > "$bin/.minio.version"
