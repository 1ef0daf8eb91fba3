package vault

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/vault/api"

	"github.com/s3seal/s3seal/kms"
)

// These tests run against the package's Vault dev server.

func TestRoundTrip(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	p := d.open(t, "transit", name, rootToken)
	if err := p.Check(ctx, name); err != nil {
		t.Fatal(err)
	}
	kctx := map[string]string{"aws:s3:arn": "arn:aws:s3:::b/k"}
	plain, sealed, canonical, err := p.GenerateKey(ctx, name, kctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 32 || canonical != name || !strings.HasPrefix(string(sealed), "vault:v1:") {
		t.Fatalf("GenerateKey: %d bytes, sealed %q, canonical %q", len(plain), sealed, canonical)
	}
	if v := p.Version(name, sealed); v != "v1" {
		t.Errorf("Version = %q, want v1", v)
	}
	got, err := p.Decrypt(ctx, name, sealed, kctx)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt: %v (equal %v)", err, bytes.Equal(got, plain))
	}
	// <mount>/keys/<name> of the provider's mount is the same key.
	if got, err := p.Decrypt(ctx, "transit/keys/"+name, sealed, kctx); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt by transit/keys/%s: %v", name, err)
	}
	_, _, canonical, err = p.GenerateKey(ctx, "transit/keys/"+name, nil)
	if err != nil || canonical != name {
		t.Fatalf("GenerateKey by transit/keys/%s: canonical %q, %v", name, canonical, err)
	}
	// Two keys are never alike.
	plain2, sealed2, _, err := p.GenerateKey(ctx, name, kctx)
	if err != nil || bytes.Equal(plain, plain2) || bytes.Equal(sealed, sealed2) {
		t.Fatalf("a second GenerateKey: %v", err)
	}
}

// A mount whose path has slashes (and even "keys") is split at the last
// "/keys/".
func TestNestedMount(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, nestedMount, name, nil)
	p := d.open(t, nestedMount, name, rootToken)
	plain, sealed, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Decrypt(ctx, name, sealed, nil); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt: %v", err)
	}
	if err := p.Check(ctx, nestedMount+"/keys/"+name); err != nil {
		t.Fatal(err)
	}
}

