#!/bin/sh
# Writes the secret files deploy/compose.yaml reads into deploy/secrets/
# (mode 0600, this user's): a master keyring, the client credentials and
# the object store's root secret. Existing files are kept, so running it
# again never replaces a master key (without it the data is gone).
#   sh deploy/gen-secrets.sh
set -eu
dir=$(dirname "$0")/secrets
umask 077
mkdir -p "$dir"

rand() { head -c "$1" /dev/urandom | base64 | tr -d '\n'; }
keep() { [ -e "$dir/$1" ] && echo "kept $dir/$1" >&2; }

# 32 random bytes in base64, what `s3seal keygen` prints.
keep keys.json || {
	id=$(date -u +%Y-%m)
	printf '{"primary": "%s", "keys": {"%s": "%s"}}\n' "$id" "$id" "$(rand 32)" >"$dir/keys.json"
}
keep credentials.json || {
	printf '{"credentials": [\n  {"access_key": "backup", "secret_key": "%s", "read": ["*"], "write": ["*"]}\n]}\n' \
		"$(rand 30 | tr '+/' '-_')" >"$dir/credentials.json"
}
keep backend_secret_key || rand 30 | tr '+/' '-_' >"$dir/backend_secret_key"
chmod 600 "$dir"/*
echo "secrets in $dir; the client's secret key is in $dir/credentials.json" >&2
