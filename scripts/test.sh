#!/usr/bin/env bash
# Runs every s3seal test on a fresh Debian machine: installs the Debian
# packages the end-to-end tests drive (rclone, s3cmd), checks the tools that
# ship with the machine (go, aws, moto_server), then vets and tests.
#   bash scripts/test.sh
set -euo pipefail

cd "$(dirname "$0")/.."

die() { echo "test.sh: $*" >&2; exit 1; }

# Debian packages the e2e tests need, by command name -> package name.
declare -A debs=([rclone]=rclone [s3cmd]=s3cmd [curl]=curl [kcat]=kcat)
missing=()
for cmd in "${!debs[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${debs[$cmd]}")
done
if ((${#missing[@]})); then
	[[ $(id -u) -eq 0 ]] || die "missing ${missing[*]}: run as root or install them (apt-get install -y ${missing[*]})"
	echo "test.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${missing[@]}" || die "apt-get install ${missing[*]} failed"
fi
[[ -x /usr/bin/rclone ]] || die "/usr/bin/rclone (Debian's rclone) missing after install"

# Shipped with the machine (pyenv): not installable from Debian's packages in
# the versions the tests expect, so fail loudly.
for cmd in go aws moto_server s3cmd; do
	command -v "$cmd" >/dev/null 2>&1 || die "$cmd not found on PATH"
done

echo "test.sh: go vet ./..."
go vet ./...

# Unit packages with the race detector; the e2e package (s3seal as a
# subprocess driven by real clients) without it.
mapfile -t unit < <(go list ./... | grep -v '/e2e$')
if ((${#unit[@]})); then
	echo "test.sh: go test -race ${unit[*]}"
	go test -race -count=1 -timeout 15m "${unit[@]}"
	# Once more without the race detector, which changes what some tests
	# measure (allocation counts: it empties sync.Pools at random).
	echo "test.sh: go test ${unit[*]}"
	go test -count=1 -timeout 15m "${unit[@]}"
fi
echo "test.sh: go test ./e2e/"
go test -count=1 -timeout 15m ./e2e/

# The Dockerfile and deploy/ examples, without a container engine: yamllint
# and structural checks (seconds).
echo "test.sh: scripts/lint-deploy.sh"
bash scripts/lint-deploy.sh
