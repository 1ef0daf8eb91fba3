#!/usr/bin/env bash
# Builds the Vault server that kms/vault's tests run in dev mode, when it
# is not built yet, and prints the binary's path. The tests look for it
# at that path (or at $S3SEAL_VAULT_BIN). Usage: scripts/vault-dev.sh
#
# Vault is built from its Go module (github.com/hashicorp/vault@v1.21.4,
# from the Go module proxy, checked against sum.golang.org): no Debian
# package and no release download. Its go.mod replaces its api and sdk
# modules by the copies in its own tree (./api, ./sdk), which a module
# download leaves out, so the build uses the published ones instead: api
# v1.22.0 as Vault's go.mod requires, and sdk v0.21.0, the published sdk
# closest to the one in the v1.21.4 tree, with two differences made good:
#   - keysutil's RestorePolicy returns the restored key's name in the tree
#     (a change published in sdk v0.24.0): that file is taken from v0.24.0;
#   - framework.Backend.ActivationFunc takes a third argument in sdk
#     v0.21.0 but not in the tree: Vault's two uses of it get one (the
#     identity store's deduplication activation, which ignores it).
# Nothing in Transit changes. The first build takes 12 to 18 minutes on
# two cores (modules downloaded, build cache cold) and adds much to the
# Go module and build caches; the binary is about 350 MB.
#
# Start a dev server with it (in-memory, unsealed, root token "root"):
#
#   vault server -dev -dev-root-token-id=root -dev-listen-address=127.0.0.1:8200
#
# then, with VAULT_ADDR=http://127.0.0.1:8200 and VAULT_TOKEN=root:
#
#   vault secrets enable transit
#   vault write -f transit/keys/s3seal
set -euo pipefail

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

version=1.21.4
api_version=v1.22.0
sdk_version=v0.21.0
sdk_restore_from=v0.24.0

dir=${XDG_CACHE_HOME:-$HOME/.cache}/s3seal/vault-$version
bin=$dir/vault
if [[ -x $bin ]]; then
	echo "$bin"
	exit 0
fi
command -v go >/dev/null 2>&1 || die "go not found on PATH"

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"

# moddir MODULE@VERSION: downloads a module and prints its directory.
moddir() {
	local d
	d=$(GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -n $d && -d $d ]] || die "go mod download $1 failed"
	echo "$d"
}

echo "$(basename "$0"): building Vault $version into $dir (12 to 18 minutes the first time)" >&2
src=$(moddir "github.com/hashicorp/vault@v$version")
sdk=$(moddir "github.com/hashicorp/vault/sdk@$sdk_version")
sdk_restore=$(moddir "github.com/hashicorp/vault/sdk@$sdk_restore_from")
cp -r "$src" vault
cp -r "$sdk" sdk
chmod -R u+w vault sdk
cp "$sdk_restore/helper/keysutil/lock_manager.go" sdk/helper/keysutil/lock_manager.go

cd vault
for m in api api/auth/approle api/auth/kubernetes api/auth/userpass sdk; do
	go mod edit -dropreplace="github.com/hashicorp/vault/$m"
done
go mod edit -replace=github.com/hashicorp/vault/sdk=../sdk
grep -q "github.com/hashicorp/vault/api $api_version\$" go.mod || die "Vault $version's go.mod no longer requires api $api_version"

# patch FILE OLD NEW: replaces the one line OLD by NEW, or fails.
patch_line() {
	grep -qxF "$2" "$1" || die "$1 has no line: $2"
	OLD=$2 NEW=$3 perl -0pi -e 's/^\Q$ENV{OLD}\E$/$ENV{NEW}/m' "$1"
	grep -qxF "$3" "$1" || die "patching $1 failed"
}
patch_line vault/identity_store_util.go \
	'func (i *IdentityStore) activateDeduplication(ctx context.Context, req *logical.Request) error {' \
	'func (i *IdentityStore) activateDeduplication(ctx context.Context, req *logical.Request, _ string) error {'
patch_line vault/logical_system_activation_flags.go \
	'	if err := b.idStoreBackend.ActivationFunc(ctx, nil); err != nil {' \
	'	if err := b.idStoreBackend.ActivationFunc(ctx, nil, ""); err != nil {'

mkdir -p "$dir"
# As HashiCorp's release builds: no cgo. -mod=mod: the published api and
# sdk are not in Vault's go.sum.
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w" -o "$dir/vault.tmp" . ||
	die "building Vault $version failed"
"$dir/vault.tmp" version >/dev/null || die "the built vault does not run"
mv "$dir/vault.tmp" "$bin"
echo "$bin"
