package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
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
		c.TransferTimeout != 2*time.Minute || c.TransferMinBytes != 16<<10 || c.MaxRequestsKey != 0 ||
		c.SpoolReserve != 256<<20 || c.ListCacheEntries != 100_000 {
		t.Fatalf("%+v", c)
	}
	c, err = parseConfig([]string{"--list-cache-entries", "5000"}, env(map[string]string{"S3SEAL_SPOOL_RESERVE": "1048576"}))
	if err != nil || c.SpoolReserve != 1<<20 || c.ListCacheEntries != 5000 {
		t.Fatalf("--spool-reserve from S3SEAL_SPOOL_RESERVE, --list-cache-entries: %+v, %v", c, err)
	}
	if c.AllowPlaintextReads {
		t.Fatal("plaintext reads are allowed by default")
	}
	if got := c.backendTimeouts(); got != backend.DefaultTimeouts {
		t.Fatalf("backend timeouts %+v by default, want %+v", got, backend.DefaultTimeouts)
	}
	c, err = parseConfig([]string{"--backend-idle-timeout", "45s"}, env(map[string]string{
		"S3SEAL_BACKEND_RESPONSE_TIMEOUT": "1m", "S3SEAL_BACKEND_CONNECT_TIMEOUT": "2s"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.backendTimeouts(); got != (backend.Timeouts{Connect: 2 * time.Second, Response: time.Minute, Idle: 45 * time.Second, MinBytes: 16 << 10}) {
		t.Fatalf("backend timeouts %+v", got)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--allow-plaintext-reads"}, nil},
		{nil, map[string]string{"S3SEAL_ALLOW_PLAINTEXT_READS": "true"}},
	} {
		got, err := parseConfig(c.args, env(c.env))
		if err != nil || !got.AllowPlaintextReads {
			t.Fatalf("%v %v: plaintext reads not allowed (%v)", c.args, c.env, err)
		}
	}
	if _, err := parseConfig([]string{"--deny-plaintext"}, env(nil)); err == nil {
		t.Fatal("the removed --deny-plaintext is still accepted")
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
		{"no spool reserve", []string{"--spool-reserve", "0"}, true},
		{"negative spool reserve", []string{"--spool-reserve", "-1"}, false},
		{"no listing cache", []string{"--list-cache-entries", "0"}, false},
		{"backend timeouts off", []string{"--backend-connect-timeout", "0", "--backend-response-timeout", "0", "--backend-idle-timeout", "0"}, true},
		{"negative backend timeout", []string{"--backend-response-timeout", "-1s"}, false},
		{"backend idle timeout too short", []string{"--backend-idle-timeout", "1ms"}, false},
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

// Secrets given as flags are noted (serve warns); from the environment
// or a file they are not.
func TestSecretOnCommandLineWarns(t *testing.T) {
	const secret = "cmdline-secret-Zq81"
	c, err := parseConfig([]string{"--access-key", "a", "--secret-key", secret}, env(nil))
	if err != nil || !slices.Equal(c.cmdlineSecrets, []string{"secret-key"}) {
		t.Fatalf("--secret-key: %v, %v", c, err)
	}
	c, err = parseConfig([]string{"--access-key", "a"}, env(map[string]string{"S3SEAL_SECRET_KEY": secret}))
	if err != nil || len(c.cmdlineSecrets) != 0 || c.SecretKey != secret {
		t.Fatalf("S3SEAL_SECRET_KEY: %+v, %v", c, err)
	}
	c, _ = parseConfig([]string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--shutdown-delay", "0s", "--access-key", "a", "--secret-key", secret}, env(nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log bytes.Buffer
	if err := serve(ctx, c, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "flag=--secret-key") || strings.Contains(log.String(), secret) {
		t.Fatalf("log of a start with --secret-key:\n%s", log.String())
	}
}

func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode) // whatever the umask
		return p
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	real := []string{"--backend-endpoint", "http://127.0.0.1:1", "--backend-access-key", "a", "--access-key", "x",
		"--key-file", write("master.key", key+"\n", 0o600),
		"--secret-key-file", write("client.secret", "client-secret\n", 0o400),
		"--backend-secret-key-file", write("backend.secret", " backend-secret ", 0o600)}
	c, err := parseConfig(real, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Key != key || c.SecretKey != "client-secret" || c.BackendSecretKey != "backend-secret" || len(c.cmdlineSecrets) != 0 {
		t.Fatalf("secrets from files: %+v", c)
	}
	open := write("open.key", key, 0o644)
	for name, args := range map[string][]string{
		"readable by others": {"--key-file", open},
		"writable by group":  {"--secret-key-file", write("group.secret", "s", 0o620), "--access-key", "x"},
		"flag and file":      {"--key", key, "--key-file", filepath.Join(dir, "master.key")},
		"empty file":         {"--key-file", write("empty.key", "\n", 0o600)},
		"missing file":       {"--key-file", filepath.Join(dir, "nope")},
	} {
		_, err := parseConfig(args, env(nil))
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
	_, err = parseConfig([]string{"--key-file", open}, env(nil))
	if msg := fmt.Sprint(err); !strings.Contains(msg, open) || !strings.Contains(msg, "chmod 600 "+open) || strings.Contains(msg, key[:6]) {
		t.Errorf("open key file: %q, want the path and chmod 600", msg)
	}
}

// A keyring or credentials file its group or others may access is refused
// at start (a usage error: exit code 2) with the file and the fix named; a
// malformed one is reported by line and column, quoting nothing of it.
func TestKeysAndCredentialsFiles(t *testing.T) {
	dir := t.TempDir()
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), mode)
		os.Chmod(p, mode)
		return p
	}
	keys := `{"primary": "k1", "keys": {"k1": "` + key + `"}}`
	creds := `{"credentials": [{"access_key": "a", "secret_key": "Xq7secret", "read": ["*"], "write": ["*"]}]}`
	loadKeysFile := func(f string) error {
		_, err := loadKeys(&config{KeysFile: f}, true, nil)
		return err
	}
	loadCreds := func(f string) error {
		_, err := loadCredentials(&config{CredentialsFile: f}, true)
		return err
	}
	if loadKeysFile(write("keys.json", keys, 0o600)) != nil || loadCreds(write("creds.json", creds, 0o400)) != nil {
		t.Fatal("private files refused")
	}
	cases := []struct {
		name, file string
		load       func(string) error
		want       string
	}{
		{"open keyring", write("open-keys.json", keys, 0o644), loadKeysFile, "chmod 600"},
		{"open credentials", write("open-creds.json", creds, 0o640), loadCreds, "chmod 600"},
		{"group-writable credentials", write("gw-creds.json", creds, 0o620), loadCreds, "chmod 600"},
		{"malformed credentials", write("bad-creds.json", "{\"credentials\": [\n{\"access_key\": \"a\", \"secret_key\": Xq7secret}]}", 0o600),
			loadCreds, "line 2, column"},
		{"malformed keyring", write("bad-keys.json", "{\"primary\": \"k1\",\n\"keys\": {\"k1\": Xq7"+key+"}}", 0o600),
			loadKeysFile, "line 2, column"},
	}
	for _, tc := range cases {
		err := tc.load(tc.file)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a usage error", tc.name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.file) {
			t.Errorf("%s: %q does not name %q and the file", tc.name, msg, tc.want)
		}
		if strings.Contains(msg, "Xq7") || strings.Contains(msg, "'X'") || strings.Contains(msg, key[:6]) {
			t.Errorf("%s: %q quotes the file", tc.name, msg)
		}
	}
}

// An endpoint whose host is an IP address or localhost is addressed
// path-style unless --backend-path-style (or its variable) says otherwise:
// bucket.127.0.0.1 and bucket.localhost resolve nowhere.
func TestPathStyleForIPAndLocalhostEndpoints(t *testing.T) {
	creds := []string{"--backend-access-key", "a", "--backend-secret-key", "b", "--key", "k", "--access-key", "x", "--secret-key", "y"}
	for _, tc := range []struct {
		endpoint string
		extra    []string
		envs     map[string]string
		want     bool
	}{
		{"http://127.0.0.1:9000", nil, nil, true},
		{"http://[::1]:9000", nil, nil, true},
		{"http://localhost:9000", nil, nil, true},
		{"http://minio.localhost", nil, nil, true},
		{"https://s3.eu-central-1.amazonaws.com", nil, nil, false},
		{"https://fsn1.your-objectstorage.com", nil, nil, false},
		{"http://127.0.0.1:9000", []string{"--backend-path-style=false"}, nil, false},
		{"http://127.0.0.1:9000", nil, map[string]string{"S3SEAL_BACKEND_PATH_STYLE": "false"}, false},
		{"https://s3.example.com", []string{"--backend-path-style"}, nil, true},
	} {
		args := append(append([]string{"--backend-endpoint", tc.endpoint}, creds...), tc.extra...)
		c, err := parseConfig(args, env(tc.envs))
		if err != nil {
			t.Fatalf("%s %v: %v", tc.endpoint, tc.extra, err)
		}
		if c.BackendPathStyle != tc.want {
			t.Errorf("%s %v %v: path-style %v, want %v", tc.endpoint, tc.extra, tc.envs, c.BackendPathStyle, tc.want)
		}
	}
}
