package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// TestRewrapCommand rotates a bucket from key "default" to key "new": a
// dry run changes nothing, a run over one prefix (an interrupted
// rotation) and then over the bucket (its resumption) rewrap each object
// once, after which verify passes with a keyring holding only "new" and
// a last run finds nothing to do. Without --to the exit code is 2.
func TestRewrapCommand(t *testing.T) {
	dir, env := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "a/one", "first")
		putObj(t, ctx, st, "a/two", strings.Repeat("x", 70000))
		putObj(t, ctx, st, "b/three", "third")
	})
	newKey, _ := crypto.GenerateKey()
	b64 := base64.StdEncoding.EncodeToString
	keysFile := func(name, keys string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(`{"primary": "new", "keys": {`+keys+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	both := keysFile("both.json", fmt.Sprintf(`"default": %q, "new": %q`, env("S3SEAL_KEY"), b64(newKey)))
	onlyNew := keysFile("new.json", fmt.Sprintf(`"new": %q`, b64(newKey)))
	noEnv := func(string) string { return "" }
	cmd := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(append(args, "--data-dir", dir), noEnv, &out, &errOut); code != want {
			t.Fatalf("%v: exit %d, want %d: %s%s", args, code, want, out.String(), errOut.String())
		}
		return out.String()
	}
	if out := cmd(0, "rewrap", "--keys-file", both, "--bucket", "bkt", "--to", "new", "--dry-run"); !strings.Contains(out, "3 would-rewrap") {
		t.Fatalf("dry run:\n%s", out)
	}
	cmd(1, "verify", "--keys-file", onlyNew, "--bucket", "bkt") // still under "default"
	if out := cmd(0, "rewrap", "--keys-file", both, "--bucket", "bkt", "--prefix", "a/", "--to", "new"); !strings.Contains(out, "rewrapped bkt/a/one (default -> new)") ||
		!strings.Contains(out, "bkt/a/ under new: 2 rewrapped") {
		t.Fatalf("first prefix:\n%s", out)
	}
	if out := cmd(0, "rewrap", "--keys-file", both, "--bucket", "bkt", "--to", "new"); !strings.Contains(out, "1 rewrapped, 2 already") {
		t.Fatalf("resumed:\n%s", out)
	}
	if out := cmd(0, "verify", "--keys-file", onlyNew, "--bucket", "bkt", "--deep"); !strings.Contains(out, "3 ok, 0 problem(s)") {
		t.Fatalf("verify with only the new key:\n%s", out)
	}
	if out := cmd(0, "rewrap", "--keys-file", both, "--bucket", "bkt", "--to", "new"); !strings.Contains(out, "under new: 3 already") {
		t.Fatalf("last run:\n%s", out)
	}
	cmd(2, "rewrap", "--keys-file", both, "--bucket", "bkt")
	cmd(2, "rewrap", "--keys-file", both, "--bucket", "bkt", "--to", "missing")
}

// TestRewrapCommandByPartsJSON: with --max-copy-size below an object's
// size the object is rewrapped by a multipart copy; --json prints the
// summary with counts and bytes, and the object then verifies (deep)
// with only the new key.
func TestRewrapCommandByPartsJSON(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 7<<16) // 7 MiB
	dir, env := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "big", big)
		putObj(t, ctx, st, "small", "s")
	})
	newKey, _ := crypto.GenerateKey()
	b64 := base64.StdEncoding.EncodeToString
	both := filepath.Join(t.TempDir(), "both.json")
	onlyNew := filepath.Join(t.TempDir(), "new.json")
	os.WriteFile(both, []byte(fmt.Sprintf(`{"primary": "new", "keys": {"default": %q, "new": %q}}`, env("S3SEAL_KEY"), b64(newKey))), 0o600)
	os.WriteFile(onlyNew, []byte(fmt.Sprintf(`{"primary": "new", "keys": {"new": %q}}`, b64(newKey))), 0o600)
	noEnv := func(string) string { return "" }
	var out, errOut bytes.Buffer
	code := run([]string{"rewrap", "--keys-file", both, "--bucket", "bkt", "--to", "new", "--json", "--max-copy-size", "6291456",
		"--progress-every", "1", "--data-dir", dir}, noEnv, &out, &errOut)
	var sum rewrapSummary
	if err := json.Unmarshal(out.Bytes(), &sum); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s%s", code, err, out.String(), errOut.String())
	}
	if sum.Objects != 2 || sum.Counts["rewrapped"] != 2 || sum.RewrappedBytes < int64(len(big)) || sum.Bytes != sum.RewrappedBytes || len(sum.Problems) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(errOut.String(), "progress: 2 objects, ") {
		t.Fatalf("no progress line with objects and bytes: %s", errOut.String())
	}
	out.Reset()
	if code := run([]string{"verify", "--keys-file", onlyNew, "--bucket", "bkt", "--deep", "--data-dir", dir}, noEnv, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "2 ok, 0 problem(s)") {
		t.Fatalf("verify with only the new key: exit %d: %s", code, out.String())
	}
}

// TestRewrapCommandNoSuchBucket: a run that stops says so and why (here,
// the bucket does not exist), in the summary and in JSON, with exit code
// 1, never "no objects"; a dry run on a store that honours the copy
// conditions has nothing to say about --no-concurrent-writers.
func TestRewrapCommandNoSuchBucket(t *testing.T) {
	dir, env := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "one", "first")
	})
	newKey, _ := crypto.GenerateKey()
	both := filepath.Join(t.TempDir(), "both.json")
	os.WriteFile(both, []byte(fmt.Sprintf(`{"primary": "new", "keys": {"default": %q, "new": %q}}`, env("S3SEAL_KEY"), base64.StdEncoding.EncodeToString(newKey))), 0o600)
	noEnv := func(string) string { return "" }
	rewrapRun := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"rewrap", "--keys-file", both, "--to", "new", "--data-dir", dir}, args...), noEnv, &out, &errOut)
		return code, out.String()
	}
	for _, dry := range [][]string{nil, {"--dry-run"}} {
		code, out := rewrapRun(append([]string{"--bucket", "nosuch"}, dry...)...)
		if code != 1 || !strings.Contains(out, "nosuch/ under new: stopped before any object was rewrapped: bucket nosuch does not exist") ||
			strings.Contains(out, "no objects") {
			t.Fatalf("%v: exit %d\n%s", dry, code, out)
		}
	}
	code, out := rewrapRun("--bucket", "nosuch", "--json")
	var sum rewrapSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || code != 1 || sum.Error != "bucket nosuch does not exist" {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if code, out := rewrapRun("--bucket", "bkt", "--dry-run"); code != 0 || !strings.Contains(out, "1 would-rewrap") || strings.Contains(out, "concurrent-writers") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
}
