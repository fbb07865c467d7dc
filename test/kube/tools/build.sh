#!/usr/bin/env bash
# Builds the real tools the Kubernetes tests use into ~/.cache/hearth/tools/bin (HEARTH_TOOLS_DIR), once per
# machine: kube-apiserver, kube-controller-manager, etcd and kubectl from this helper module, helm from the Go module proxy,
# and the CRDs the chart's optional objects need: prometheus-operator's (ServiceMonitor, PrometheusRule)
# and the Gateway API's HTTPRoute.
# A tool already built at the pinned version is kept, so later runs cost nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# One folder per machine, outside any checkout, so a clean clone (CI) reuses what was built.
bin="${HEARTH_TOOLS_DIR:-$HOME/.cache/hearth/tools}/bin"
mkdir -p "$bin"

# Only the tools named (shell patterns: `build.sh versitygw helm '*-crds'`); none named: every one. Each
# make target names what its tests run (Makefile), so `make test` builds versitygw and helm only.
# --check: build nothing; exit 1 when any asked tool is not built at its version (make test asks
# whether it must build versitygw and helm in the background first).
check=
if [[ "${1:-}" == --check ]]; then check=1; shift; fi
asked=("$@")
missing=0

# One build at a time per tools folder: two checkouts on one machine (or two make targets at once)
# would otherwise compile into the same files. The second waits for the first, then finds its
# tools already built. The lock is released when this script exits (the descriptor closes). --check
# reads only the version stamps, written after a build, so it never waits.
if [[ -z "$check" ]]; then
  exec {build_lock}>"$bin/../.build.lock"
  if ! flock -n "$build_lock"; then
    echo "build.sh: another build.sh is building into $bin; waiting for it…" >&2
    waited=$SECONDS
    flock "$build_lock"
    echo "build.sh: the other build is done (waited $((SECONDS - waited)) s); going on" >&2
  fi
fi

# About how long a first build takes on a busy 2-core machine, told before it starts (helm, k6,
# kube-apiserver, kube-controller-manager and etcd as measured there; versitygw on a quiet one; kubectl
# alone estimated). A rebuild reuses Go's build cache: kube-controller-manager built right after
# kube-apiserver, whose packages it mostly shares, took 3 min; re-stamping kube-apiserver's version, 21 s.
declare -A first_build_minutes=([versitygw]=2 [helm]=5 [kube-apiserver]=12 [kube-controller-manager]=3 [etcd]=1 [kubectl]=5 [k6]=6)

KUBERNETES_VERSION=v1.34.4
HELM_VERSION=v3.19.5
PROMETHEUS_OPERATOR_VERSION=v0.85.0
GATEWAY_API_VERSION=v1.4.1

# build <name> <version stamp> <command…>: runs the command only when the stamp differs.
build() {
  local name="$1" version="$2"; shift 2
  if [[ ${#asked[@]} -gt 0 ]]; then
    local pattern match=
    for pattern in "${asked[@]}"; do [[ "$name" == $pattern ]] && match=1; done
    [[ -n "$match" ]] || return 0
  fi
  if [[ -e "$bin/$name" && "$(cat "$bin/.$name.version" 2>/dev/null)" == "$version" ]]; then
    return
  fi
  if [[ -n "$check" ]]; then missing=1; return 0; fi
  command -v go >/dev/null 2>&1 || { echo "build.sh: building $name needs Go (1.25+) on the PATH" >&2; exit 1; }
  echo "building $name $version into $bin from the Go module proxy (once per machine; the first time about ${first_build_minutes[$name]:-1} min on 2 cores)…" >&2
  local started=$SECONDS
  "$@"
  echo "$version" > "$bin/.$name.version"
  echo "built $name in $((SECONDS - started)) s" >&2
}

# The version the server components report (GET /version), as Kubernetes' own release build stamps it
# (hack/lib/version.sh): unstamped they say v0.0.0-master, which a chart's kubeVersion refuses.
# Both version packages (client-go's and component-base's) carry the same fields.
kubernetes_version_ldflags() {
  local package minor="${KUBERNETES_VERSION#v*.}"
  minor="${minor%%.*}"
  local major="${KUBERNETES_VERSION#v}"
  major="${major%%.*}"
  for package in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    printf -- "-X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean " \
      "$package" "$KUBERNETES_VERSION" "$package" "$major" "$package" "$minor" "$package"
  done
}
# The stamp of the version-stamped server builds: it differs from the unstamped ones' so machines rebuild once.
KUBERNETES_SERVER_STAMP="$KUBERNETES_VERSION+version-ldflags"

# No cgo, as each of these projects builds its own releases (Kubernetes' static server binaries,
# etcd's, helm's and k6's Makefiles, versitygw's release config): the C parts of the standard library are not compiled
# by gcc on a first build, and the binaries do not depend on the machine's libc.
export CGO_ENABLED=0

cd "$here"
build kube-apiserver "$KUBERNETES_SERVER_STAMP" go build -trimpath \
  -ldflags="-s $(kubernetes_version_ldflags)" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
# The controllers (Deployments make ReplicaSets and Pods, Jobs complete, garbage collection) the
# chart install suite runs beside the API server (make chart-test).
build kube-controller-manager "$KUBERNETES_SERVER_STAMP" go build -trimpath \
  -ldflags="-s $(kubernetes_version_ldflags)" -o "$bin/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
build etcd "$KUBERNETES_VERSION" go build -trimpath -ldflags=-s -o "$bin/etcd" ./etcd
build kubectl "$KUBERNETES_VERSION" \
  go build -trimpath -ldflags=-s -o "$bin/kubectl" k8s.io/kubernetes/cmd/kubectl
# Without the symbol table (-s), as the others: less for the linker to write on a first build.
build helm "$HELM_VERSION" env GOBIN="$bin" GOFLAGS=-trimpath go install -ldflags=-s "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
# k6 for the load tests (make loadtest, loadtest/).
build k6 v1.8.1 env GOBIN="$bin" go install go.k6.io/k6@v1.8.1
# versitygw (Versity's S3 gateway, its posix backend), the S3 server of the object-storage tests (make
# test): it checks SigV4 signatures, presigned expiry, signed headers and x-amz-checksum-sha256 against
# the body, as S3 does. It replaced MinIO, which did the same but took twice the compiling (340 against
# 177 CPU-seconds from an empty Go cache, on 2 cores): the largest part of a first `make test`.
VERSITYGW_VERSION=v1.8.0
build versitygw "$VERSITYGW_VERSION" env GOBIN="$bin" GOFLAGS=-trimpath go install -ldflags=-s "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"

# The module ships its CRDs as YAML; the chart test installs these two into its API server.
prometheus_crds() {
  local dir
  dir="$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  mkdir -p "$bin/../crds"
  cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
     "$dir/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" "$bin/../crds/"
  touch "$bin/prometheus-crds"
}
build prometheus-crds "$PROMETHEUS_OPERATOR_VERSION" prometheus_crds

# The Gateway API's HTTPRoute CRD (the socket's optional route), from its module's standard channel.
gateway_crds() {
  local dir
  dir="$(go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  mkdir -p "$bin/../crds"
  cp "$dir/config/crd/standard/gateway.networking.k8s.io_httproutes.yaml" "$bin/../crds/"
  touch "$bin/gateway-crds"
}
build gateway-crds "$GATEWAY_API_VERSION" gateway_crds

[[ -z "$check" ]] || exit "$missing"
