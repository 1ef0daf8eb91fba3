package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cleanEnv is the test's environment without the variables in drop and
// without any AWS_* or RCLONE_* setting that could point a client at the
// user's own accounts; extra is appended.
func cleanEnv(drop []string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "RCLONE_"), strings.HasPrefix(name, "S3SEAL_"):
			continue
		case strings.HasPrefix(name, "AWS_") && name != "AWS_CA_BUNDLE":
			continue
		}
		dropped := false
		for _, d := range drop {
			dropped = dropped || name == d
		}
		if !dropped {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runTool runs a client program with a 3-minute limit and returns its
// stdout; a non-zero exit fails the test with the program's output.
func runTool(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, errOut, err := tryTool(t, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// tryTool is runTool that returns the error instead of failing. A program
// not installed fails the test under CI and skips it elsewhere, naming it
// (requireTool).
func tryTool(t *testing.T, env []string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	requireTool(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// writeFile writes data under dir (creating parents) and returns the path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil { // key and credentials files must be private
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clientFixture is a set of files of awkward sizes for the CLI tests.
func clientFixture() map[string][]byte {
	return map[string][]byte{
		"empty.txt":        {},
		"small.txt":        []byte("hello from a real client\n"),
		"seg.bin":          patternBytes(41, 65536),
		"sub/mid.bin":      patternBytes(42, 200001),
		"sub/deep/big.bin": patternBytes(43, 3<<20+5), // > 1 MiB, below every multipart threshold we set
	}
}
