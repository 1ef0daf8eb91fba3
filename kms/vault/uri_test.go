package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/kms"
)

// These tests need no server.

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri                     string
		addr, mount, name, file string
		tls                     bool
	}{
		{uri: "hcvault://vault:8200/transit/keys/tenant-a", addr: "vault:8200", mount: "transit", name: "tenant-a", tls: true},
		{uri: "hcvault://vault/transit/keys/k", addr: "vault:8200", mount: "transit", name: "k", tls: true},
		{uri: "hcvault://vault:8200/transit", addr: "vault:8200", mount: "transit", tls: true},
		{uri: "hcvault://vault:8200/transit/", addr: "vault:8200", mount: "transit", tls: true},
		{uri: "hcvault://vault:8200/transit/keys/", addr: "vault:8200", mount: "transit", tls: true},
		{uri: "hcvault://[::1]:8201/a/b/keys/k.1@x", addr: "[::1]:8201", mount: "a/b", name: "k.1@x", tls: true},
		// The last "/keys/" splits: the mount may have one.
		{uri: "hcvault://v:1/keys/x/keys/k", addr: "v:1", mount: "keys/x", name: "k", tls: true},
		{uri: "hcvault://v:1/kms/keys", addr: "v:1", mount: "kms/keys", tls: true},
		{uri: "hcvault://127.0.0.1:8200/transit/keys/k?tls=false", addr: "127.0.0.1:8200", mount: "transit", name: "k"},
		{uri: "hcvault://v:1/transit/keys/k?token-file=/run/token&tls=true", addr: "v:1", mount: "transit", name: "k", file: "/run/token", tls: true},
	} {
		c, err := parseURI(tc.uri)
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		want := uriConfig{addr: tc.addr, mount: tc.mount, name: tc.name, tls: tc.tls, tokenFile: tc.file}
		if c != want {
			t.Errorf("%s: got %+v, want %+v", tc.uri, c, want)
		}
	}
}

func TestParseURIRefuses(t *testing.T) {
	for uri, want := range map[string]string{
		"hcvault://vault:8200":                                   "no mount",
		"hcvault://vault:8200/keys/k":                            "no mount",
		"hcvault:///transit/keys/k":                              "no host",
		"hcvault://tok@vault:8200/transit/keys/k":                "no user or token",
		"hcvault://vault:8200/transit/keys/a/b":                  "not a Transit key name",
		"hcvault://vault:8200/transit/keys/-a":                   "not a Transit key name",
		"hcvault://vault:8200/transit/keys/a%20b":                "not a Transit key name",
		"hcvault://vault:8200/trans it/keys/k":                   "each segment",
		"hcvault://vault:8200/a//b/keys/k":                       "each segment",
		"hcvault://vault:8200/a/../b/keys/k":                     "each segment",
		"hcvault://vault:8200/transit/keys/k?tls=no":             "tls=no",
		"hcvault://vault:8200/transit/keys/k?tls=false&tls=true": "given 2 times",
		"hcvault://vault:8200/transit/keys/k?token=x":            "unknown parameter",
		"hcvault://vault:8200/transit/keys/k?token-file=":        "names no file",
		"hcvault://vault:8200/transit/keys/k#frag":               "fragment",
		"aws-kms://vault:8200/transit/keys/k":                    "want hcvault://",
	} {
		_, err := parseURI(uri)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error saying %q", uri, err, want)
		}
	}
}

