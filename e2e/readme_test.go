package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readmeBlock returns the first indented code block under the heading
// (## or ###) that starts with heading in file, a path from the
// repository's root (README.md, docs/KMS.md), without its four-space
// indent.
func readmeBlock(t *testing.T, file, heading string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var block []string
	in, started := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### "):
			in = strings.HasPrefix(line, heading)
		case in && strings.HasPrefix(line, "    "):
			block = append(block, strings.TrimPrefix(line, "    "))
			started = true
		case in && started:
			return strings.Join(block, "\n") + "\n"
		}
	}
	if len(block) == 0 {
		t.Fatalf("%s: no code block under %q", file, heading)
	}
	return strings.Join(block, "\n") + "\n"
}

// TestReadmeWalkthrough is the newcomer's journey: it runs the
// walkthrough block of docs/OPERATIONS.md (which the README points to) as
// a bash script (set -euo pipefail), with the s3seal
// built for these tests first on PATH, a free port for 7070 and a
// temporary directory for ~/s3seal-demo: a key, serve on the embedded
// store, a first backup with rclone checked by rclone, a request counter
// on /metrics, a rotation with rewrap and a deep verify with the new key
// alone. Any step failing fails the test with the script's output.
// AWS_CA_BUNDLE is left as the machine has it: the block unsets it for
// rclone, as the README tells users to.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	for _, tool := range []string{"rclone", "curl"} {
		requireTool(t, tool)
	}
	script := readmeBlock(t, "docs/OPERATIONS.md", "## Walkthrough")
	demo := filepath.Join(t.TempDir(), "demo")
	port := strconv.Itoa(freePort(t))
	script = strings.ReplaceAll(script, "127.0.0.1:7070", "127.0.0.1:"+port)
	script = strings.ReplaceAll(script, "~/s3seal-demo", demo)
	path := writeFile(t, t.TempDir(), "walkthrough.sh", []byte("set -euo pipefail\nset -x\n"+script+"echo WALKTHROUGH-DONE\n"))
	home := t.TempDir() // rclone config create writes under $HOME/.config
	env := cleanEnv([]string{"HOME", "PATH", "XDG_CONFIG_HOME"},
		"HOME="+home, "PATH="+filepath.Dir(s3sealBin)+":"+os.Getenv("PATH"))
	out, errOut, err := tryTool(t, env, "bash", path)
	if err != nil || !strings.Contains(out, "WALKTHROUGH-DONE") {
		serveLog, _ := os.ReadFile(filepath.Join(demo, "serve.log"))
		t.Fatalf("walkthrough (docs/OPERATIONS.md): %v\nstdout:\n%s\nstderr:\n%s\nserve.log:\n%s", err, out, errOut, serveLog)
	}
	// Three objects: the two files and the bucket's sealed owner document.
	for _, want := range []string{"0 differences found", "backups/ under k2: 4 rewrapped", "bytes checked in backups: 4 ok, 0 problem(s)"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("walkthrough output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
}

// TestReadmeKMSWalk runs docs/KMS.md's AWS KMS walk as a bash script: moto
// as the KMS, s3seal with its master key there and none in its data dir,
// an object sealed under the primary KMS key and one under the key its
// SSE-KMS names, each HEAD naming its key.
func TestReadmeKMSWalk(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	for _, tool := range []string{"aws", "curl", "moto_server"} {
		requireTool(t, tool)
	}
	script := readmeBlock(t, "docs/KMS.md", "## A walk with AWS KMS")
	dir := t.TempDir()
	script = strings.ReplaceAll(script, "127.0.0.1:7070", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	script = strings.ReplaceAll(script, "5055", strconv.Itoa(freePort(t)))
	path := writeFile(t, dir, "kms-walk.sh", []byte("set -euo pipefail\ncd "+dir+"\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n"+
		script+"echo KEYS \"$KEY\" \"$OTHER\"\necho WALK-DONE\n"))
	env := cleanEnv([]string{"AWS_CA_BUNDLE", "HOME", "PATH", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"},
		"HOME="+t.TempDir(), "PATH="+filepath.Dir(s3sealBin)+":"+os.Getenv("PATH"))
	out, errOut, err := tryTool(t, env, "bash", path)
	if err != nil || !strings.Contains(out, "WALK-DONE") {
		serveLog, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
		t.Fatalf("KMS walk (docs/KMS.md): %v\nstdout:\n%s\nstderr:\n%s\nserve.log:\n%s", err, out, errOut, serveLog)
	}
	var key, other string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "KEYS" {
			key, other = f[1], f[2]
		}
	}
	for _, want := range []string{"aws:kms\t" + key, "aws:kms\t" + other} {
		if key == "" || !strings.Contains(out, want) {
			t.Errorf("walk output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dev-master.key") {
		t.Errorf("a master key in the data dir:\n%s", out)
	}
}

// TestReadmeVaultWalk runs docs/KMS.md's Vault walk as a bash script with
// the Vault binary scripts/vault-dev.sh built (skipped without it, as
// the other Vault tests are): Transit enabled, s3seal's key there, an
// object sealed under it, a rotation in Vault and a write after it.
func TestReadmeVaultWalk(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	for _, tool := range []string{"aws", "curl"} {
		requireTool(t, tool)
	}
	startVaultDev(t) // skips without a Vault binary; this test starts its own below
	script := readmeBlock(t, "docs/KMS.md", "## A walk with Vault Transit")
	repo, _ := filepath.Abs("..")
	dir := t.TempDir()
	script = strings.ReplaceAll(script, "scripts/vault-dev.sh", filepath.Join(repo, "scripts", "vault-dev.sh"))
	script = strings.ReplaceAll(script, "127.0.0.1:7070", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	script = strings.ReplaceAll(script, "127.0.0.1:8200", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	path := writeFile(t, dir, "vault-walk.sh", []byte("set -euo pipefail\ncd "+dir+"\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n"+
		script+"echo WALK-DONE\n"))
	cache, _ := os.UserCacheDir() // where scripts/vault-dev.sh left Vault
	env := cleanEnv([]string{"AWS_CA_BUNDLE", "HOME", "PATH", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "VAULT_ADDR", "VAULT_TOKEN", "XDG_CACHE_HOME"},
		"HOME="+t.TempDir(), "PATH="+filepath.Dir(s3sealBin)+":"+os.Getenv("PATH"), "XDG_CACHE_HOME="+cache)
	out, errOut, err := tryTool(t, env, "bash", path)
	if err != nil || !strings.Contains(out, "WALK-DONE") {
		serveLog, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
		t.Fatalf("Vault walk (docs/KMS.md): %v\nstdout:\n%s\nstderr:\n%s\nserve.log:\n%s", err, out, errOut, serveLog)
	}
	if !strings.Contains(out, "aws:kms\ts3seal") {
		t.Errorf("the HEAD does not name the Transit key:\n%s", out)
	}
}
