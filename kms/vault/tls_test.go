package vault

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/kms"
)

// https, the default: Vault's certificate verifies with VAULT_CACERT,
// and not without it; a URI that says the other of http and https than
// the server speaks is refused with the fix. The test starts a server of
// its own, with -dev-tls.
func TestTLS(t *testing.T) {
	plainDev := needDev(t)
	bin, _ := vaultBinary()
	dir := t.TempDir()
	d, err := startDev(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	if err := d.setUp(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	uri := "hcvault://" + d.addr + "/transit/keys/" + name
	ca := filepath.Join(dir, "vault-ca.pem")

	p, _, err := Open(uri, envOf(map[string]string{"VAULT_TOKEN": rootToken, "VAULT_CACERT": ca}))
	if err != nil {
		t.Fatal(err)
	}
	plain, sealed, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Decrypt(ctx, name, sealed, nil); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt over https: %v", err)
	}
	if err := p.Check(ctx, name); err != nil {
		t.Fatal(err)
	}
	// The name the certificate is for may be given.
	byName, _, err := Open(strings.Replace(uri, "127.0.0.1", "localhost", 1),
		envOf(map[string]string{"VAULT_TOKEN": rootToken, "VAULT_CACERT": ca, "VAULT_TLS_SERVER_NAME": "localhost"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := byName.Check(ctx, name); err != nil {
		t.Errorf("https by the name localhost: %v", err)
	}

	for what, c := range map[string]struct {
		uri  string
		env  map[string]string
		want string
	}{
		"no CA":             {uri, map[string]string{"VAULT_TOKEN": rootToken}, "VAULT_CACERT"},
		"wrong server name": {uri, map[string]string{"VAULT_TOKEN": rootToken, "VAULT_CACERT": ca, "VAULT_TLS_SERVER_NAME": "vault.example"}, "VAULT_CACERT"},
		"http to https":     {uri + "?tls=false", map[string]string{"VAULT_TOKEN": rootToken}, "HTTP request to an HTTPS server"},
		"https to http":     {"hcvault://" + plainDev.addr + "/transit/keys/k", map[string]string{"VAULT_TOKEN": rootToken}, "tls=false"},
	} {
		p, _, err := Open(c.uri, envOf(c.env))
		if err != nil {
			t.Fatal(err)
		}
		err = p.Check(ctx, name)
		if kindOf(err) != kms.Failed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want Failed saying %q", what, err, c.want)
		}
	}
}
