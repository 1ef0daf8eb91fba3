package e2e

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadmePKCS11 runs docs/KMS.md's PKCS#11 block as a bash script (set
// -euo pipefail) from the repository's root, as a reader in the checkout
// would, with a free port for 7070 and a temporary directory for
// ~/hsm-demo: a build with -tags pkcs11, a SoftHSM2 token and key made
// with softhsm2-util and pkcs11-tool, serve with the pkcs11: URI on the
// embedded store, and an aws CLI PUT whose HEAD answers aws:kms and the
// key's label. The block sets SOFTHSM2_CONF itself; the test's
// environment has it naming a file that does not exist, which SoftHSM2
// refuses, so that the block works only if it does (and never touches
// the machine's own tokens).
func TestReadmePKCS11(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	if !requirePKCS11(t) {
		return
	}
	for _, tool := range []string{"aws", "curl", "go"} {
		requireTool(t, tool)
	}
	script := readmeBlock(t, "docs/KMS.md", "## A walk with a PKCS#11 HSM")
	demo := filepath.Join(t.TempDir(), "hsm-demo")
	script = strings.ReplaceAll(script, "127.0.0.1:7070", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	script = strings.ReplaceAll(script, "~/hsm-demo", demo)
	// Whatever fails, the server the block started does not outlive it.
	path := writeFile(t, t.TempDir(), "pkcs11.sh", []byte("set -euo pipefail\nset -x\n"+
		"trap 'kill ${SERVE:-} 2>/dev/null || true' EXIT\n"+script+"echo PKCS11-DONE\n"))

	// A HOME of its own (the aws CLI reads no configuration of the
	// machine's), with Go's caches and settings kept as they are.
	home := t.TempDir()
	goEnv := []string{"HOME=" + home, "SOFTHSM2_CONF=" + filepath.Join(home, "no-softhsm2.conf")}
	for _, name := range []string{"GOENV", "GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		goEnv = append(goEnv, name+"="+strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Dir = ".."
	cmd.Env = cleanEnv([]string{"AWS_CA_BUNDLE", "HOME", "SOFTHSM2_CONF"}, goEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out, errOut := stdout.String(), stderr.String()
	if err != nil || !strings.Contains(out, "PKCS11-DONE") {
		serveLog, _ := os.ReadFile(filepath.Join(demo, "serve.log"))
		t.Fatalf("PKCS#11 block (docs/KMS.md): %v\nstdout:\n%s\nstderr:\n%s\nserve.log:\n%s", err, out, errOut, serveLog)
	}
	for _, want := range []string{`"ServerSideEncryption": "aws:kms"`, `"SSEKMSKeyId": "tenant-a"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the block's output lacks %s:\n%s\n%s", want, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(demo, "data", "dev-master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a master key was written to the data dir (%v)", err)
	}
}
