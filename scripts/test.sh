#!/usr/bin/env bash
# Runs every s3seal test on a fresh Debian machine: installs the Debian
# packages the tests need (gcc for -race, rclone, s3cmd, restic, haproxy,
# python3-boto3, softhsm2 and opensc for the PKCS#11 tests, and the rest:
# scripts/test-tools.sh), installs aws (and
# moto_server where Debian has it) when missing, then vets and tests. From
# any directory:
#   bash scripts/test.sh
set -euo pipefail

cd "$(dirname "$0")/.."

die() { echo "test.sh: $*" >&2; exit 1; }

# shellcheck source=scripts/test-tools.sh
source scripts/test-tools.sh

echo "test.sh: go vet ./..."
go vet ./...

# A merge's conflict markers left in a tracked file (a doc once kept both
# sides of one, committed).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && git grep -nE '^(<<<<<<<|>>>>>>>) '; then
	die "merge conflict markers are left in the lines above"
fi

# staticcheck, every check (staticcheck.conf), at a pinned version.
bash scripts/lint-go.sh

# Unit packages with the race detector, which needs cgo; the e2e package
# (s3seal as a subprocess driven by real clients) without it.
[[ $(go env CGO_ENABLED) == 1 ]] || die "go test -race needs cgo: go env CGO_ENABLED is $(go env CGO_ENABLED) (a C compiler on PATH, CGO_ENABLED unset or 1)"
mapfile -t unit < <(go list ./... | grep -v '/e2e$')
if ((${#unit[@]})); then
	echo "test.sh: go test -race ${unit[*]}"
	go test -race -count=1 -timeout 15m "${unit[@]}"
	# Once more without the race detector, for the tests it changes what
	# they measure (allocation counts: it empties sync.Pools at random),
	# which skip under it; they are crypto's (race_test.go). Running every
	# unit package twice cost the suite four minutes of its fifteen.
	echo "test.sh: go test ./crypto/"
	go test -count=1 -timeout 15m ./crypto/
fi
# The PKCS#11 provider is compiled only with -tags pkcs11 (and cgo): its
# tests, on SoftHSM2 tokens they make, fail rather than skip here when
# SoftHSM2 or pkcs11-tool is missing.
echo "test.sh: go test -race -tags pkcs11 ./kms/pkcs11/"
S3SEAL_REQUIRE_PKCS11=1 go test -race -tags pkcs11 -count=1 -timeout 15m ./kms/pkcs11/
echo "test.sh: go test ./e2e/"
go test -count=1 -timeout 25m ./e2e/

# The Dockerfile and deploy/ examples, without a container engine: yamllint
# and structural checks (seconds).
echo "test.sh: scripts/lint-deploy.sh"
bash scripts/lint-deploy.sh
