#!/usr/bin/env bash
# Installs, once, what the deploy checks (deploy/test) need to validate the Helm chart offline,
# and grpcurl for the server reflection test (services/standalone/test/grpc-reflection.e2e):
#
#   helm, kubeconform,  built by `go install` at exact versions (Go module proxy)
#   grpcurl
#   Kubernetes schemas  the JSON schemas shipped in the PyPI package kubernetes-validate,
#                       installed in a venv
#   CRD schemas         kubeconform schemas converted from the CustomResourceDefinitions that
#                       the operators ship in their own Go modules (Prometheus Operator, KEDA,
#                       Gateway API); Strimzi publishes its CRDs in no registry reachable here,
#                       so its KafkaTopic schema is kept in deploy/test/schemas instead.
#
# Everything lands under ${TRELLIS_CACHE_DIR:-~/.cache/trellis}; a second run only checks what
# is there. Nothing is fetched from anywhere but the package registries.
#
# Layout it leaves (the tests read these paths):
#   $CACHE/bin/helm, $CACHE/bin/kubeconform, $CACHE/bin/grpcurl
#   $CACHE/k8s-schemas/kubernetes/v<k8s version>-standalone-strict/<kind>-<group>-<version>.json
#   $CACHE/k8s-schemas/crds/<group>/<kind>_<version>.json
set -euo pipefail

started=$(date +%s%N)
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TRELLIS_CACHE_DIR:-$HOME/.cache/trellis}"
bin="$cache/bin"
tools="$cache/tools"
schemas="$cache/k8s-schemas"
venv="$cache/venv-k8s-schemas"

HELM_V3_VERSION=v3.22.0
HELM_V4_VERSION=v4.3.1
KUBECONFORM_VERSION=v0.7.0
GRPCURL_VERSION=v1.9.3
KUBERNETES_VALIDATE_VERSION=1.37.0
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the newest schemas served.
KUBERNETES_SCHEMA_VERSIONS="1.27.0 1.37.0"
PROMETHEUS_OPERATOR_VERSION=v0.85.0
KEDA_VERSION=v2.21.0
GATEWAY_API_VERSION=v1.6.3

# The machine's own Go; never fetch another toolchain behind our back.
export GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:-} -modcacherw"

log() { printf 'install-deploy-tools: %s\n' "$*" >&2; }

mkdir -p "$bin" "$tools" "$schemas"

# go_tool NAME MODULE/cmd/path VERSION: builds into a versioned folder, links it into $bin.
go_tool() {
  local name=$1 package=$2 version=$3
  local dir="$tools/$name-$version"
  if [[ ! -x "$dir/$name" ]]; then
    log "building $name $version (go install $package@$version)"
    rm -rf "$dir.partial"
    if ! GOBIN="$dir.partial" go install "$package@$version" >&2; then
      rm -rf "$dir.partial"
      return 1
    fi
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
  fi
  ln -sfn "$dir/$name" "$bin/$name"
}

if ! command -v go >/dev/null; then
  log "go is required (it builds helm, kubeconform and grpcurl)"
  exit 1
fi

go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
go_tool grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION"
if ! go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_V3_VERSION"; then
  log "helm $HELM_V3_VERSION did not build; falling back to helm $HELM_V4_VERSION"
  go_tool helm helm.sh/helm/v4/cmd/helm "$HELM_V4_VERSION"
fi

# Kubernetes JSON schemas (strict and non-strict, v1.25 ... v1.37) from PyPI. The venv also
# brings PyYAML, which the CRD conversion below and the tests' YAML reading use.
if ! "$venv/bin/python" - "$KUBERNETES_VALIDATE_VERSION" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
import yaml  # noqa: F401
sys.exit(0 if version("kubernetes-validate") == sys.argv[1] else 1)
PY
then
  log "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION in $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" "PyYAML>=6,<7" >&2
