package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseConfigFlagsAndEnv(t *testing.T) {
	c, err := parseConfig([]string{"--listen", "127.0.0.1:9000"}, env(map[string]string{
		"S3SEAL_LISTEN":             "127.0.0.1:1", // the flag wins
		"S3SEAL_DATA_DIR":           "/tmp/x",
		"S3SEAL_BACKEND_PATH_STYLE": "true",
		"S3SEAL_TRANSFER_TIMEOUT":   "2m",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9000" || c.DataDir != "/tmp/x" || !c.BackendPathStyle || c.BackendRegion != "us-east-1" ||
		c.TransferTimeout != 2*time.Minute || c.TransferMinBytes != 16<<10 || c.MaxRequestsKey != 0 {
		t.Fatalf("%+v", c)
	}
	if _, err := parseConfig(nil, env(map[string]string{"S3SEAL_BACKEND_PATH_STYLE": "maybe"})); err == nil {
		t.Fatal("bad boolean in the environment accepted")
	}
}

func TestParseConfigValidation(t *testing.T) {
	real := []string{"--backend-endpoint", "http://127.0.0.1:1", "--backend-access-key", "a", "--backend-secret-key", "b"}
	cases := []struct {
		name string
		args []string
		ok   bool
	}{
		{"embedded defaults", nil, true},
		{"real backend without key", append(real, "--access-key", "x", "--secret-key", "y"), false},
		{"real backend without credentials", append(real, "--key", "k"), false},
		{"real backend complete", append(real, "--key", "k", "--access-key", "x", "--secret-key", "y"), true},
		{"real backend without backend secret", []string{"--backend-endpoint", "http://h", "--key", "k", "--access-key", "x", "--secret-key", "y"}, false},
		{"tls cert without key", []string{"--tls-cert", "c.pem"}, false},
		{"both key sources", []string{"--key", "k", "--keys-file", "f"}, false},
		{"access key without secret", []string{"--access-key", "x"}, false},
		{"unknown flag", []string{"--nope"}, false},
		{"stray argument", []string{"extra"}, false},
		{"no request slots", []string{"--max-requests", "0"}, false},
		{"per-key limit above the limit", []string{"--max-requests", "4", "--max-requests-per-key", "5"}, false},
		{"per-key limit", []string{"--max-requests", "4", "--max-requests-per-key", "4"}, true},
		{"transfer timeout too short", []string{"--transfer-timeout", "10ms"}, false},
		{"transfer check off", []string{"--transfer-timeout", "0"}, true},
		{"no minimum transfer", []string{"--transfer-min-bytes", "0"}, false},
	}
	for _, c := range cases {
		_, err := parseConfig(c.args, env(nil))
		var ue *usageError
		if c.ok != (err == nil) || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("%s: err=%v", c.name, err)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"keygen"}, env(nil), &out, &errOut); code != 0 {
		t.Fatalf("keygen exit %d", code)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(out.String()))
	if err != nil || len(key) != 32 {
		t.Fatalf("keygen printed %q", out.String())
	}
	for _, args := range [][]string{nil, {"frobnicate"}, {"serve", "--nope"},
		{"serve", "--backend-endpoint", "http://127.0.0.1:1", "--backend-access-key", "a", "--backend-secret-key", "b"}} {
		if code := run(args, env(nil), &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestDevDefaultsOnlyOnLoopback(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseConfig([]string{"--data-dir", dir, "--listen", "0.0.0.0:0"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = serve(context.Background(), cfg, &bytes.Buffer{})
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("dev defaults on 0.0.0.0: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, devKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dev key was created for a non-loopback listener: %v", err)
	}
}

func TestDevKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), devKeyFile)
	k1, err := readOrCreateDevKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("dev key mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	k2, err := readOrCreateDevKey(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatal("the dev key changed on a second start")
	}
	os.WriteFile(path, []byte("not a key\n"), 0o600)
	if _, err := readOrCreateDevKey(path); err == nil || strings.Contains(err.Error(), "not a key") {
		t.Fatalf("corrupt dev key: %v", err)
	}
}

func TestCredentialKeyMustExist(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds.json")
	os.WriteFile(creds, []byte(`{"credentials": [{"access_key": "a", "secret_key": "s", "read": ["*"], "write": ["*"], "key_id": "nope"}]}`), 0o600)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	cfg, err := parseConfig([]string{"--data-dir", dir, "--listen", "127.0.0.1:0", "--key", key, "--credentials-file", creds}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = serve(context.Background(), cfg, &bytes.Buffer{})
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown key id in credentials: %v", err)
	}
}
