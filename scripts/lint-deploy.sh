#!/usr/bin/env bash
# Checks the Dockerfile and deploy/ without a container engine or a cluster:
# yamllint (Debian's package) on every YAML file, then scripts/lint-deploy.py
# (python3-yaml) on what the examples promise: the Go version of go.mod, a
# static -trimpath build, a non-root user, the healthcheck, the ports,
# probes on /healthz and /readyz, secrets mounted 0400, no secret values on a
# command line. Takes a second or two.
#   bash scripts/lint-deploy.sh
set -euo pipefail

cd "$(dirname "$0")/.."

die() { echo "lint-deploy.sh: $*" >&2; exit 1; }

need=()
command -v yamllint >/dev/null 2>&1 || need+=(yamllint)
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
if ((${#need[@]})); then
	[[ $(id -u) -eq 0 ]] || die "missing ${need[*]}: run as root or install them (apt-get install -y ${need[*]})"
	echo "lint-deploy.sh: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${need[@]}" || die "apt-get install ${need[*]} failed"
fi

echo "lint-deploy.sh: yamllint deploy/"
yamllint -s -d '{extends: default, rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}, comments: {min-spaces-from-content: 1}}}' deploy/

echo "lint-deploy.sh: Dockerfile and deploy/ checks"
python3 scripts/lint-deploy.py
