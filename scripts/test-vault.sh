#!/usr/bin/env bash
# Runs the Vault Transit provider's tests against a real Vault dev server:
# builds Vault once (scripts/vault-dev.sh; about 20 minutes on 2 cores,
# cached in ${XDG_CACHE_HOME:-~/.cache}/s3seal) and runs kms/vault's
# tests and the end-to-end test with it, failing if it is missing. Not
# part of the suite (.ci/run), whose 15 minutes the build would exceed;
# there these tests skip, naming this command.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash scripts/vault-dev.sh)
export S3SEAL_VAULT_BIN=$bin S3SEAL_REQUIRE_VAULT=1
go test -count=1 ./kms/vault
go test -count=1 ./e2e -run 'TestKMSVault'