fi
# Its schemas $ref a definitions file by URL; kubeconform gets self-contained copies.
k8s_stamp="$schemas/kubernetes/.versions"
k8s_versions="kubernetes-validate=$KUBERNETES_VALIDATE_VERSION kubernetes=$KUBERNETES_SCHEMA_VERSIONS converter=$(sha256sum "$root/deploy/test/k8s-schemas-standalone.py" | cut -c1-16)"
if [[ "$(cat "$k8s_stamp" 2>/dev/null)" != "$k8s_versions" ]]; then
  log "writing standalone Kubernetes schemas for $KUBERNETES_SCHEMA_VERSIONS"
  k8s_source="$("$venv/bin/python" -c 'import kubernetes_validate, os; print(os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema"))')"
  rm -rf "$schemas/kubernetes" "$schemas/kubernetes.partial"
  # shellcheck disable=SC2086 # a list of versions
  "$venv/bin/python" "$root/deploy/test/k8s-schemas-standalone.py" "$k8s_source" "$schemas/kubernetes.partial" $KUBERNETES_SCHEMA_VERSIONS
  printf '%s' "$k8s_versions" >"$schemas/kubernetes.partial/.versions"
  mv "$schemas/kubernetes.partial" "$schemas/kubernetes"
fi

# CRD schemas, converted from the CRDs in the operators' Go modules (downloaded, not built).
crd_stamp="$schemas/crds/.versions"
crd_versions="prometheus-operator=$PROMETHEUS_OPERATOR_VERSION keda=$KEDA_VERSION gateway-api=$GATEWAY_API_VERSION converter=$(sha256sum "$root/deploy/test/crd-to-jsonschema.py" | cut -c1-16)"
if [[ "$(cat "$crd_stamp" 2>/dev/null)" != "$crd_versions" ]]; then
  module_dir() { go mod download -json "$1@$2" | "$venv/bin/python" -c 'import json, sys; d = json.load(sys.stdin); sys.exit(d["Error"]) if "Error" in d else print(d["Dir"])'; }
  log "converting CRDs (prometheus-operator $PROMETHEUS_OPERATOR_VERSION, keda $KEDA_VERSION, gateway-api $GATEWAY_API_VERSION)"
  prom="$(module_dir github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION")"
  keda="$(module_dir github.com/kedacore/keda/v2 "$KEDA_VERSION")"
  gateway="$(module_dir sigs.k8s.io/gateway-api "$GATEWAY_API_VERSION")"
  rm -rf "$schemas/crds.partial"
  "$venv/bin/python" "$root/deploy/test/crd-to-jsonschema.py" "$schemas/crds.partial" \
    "$prom"/example/prometheus-operator-crd/monitoring.coreos.com_{servicemonitors,podmonitors,prometheusrules}.yaml \
    "$keda"/config/crd/bases/keda.sh_{scaledobjects,triggerauthentications}.yaml \
    "$gateway"/config/crd/standard/gateway.networking.k8s.io_{grpcroutes,httproutes}.yaml
  printf '%s' "$crd_versions" >"$schemas/crds.partial/.versions"
  rm -rf "$schemas/crds"
  mv "$schemas/crds.partial" "$schemas/crds"
fi

for required in "$schemas/crds/monitoring.coreos.com/servicemonitor_v1.json" \
  "$schemas/crds/monitoring.coreos.com/prometheusrule_v1.json" \
  "$schemas/crds/keda.sh/scaledobject_v1alpha1.json" \
  "$schemas/crds/gateway.networking.k8s.io/grpcroute_v1.json" \
  "$schemas/kubernetes/v1.27.0-standalone-strict/deployment-apps-v1.json" \
  "$schemas/kubernetes/v1.37.0-standalone-strict/deployment-apps-v1.json"; do
  [[ -f "$required" ]] || { log "missing $required"; exit 1; }
done

elapsed_ms=$((($(date +%s%N) - started) / 1000000))
built_version() { go version -m "$1" | awk '$1 == "mod" { print $3; exit }'; }
log "ready in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000)))s: helm $(built_version "$bin/helm"), kubeconform $(built_version "$bin/kubeconform"), grpcurl $(built_version "$bin/grpcurl"), kubernetes-validate $KUBERNETES_VALIDATE_VERSION, CRDs from prometheus-operator $PROMETHEUS_OPERATOR_VERSION, keda $KEDA_VERSION, gateway-api $GATEWAY_API_VERSION (cache: $cache)"
