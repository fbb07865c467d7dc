#!/usr/bin/env bash
# Builds the repository's Dockerfile into an OCI image without a Docker engine: buildah (daemonless,
# `--isolation chroot`) builds it, podman + runc run it (test/image/image.test.ts, `make image-test`).
#
#   bash test/image/build.sh [IMAGE]     # default localhost/hearth:test; prints the image's name
#
# The Dockerfile's base (node:20-bookworm-slim) comes from Docker Hub, which a machine without a
# registry mirror cannot reach, so its NODE_IMAGE build argument names a base made here instead:
# Debian bookworm's packages (mmdebstrap, from the Debian mirror apt uses) with this machine's Node 20
# binary and npm, and this machine's local CAs (/usr/local/share/ca-certificates, trusted by Node
# through NODE_EXTRA_CA_CERTS: a machine whose HTTPS goes through a proxy needs them for the build
# stage's `npm ci`). Made once per machine and Node version; the rest is the Dockerfile, unchanged.
#
# Images live in a store of their own under the tools folder (HEARTH_TOOLS_DIR), never the machine's
# default podman store. Needs root (rootful podman, the usual for a CI machine); the Debian packages it
# needs (buildah, podman, runc, mmdebstrap) are installed when absent, as .ci/services.sh does.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
image="${1:-localhost/hearth:test}"
cache="${HEARTH_TOOLS_DIR:-$HOME/.cache/hearth/tools}/image"
mkdir -p "$cache"

need_apt=()
for tool in buildah podman runc mmdebstrap; do command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool"); done
if [[ ${#need_apt[@]} -gt 0 ]]; then
  echo "image: installing ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The settings every buildah and podman call of the tests shares (image.test.ts sets the same):
# - runc, not crun: crun refuses a host whose cgroups are in hybrid mode (v1 with a v2 hierarchy
#   beside it), as some CI machines' are; runc runs on v1, hybrid and v2.
# - explicit limits: rootful podman's default open-files limit (1048576) is above what a machine
#   without CAP_SYS_RESOURCE may grant, and the runtime then fails to start the container.
cat > "$cache/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$cache/containers.conf"
storage=(--root "$cache/storage" --runroot "$cache/run" --storage-driver overlay)

# The base, named by what it is made of: the Node version and the local CAs.
node_version="$(node --version)"
cas=(/usr/local/share/ca-certificates/*.crt)
[[ -e "${cas[0]}" ]] || cas=()
ca_stamp="$( (cat "${cas[@]}" /dev/null) | sha256sum | cut -c1-12)"
base="localhost/hearth-node-base:${node_version#v}-$ca_stamp"
# Two checkouts testing at once make the base once: the second waits for the first, then finds it.
exec {base_lock}>"$cache/.base.lock"
flock "$base_lock"
if ! podman "${storage[@]}" image exists "$base"; then
  echo "image: making the base $base from Debian bookworm's packages and this machine's Node (about 2 min, once)…" >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  node_dir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  hooks=(
    --customize-hook="cp -a '$node_dir/bin/node' \"\$1/usr/bin/node\""
    --customize-hook="mkdir -p \"\$1/usr/lib/node_modules\" && cp -a '$npm_dir' \"\$1/usr/lib/node_modules/npm\""
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/bin/npx"'
  )
  if [[ ${#cas[@]} -gt 0 ]]; then
    hooks+=(--customize-hook="cp ${cas[*]} \"\$1/usr/local/share/ca-certificates/\" && chroot \"\$1\" update-ca-certificates >/dev/null")
  fi
  # minbase: dpkg, apt (the Dockerfile's runtime stage installs tini with it) and the essentials.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,libstdc++6 "${hooks[@]}" bookworm "$work/base.tar"
  podman "${storage[@]}" import --quiet \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' --change 'CMD ["node"]' \
    "$work/base.tar" "$base" >/dev/null
fi
flock --unlock "$base_lock"

echo "image: building the Dockerfile into $image (base $base)…" >&2
started=$SECONDS
buildah "${storage[@]}" build --isolation chroot \
  --build-arg NODE_IMAGE="$base" --tag "$image" --file "$root/Dockerfile" "$root" >&2
echo "image: built $image in $((SECONDS - started)) s" >&2
echo "$image"