func TestOpenRegistered(t *testing.T) {
	p, name, err := kms.Open("hcvault://vault:8200/transit/keys/tenant-a", envOf(map[string]string{"VAULT_TOKEN": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	vp, ok := p.(*Provider)
	if !ok || name != "tenant-a" || p.Scheme() != "hcvault" {
		t.Fatalf("kms.Open gave %T %q %q", p, name, p.Scheme())
	}
	if got := vp.String(); got != "https://vault:8200/transit" {
		t.Errorf("String() = %q", got)
	}
	if vp.client.Token() != "t" {
		t.Errorf("token %q, want VAULT_TOKEN's", vp.client.Token())
	}
}

// The api client reads VAULT_TOKEN and VAULT_NAMESPACE from the process;
// the provider reads them through getenv only.
func TestOpenReadsOnlyGetenv(t *testing.T) {
	t.Setenv("VAULT_TOKEN", "from-process")
	t.Setenv("VAULT_NAMESPACE", "process-ns")
	p, _, err := Open("hcvault://v:1/transit", envOf(map[string]string{"VAULT_TOKEN": "from-getenv", "VAULT_NAMESPACE": "ns1"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.client.Token() != "from-getenv" {
		t.Errorf("token %q", p.client.Token())
	}
	if ns := p.client.Headers().Get("X-Vault-Namespace"); ns != "ns1" {
		t.Errorf("namespace %q, want ns1", ns)
	}
}

func TestOpenToken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	if err := os.WriteFile(good, []byte("hvs.file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(dir, "loose")
	if err := os.WriteFile(loose, []byte("hvs.x"), 0o640); err != nil {
		t.Fatal(err)
	}
	const uri = "hcvault://v:1/transit/keys/k"
	for _, tc := range []struct {
		uri   string
		env   map[string]string
		token string // "" means an error containing errWant
		err   string
	}{
		{uri: uri, env: map[string]string{}, err: "no token"},
		{uri: uri, env: map[string]string{"VAULT_TOKEN": " hvs.env\n"}, token: "hvs.env"},
		{uri: uri + "?token-file=" + good, env: map[string]string{}, token: "hvs.file-token"},
		{uri: uri, env: map[string]string{"VAULT_TOKEN_FILE": good}, token: "hvs.file-token"},
		{uri: uri + "?token-file=" + good, env: map[string]string{"VAULT_TOKEN": "x"}, err: "give one"},
		{uri: uri + "?token-file=" + good, env: map[string]string{"VAULT_TOKEN_FILE": good}, err: "give one"},
		{uri: uri + "?token-file=" + loose, env: map[string]string{}, err: "chmod 600"},
		{uri: uri + "?token-file=" + dir, env: map[string]string{}, err: "not a regular file"},
		{uri: uri + "?token-file=" + filepath.Join(dir, "none"), env: map[string]string{}, err: "no such file"},
		{uri: uri, env: map[string]string{"VAULT_TOKEN": "x", "VAULT_SKIP_VERIFY": "true"}, err: "always verifies"},
		{uri: uri, env: map[string]string{"VAULT_TOKEN": "x", "VAULT_SKIP_VERIFY": "false"}, token: "x"},
		{uri: uri, env: map[string]string{"VAULT_TOKEN": "x", "VAULT_CACERT": filepath.Join(dir, "none.pem")}, err: "TLS to v:1"},
	} {
		p, _, err := Open(tc.uri, envOf(tc.env))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: got %v, want an error saying %q", tc.uri, tc.env, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s %v: %v", tc.uri, tc.env, err)
		case p.client.Token() != tc.token:
			t.Errorf("%s %v: token %q, want %q", tc.uri, tc.env, p.client.Token(), tc.token)
		}
	}
}

// A token file that changes is read again before the next call; one
// whose mode becomes loose is refused then.
func TestTokenFileFollowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("hvs.one"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _, err := Open("hcvault://v:1/transit?token-file="+path, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", []byte("hvs.second"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if err := p.refreshToken(); err != nil || p.client.Token() != "hvs.second" {
		t.Fatalf("after a rewrite: token %q, %v", p.client.Token(), err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("hvs.third"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.refreshToken(); kindOf(err) != kms.Failed || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a loose token file: %v", err)
	}
}

func TestVersion(t *testing.T) {
	var p Provider
	for sealed, want := range map[string]string{
		"vault:v1:abcd":       "v1",
		"vault:v27:abcd":      "v27",
		"vault:v:abcd":        "",
		"vault:vx:abcd":       "",
		"vault:v1":            "",
		"vault:1:abcd":        "",
		"bao:v1:abcd":         "",
		"":                    "",
		"vault:v123456789012": "",
	} {
		if got := p.Version("k", []byte(sealed)); got != want {
			t.Errorf("Version(%q) = %q, want %q", sealed, got, want)
		}
	}
}

// What is not a Transit ciphertext, or names a key in another way than
// Transit does, is refused without a call (the provider's address is
// one nothing listens on).
func TestRefusedWithoutCall(t *testing.T) {
	p, _, err := Open("hcvault://127.0.0.1:1/transit?tls=false", envOf(map[string]string{"VAULT_TOKEN": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sealed := range []string{"", "vault:", "AQID", "vault:v1:a b", "vault:v1:\x00"} {
		if _, err := p.Decrypt(ctx, "k", []byte(sealed), nil); kindOf(err) != kms.Invalid {
			t.Errorf("Decrypt(%q): %v, want Invalid", sealed, err)
		}
		if _, err := p.Rewrap(ctx, "k", []byte(sealed), nil); kindOf(err) != kms.Invalid {
			t.Errorf("Rewrap(%q): %v, want Invalid", sealed, err)
		}
	}
	for _, name := range []string{"", "a/b", "../x", "other/keys/k", "transit/keys/", "k?x"} {
		if _, _, _, err := p.GenerateKey(ctx, name, nil); kindOf(err) != kms.NotFound {
			t.Errorf("GenerateKey(%q): %v, want NotFound", name, err)
		}
		if err := p.Check(ctx, name); kindOf(err) != kms.NotFound {
			t.Errorf("Check(%q): %v, want NotFound", name, err)
		}
	}
}

// kindOf is the kms.Kind a provider error carries, 0 for none.
func kindOf(err error) kms.Kind {
	var pe *kms.ProviderError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &pe):
		return pe.Kind
	}
	return kms.Failed
}