// Rotation: new keys are sealed under the new version, old ones still
// open, and Rewrap moves them to the latest version.
func TestRotation(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	p := d.open(t, "transit", name, rootToken)
	plain1, sealed1, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/rotate", nil); err != nil {
		t.Fatal(err)
	}
	plain2, sealed2, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v1, v2 := p.Version(name, sealed1), p.Version(name, sealed2); v1 != "v1" || v2 != "v2" {
		t.Fatalf("versions %q and %q, want v1 and v2", v1, v2)
	}
	for i, c := range []struct{ plain, sealed []byte }{{plain1, sealed1}, {plain2, sealed2}} {
		if got, err := p.Decrypt(ctx, name, c.sealed, nil); err != nil || !bytes.Equal(got, c.plain) {
			t.Fatalf("Decrypt of key %d: %v", i+1, err)
		}
	}
	rewrapped, err := p.Rewrap(ctx, name, sealed1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Version(name, rewrapped); v != "v2" {
		t.Fatalf("rewrapped under %q, want v2", v)
	}
	if got, err := p.Decrypt(ctx, name, rewrapped, nil); err != nil || !bytes.Equal(got, plain1) {
		t.Fatalf("Decrypt of the rewrapped key: %v", err)
	}

	// Retiring v1: what it sealed is refused as Disabled, the rewrapped
	// key still opens, and Rewrap of a v1 key is refused alike.
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/config", map[string]any{"min_decryption_version": 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Decrypt(ctx, name, sealed1, nil); kindOf(err) != kms.Disabled || !strings.Contains(err.Error(), "retired") {
		t.Fatalf("Decrypt of a retired version: %v, want Disabled", err)
	}
	if _, err := p.Rewrap(ctx, name, sealed1, nil); kindOf(err) != kms.Disabled {
		t.Fatalf("Rewrap of a retired version: %v, want Disabled", err)
	}
	if got, err := p.Decrypt(ctx, name, rewrapped, nil); err != nil || !bytes.Equal(got, plain1) {
		t.Fatalf("Decrypt of the rewrapped key after retiring v1: %v", err)
	}
	if err := p.Check(ctx, name); err != nil {
		t.Fatalf("Check of a key with a retired version: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	p := d.open(t, "transit", name, rootToken)
	_, sealed, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := p.GenerateKey(ctx, "no-such-key", nil); kindOf(err) != kms.NotFound {
		t.Errorf("GenerateKey of an unknown key: %v, want NotFound", err)
	}
	if _, err := p.Decrypt(ctx, "no-such-key", sealed, nil); kindOf(err) != kms.NotFound {
		t.Errorf("Decrypt with an unknown key: %v, want NotFound", err)
	}
	if _, err := p.Rewrap(ctx, "no-such-key", sealed, nil); kindOf(err) != kms.NotFound {
		t.Errorf("Rewrap with an unknown key: %v, want NotFound", err)
	}
	if err := p.Check(ctx, "no-such-key"); kindOf(err) != kms.NotFound {
		t.Errorf("Check of an unknown key: %v, want NotFound", err)
	}
	// No engine at the mount.
	other := d.open(t, "no-such-mount", name, rootToken)
	if _, _, _, err := other.GenerateKey(ctx, name, nil); kindOf(err) != kms.NotFound {
		t.Errorf("GenerateKey in an unknown mount: %v, want NotFound", err)
	}
	if err := other.Check(ctx, name); kindOf(err) != kms.NotFound {
		t.Errorf("Check in an unknown mount: %v, want NotFound", err)
	}

	// A deleted key (a crypto-shred) is NotFound.
	if _, err := d.root.Logical().Write("transit/keys/"+name+"/config", map[string]any{"deletion_allowed": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.root.Logical().Delete("transit/keys/" + name); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Decrypt(ctx, name, sealed, nil); kindOf(err) != kms.NotFound {
		t.Errorf("Decrypt with a deleted key: %v, want NotFound", err)
	}
}

// A sealed key this master key did not make is Invalid: another key's,
// or damaged.
func TestInvalid(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	a, b := keyName(t)+"-a", keyName(t)+"-b"
	d.createKey(t, "transit", a, nil)
	d.createKey(t, "transit", b, nil)
	p := d.open(t, "transit", a, rootToken)
	_, sealedB, _, err := p.GenerateKey(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Decrypt(ctx, a, sealedB, nil); kindOf(err) != kms.Invalid {
		t.Errorf("Decrypt of b's key with a: %v, want Invalid", err)
	}
	if _, err := p.Rewrap(ctx, a, sealedB, nil); kindOf(err) != kms.Invalid {
		t.Errorf("Rewrap of b's key with a: %v, want Invalid", err)
	}
	damaged := bytes.Clone(sealedB)
	damaged[len(damaged)-3] ^= 'A' ^ 'B'
	if damaged[len(damaged)-3] == sealedB[len(damaged)-3] {
		damaged[len(damaged)-3] = 'C'
	}
	for _, s := range [][]byte{damaged, []byte("vault:v1:AAAA"), []byte("vault:v1:!!"), []byte("vault:v9:" + strings.TrimPrefix(string(sealedB), "vault:v1:"))} {
		if _, err := p.Decrypt(ctx, b, s, nil); kindOf(err) != kms.Invalid {
			t.Errorf("Decrypt of %q: %v, want Invalid", s, err)
		}
	}
}

// A token whose policy does not allow the call is Denied; so is a token
// Vault does not know.
func TestDenied(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	root := d.open(t, "transit", name, rootToken)
	_, sealed, _, err := root.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	// This policy may generate and check, but not decrypt or rewrap.
	policy := `path "transit/datakey/plaintext/` + name + `" { capabilities = ["update"] }
path "transit/keys/` + name + `" { capabilities = ["read"] }`
	if err := d.root.Sys().PutPolicy(name, policy); err != nil {
		t.Fatal(err)
	}
	tok, err := d.root.Auth().Token().Create(&api.TokenCreateRequest{Policies: []string{name}, NoDefaultPolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	p := d.open(t, "transit", name, tok.Auth.ClientToken)
	if err := p.Check(ctx, name); err != nil {
		t.Errorf("Check with a token that may read the key: %v", err)
	}
	if _, _, _, err := p.GenerateKey(ctx, name, nil); err != nil {
		t.Errorf("GenerateKey with a token that may: %v", err)
	}
	if _, err := p.Decrypt(ctx, name, sealed, nil); kindOf(err) != kms.Denied {
		t.Errorf("Decrypt with a token that may not: %v, want Denied", err)
	}
	if _, err := p.Rewrap(ctx, name, sealed, nil); kindOf(err) != kms.Denied {
		t.Errorf("Rewrap with a token that may not: %v, want Denied", err)
	}
	if err := p.Check(ctx, "other"); kindOf(err) != kms.Denied {
		t.Errorf("Check of a key the token may not read: %v, want Denied", err)
	}
	bogus := d.open(t, "transit", name, "hvs.not-a-token")
	if _, _, _, err := bogus.GenerateKey(ctx, name, nil); kindOf(err) != kms.Denied {
		t.Errorf("GenerateKey with an unknown token: %v, want Denied", err)
	}
	// Revoking the token (a crypto-shred that can be undone with a new
	// token) denies everything.
	if err := d.root.Auth().Token().RevokeTree(tok.Auth.ClientToken); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := p.GenerateKey(ctx, name, nil); kindOf(err) != kms.Denied {
		t.Errorf("GenerateKey with a revoked token: %v, want Denied", err)
	}
}

// Keys s3seal cannot use fail Check with the reason.
func TestCheckRefusesUnusableKeys(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	base := keyName(t)
	for suffix, c := range map[string]struct {
		params map[string]any
		want   string
	}{
		"-derived": {map[string]any{"derived": true}, "derived"},
		"-ed25519": {map[string]any{"type": "ed25519"}, "does not encrypt"},
		"-hmac":    {map[string]any{"type": "hmac", "key_size": 32}, "does not encrypt"},
	} {
		name := base + suffix
		d.createKey(t, "transit", name, c.params)
		p := d.open(t, "transit", name, rootToken)
		if err := p.Check(ctx, name); kindOf(err) != kms.Failed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check of %s: %v, want Failed saying %q", name, err, c.want)
		}
		if _, _, _, err := p.GenerateKey(ctx, name, nil); kindOf(err) != kms.Failed {
			t.Errorf("GenerateKey with %s: %v, want Failed", name, err)
		}
	}
}

// The token may come from a file, read again when it changes.
func TestTokenFile(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	path := t.TempDir() + "/token"
	writeFile(t, path, "hvs.wrong\n")
	p, _, err := Open(d.uri("transit", name)+"&token-file="+path, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx, name); kindOf(err) != kms.Denied {
		t.Fatalf("Check with a wrong token: %v, want Denied", err)
	}
	writeFile(t, path, rootToken+"\n")
	if err := p.Check(ctx, name); err != nil {
		t.Fatalf("Check after the token file was rewritten: %v", err)
	}
}

// writeFile replaces path by a file of mode 0600 holding s, as Vault
// Agent does (a rename).
func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// The policy the package documentation gives s3seal's token is enough
// for every call.
func TestDocumentedPolicy(t *testing.T) {
	d := needDev(t)
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	policy := strings.NewReplacer("<mount>", "transit", "<name>", name).Replace(`
path "<mount>/datakey/plaintext/<name>" { capabilities = ["update"] }
path "<mount>/decrypt/<name>"           { capabilities = ["update"] }
path "<mount>/rewrap/<name>"            { capabilities = ["update"] }
path "<mount>/keys/<name>"              { capabilities = ["read"] }`)
	if err := d.root.Sys().PutPolicy(name, policy); err != nil {
		t.Fatal(err)
	}
	tok, err := d.root.Auth().Token().Create(&api.TokenCreateRequest{Policies: []string{name}, NoDefaultPolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	p := d.open(t, "transit", name, tok.Auth.ClientToken)
	if err := p.Check(ctx, name); err != nil {
		t.Fatal(err)
	}
	plain, sealed, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Decrypt(ctx, name, sealed, nil); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt: %v", err)
	}
	if _, err := p.Rewrap(ctx, name, sealed, nil); err != nil {
		t.Fatal(err)
	}
}
