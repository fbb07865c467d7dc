#!/usr/bin/env bash
# MinIO (the S3-compatible server the object-storage tests run against), built once per machine into
# ~/.cache/hearth/tools/bin (HEARTH_TOOLS_DIR) by the one tools script, with the others' version stamps.
exec bash "$(dirname "$0")/../kube/tools/build.sh" minio
