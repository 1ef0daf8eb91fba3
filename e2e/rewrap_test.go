package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewrapCommandOnMoto runs `s3seal rewrap` against moto_server, which
// copies an object even when x-amz-copy-source-if-match names another
// ETag. On such a store a client's write during the run would get the old
// object's wrapped key, so rewrap refuses (exit 1, saying how to go on)
// and changes nothing, and its summary says it stopped, and why, never
// that there were no objects. The dry run before it says that the real
// run will need --no-concurrent-writers (in text and in JSON). With the
// flag it rewraps, and the object reads back through a server holding
// only the new key.
func TestRewrapCommandOnMoto(t *testing.T) {
	t.Parallel()
	moto := startMoto(t)
	oldKey, newKey := randomKey(t), randomKey(t)
	both := writeFile(t, t.TempDir(), "both.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"old": %q, "new": %q}}`, oldKey, newKey)))
	onlyOld := writeFile(t, t.TempDir(), "old.json", []byte(fmt.Sprintf(`{"primary": "old", "keys": {"old": %q}}`, oldKey)))
	onlyNew := writeFile(t, t.TempDir(), "new.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"new": %q}}`, newKey)))

	p := startS3seal(t, sealOpts{Backend: moto, KeysFile: onlyOld})
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "rot")
	body := patternBytes(7, 100000)
	putObj(t, c, "rot", "obj", body)
	p.Stop()

	rewrap := func(extra ...string) (int, string) {
		args := []string{"rewrap", "--data-dir", filepath.Join(t.TempDir(), "d"), "--keys-file", both,
			"--backend-endpoint", moto.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
			"--backend-access-key", "x", "--backend-secret-key", "y", "--bucket", "rot", "--to", "new"}
		return runS3sealExit(t, nil, append(args, extra...)...)
	}
	code, out := rewrap("--dry-run")
	if code != 0 || !strings.Contains(out, "would-rewrap rot/obj") ||
		!strings.Contains(out, "the real run will stop unless given --no-concurrent-writers") {
		t.Fatalf("dry run on a store ignoring the copy condition: exit %d\n%s", code, out)
	}
	code, out = rewrap("--dry-run", "--json")
	if code != 0 || !strings.Contains(out, `"needs_no_concurrent_writers": true`) {
		t.Fatalf("dry run --json: exit %d\n%s", code, out)
	}
	code, out = rewrap()
	if code != 1 || !strings.Contains(out, "ignores x-amz-copy-source-if-match") || !strings.Contains(out, "--no-concurrent-writers") ||
		!strings.Contains(out, "rot/ under new: stopped before any object was rewrapped: ") || strings.Contains(out, "no objects") {
		t.Fatalf("rewrap on a store ignoring the copy condition: exit %d\n%s", code, out)
	}
	code, out = rewrap("--no-concurrent-writers")
	if code != 0 || !strings.Contains(out, "rot/ under new: 1 rewrapped") {
		t.Fatalf("rewrap --no-concurrent-writers: exit %d\n%s", code, out)
	}

	p = startS3seal(t, sealOpts{Backend: moto, KeysFile: onlyNew, AccessKey: p.AccessKey, SecretKey: p.SecretKey})
	if got := getObj(t, sdkFor(t, p), "rot", "obj"); md5Hex(got) != md5Hex(body) {
		t.Fatalf("object after rewrap differs")
	}
}
