package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// vaultDev is a Vault dev server (scripts/vault-dev.sh builds one).
type vaultDev struct {
	t    *testing.T
	addr string // 127.0.0.1:PORT
}

// startVaultDev runs `vault server -dev` for the test, with Transit
// enabled. It skips without a Vault binary (S3SEAL_VAULT_BIN, or the one
// scripts/vault-dev.sh leaves in the user cache), unless
// S3SEAL_REQUIRE_VAULT is set: building Vault takes about 20 minutes,
// more than the suite may, so it is a command of its own (docs/KMS.md,
// "A walk with Vault Transit").
func startVaultDev(t *testing.T) *vaultDev {
	t.Helper()
	bin := os.Getenv("S3SEAL_VAULT_BIN")
	if bin == "" {
		cache, _ := os.UserCacheDir()
		bin = filepath.Join(cache, "s3seal", "vault-1.21.4", "vault")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("S3SEAL_REQUIRE_VAULT") != "" {
			t.Fatalf("no Vault server at %s (S3SEAL_REQUIRE_VAULT is set): run scripts/vault-dev.sh", bin)
		}
		t.Skipf("no Vault server at %s: run scripts/vault-dev.sh to build it, or set S3SEAL_VAULT_BIN", bin)
	}
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(bin, "server", "-dev", "-dev-root-token-id=root", "-dev-listen-address="+addr)
	log := newLogBuffer(nil)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	v := &vaultDev{t: t, addr: addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := v.call("GET", "sys/health", ""); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vault dev server not ready:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	v.must("POST", "sys/mounts/transit", `{"type": "transit"}`)
	return v
}

// call makes one Vault API call with the root token.
func (v *vaultDev) call(method, path, body string) (int, string) {
	req, _ := http.NewRequest(method, "http://"+v.addr+"/v1/"+path, strings.NewReader(body))
	req.Header.Set("X-Vault-Token", "root")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func (v *vaultDev) must(method, path, body string) {
	v.t.Helper()
	if code, out := v.call(method, path, body); code/100 != 2 {
		v.t.Fatalf("vault %s %s: %d %s", method, path, code, out)
	}
}

// TestKMSVaultTransit: s3seal with its master key in Vault Transit. The
// aws CLI writes under the default key and under another Transit key
// named by SSE-KMS (single PUT and multipart); a rotation in Vault seals
// new objects with version 2 at once; verify counts objects per key and
// version, rewrap --latest moves the old ones inside Vault (Transit
// rewrap), and with version 1 retired (min_decryption_version 2)
// everything still reads.
func TestKMSVaultTransit(t *testing.T) {
	t.Parallel()
	v := startVaultDev(t)
	v.must("POST", "transit/keys/tenant-a", "")
	v.must("POST", "transit/keys/tenant-b", "")
	uri := fmt.Sprintf("hcvault://%s/transit/keys/tenant-a?tls=false", v.addr)
	opts := sealOpts{KMSKey: uri, Env: []string{"VAULT_TOKEN=root"}, Args: []string{"--kms-cache-ttl", "-1s"}}
	p := startS3seal(t, opts)
	a := newAWSCLIMultipart(t, p)
	dir := t.TempDir()
	small := writeFile(t, dir, "small", []byte("in vault"))
	bigBody := patternBytes(5, 11<<20)
	big := writeFile(t, dir, "big", bigBody)
	a.run("s3", "mb", "s3://vault")
	a.run("s3", "cp", "--only-show-errors", small, "s3://vault/v1")
	a.run("s3", "cp", "--only-show-errors", big, "s3://vault/b", "--sse", "aws:kms", "--sse-kms-key-id", "tenant-b")
	for key, want := range map[string]string{"v1": "tenant-a", "b": "tenant-b"} {
		if h := headJSON(t, a, "vault", key); h["ServerSideEncryption"] != "aws:kms" || h["SSEKMSKeyId"] != want {
			t.Fatalf("%s: HEAD %v, want aws:kms and %s", key, h, want)
		}
	}

	v.must("POST", "transit/keys/tenant-a/rotate", "")
	a.run("s3", "cp", "--only-show-errors", small, "s3://vault/v2") // no restart
	p.Stop()

	env := []string{"VAULT_TOKEN=root"}
	tool := func(args ...string) (int, string) {
		return runS3sealExit(t, env, append([]string{args[0], "--data-dir", p.DataDir, "--bucket", "vault", "--kms-key", uri}, args[1:]...)...)
	}
	code, out := tool("verify")
	if code != 0 || !strings.Contains(out, "under hcvault:tenant-a v1: ") || !strings.Contains(out, "under hcvault:tenant-a v2: ") ||
		!strings.Contains(out, "under hcvault:tenant-b v1: 1 object(s)") {
		t.Fatalf("verify after the rotation: exit %d\n%s", code, out)
	}
	if code, out := tool("rewrap", "--latest"); code != 0 || !strings.Contains(out, "rewrapped vault/v1 (hcvault:tenant-a v1 -> v2)") {
		t.Fatalf("rewrap --latest: exit %d\n%s", code, out)
	}
	code, out = tool("verify")
	if code != 0 || strings.Contains(out, "hcvault:tenant-a v1") || !strings.Contains(out, "under hcvault:tenant-a v2: ") {
		t.Fatalf("verify after rewrap: exit %d\n%s", code, out)
	}

	v.must("POST", "transit/keys/tenant-a/config", `{"min_decryption_version": 2}`)
	opts.DataDir = p.DataDir
	p2 := startS3seal(t, opts)
	a2 := newAWSCLI(t, p2)
	for _, key := range []string{"v1", "v2"} {
		if out := a2.run("s3", "cp", "s3://vault/"+key, "-"); out != "in vault" {
			t.Fatalf("%s after version 1 was retired: %q", key, out)
		}
	}
	got := filepath.Join(dir, "got")
	a2.run("s3", "cp", "--only-show-errors", "s3://vault/b", got)
	if err := sameFile(got, bigBody); err != nil {
		t.Fatal(err)
	}
}
