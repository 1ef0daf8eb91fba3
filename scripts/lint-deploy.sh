#!/usr/bin/env bash
# Checks the Dockerfile and deploy/ without a container engine or a cluster:
# yamllint (Debian's package) on every YAML file but the Helm chart's
# templates (not YAML until rendered); scripts/lint-deploy.py (python3-yaml)
# on what the examples promise: the Go version of go.mod, a static -trimpath
# build, a non-root user, the healthcheck, the ports, probes on /healthz and
# /readyz, secrets mounted 0400, no secret values on a command line, the
# dashboard's expressions parsed by promtool; helm lint and helm template on
# deploy/helm/s3seal (defaults, and ci/full-values.yaml with every optional
# part on) and scripts/lint-helm.py (the default render is what
# deploy/kubernetes applies); promtool check rules and test rules on the
# alert rules. Installs what is missing: yamllint, python3-yaml and
# prometheus (for promtool) from Debian, helm with go install at a pinned
# version. Takes a few seconds once installed. cmd/s3seal/monitoring_test.go
# (a unit test) checks the dashboard's and the rules' series names.
#   bash scripts/lint-deploy.sh
set -euo pipefail

cd "$(dirname "$0")/.."

die() { echo "lint-deploy.sh: $*" >&2; exit 1; }

need=()
command -v yamllint >/dev/null 2>&1 || need+=(yamllint)
command -v promtool >/dev/null 2>&1 || need+=(prometheus) # Debian ships promtool in it
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
if ((${#need[@]})); then
	[[ $(id -u) -eq 0 ]] || die "missing ${need[*]}: run as root or install them (apt-get install -y ${need[*]})"
	echo "lint-deploy.sh: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${need[@]}" || die "apt-get install ${need[*]} failed"
fi

# helm v4, pinned; go install puts it in GOBIN, else the first GOPATH's bin.
# One of another version there (go version -m reads the module's) is
# replaced.
helm_version=v4.3.2
command -v go >/dev/null 2>&1 || die "missing go, which installs helm $helm_version (go install helm.sh/helm/v4/cmd/helm@$helm_version)"
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
HELM="$gobin/helm"
if [[ ! -x $HELM ]] || ! go version -m "$HELM" 2>/dev/null | grep -q "helm.sh/helm/v4[[:space:]]*$helm_version"; then
	echo "lint-deploy.sh: installing helm $helm_version (go install)"
	go install "helm.sh/helm/v4/cmd/helm@$helm_version" || die "missing helm: go install helm.sh/helm/v4/cmd/helm@$helm_version failed"
	[[ -x $HELM ]] || die "missing helm: go install helm.sh/helm/v4/cmd/helm@$helm_version left no $HELM"
fi
export HELM
for tool in yamllint promtool python3; do
	command -v "$tool" >/dev/null 2>&1 || die "missing $tool"
done

echo "lint-deploy.sh: yamllint deploy/ (but the chart's templates)"
yamllint -s -d '{extends: default, ignore: "deploy/helm/s3seal/templates/", rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}, comments: {min-spaces-from-content: 1}}}' deploy/

echo "lint-deploy.sh: Dockerfile and deploy/ checks"
python3 scripts/lint-deploy.py

chart=deploy/helm/s3seal
echo "lint-deploy.sh: helm lint and helm template $chart (defaults, and ci/full-values.yaml)"
"$HELM" lint --strict "$chart" || die "helm lint $chart failed"
"$HELM" lint --strict "$chart" -f "$chart/ci/full-values.yaml" || die "helm lint $chart -f ci/full-values.yaml failed"
"$HELM" template s3seal "$chart" >/dev/null || die "helm template $chart failed"
"$HELM" template s3seal "$chart" -f "$chart/ci/full-values.yaml" >/dev/null || die "helm template $chart -f ci/full-values.yaml failed"
echo "lint-deploy.sh: the chart against deploy/kubernetes"
python3 scripts/lint-helm.py

echo "lint-deploy.sh: promtool on deploy/prometheus"
promtool check rules deploy/prometheus/s3seal-alerts.yaml || die "promtool check rules failed"
(cd deploy/prometheus && promtool test rules s3seal-alerts_test.yaml) || die "promtool test rules failed"
