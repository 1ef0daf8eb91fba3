package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// TestProgressWithoutTerminal: with stderr no terminal, verify draws
// nothing in place: no line of progress at all below --progress-every,
// a line each --progress-every objects (its total, "of N", depends on
// how far the count beside the run has got: internal/progress's tests
// show it),
// none with --no-progress; --progress draws in place all the same and
// leaves its last frame. The summary on stdout is the same each time.
func TestProgressWithoutTerminal(t *testing.T) {
	dir, env := toolFixture(t, func(ctx context.Context, _ backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "a", "first")
		putObj(t, ctx, st, "b", strings.Repeat("x", 70000))
		putObj(t, ctx, st, "c", "third")
	})
	verifyRun := func(args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(append([]string{"verify", "--data-dir", dir, "--bucket", "bkt", "--concurrency", "1"}, args...), env, &out, &errOut); code != 0 {
			t.Fatalf("verify %v: exit %d: %s%s", args, code, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "3 ok, 0 problem(s)") {
			t.Fatalf("verify %v: summary %s", args, out.String())
		}
		return out.String(), errOut.String()
	}
	if _, stderr := verifyRun(); stderr != "" {
		t.Errorf("a run below --progress-every wrote on stderr: %q", stderr)
	}
	_, stderr := verifyRun("--progress-every", "2")
	if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); len(lines) != 1 || strings.Contains(stderr, "\r") ||
		!strings.HasPrefix(lines[0], "progress: 2 objects, ") || !strings.HasSuffix(lines[0], "(verify bkt)") {
		t.Errorf("--progress-every 2: %q", stderr)
	}
	if _, stderr := verifyRun("--progress-every", "1", "--no-progress"); stderr != "" {
		t.Errorf("--no-progress wrote %q", stderr)
	}
	if _, stderr := verifyRun("--progress-every", "1", "--progress=false"); stderr != "" {
		t.Errorf("--progress=false wrote %q", stderr)
	}
	if _, stderr := verifyRun("--progress", "--progress=auto"); stderr != "" {
		t.Errorf("--progress=auto (the last flag wins) wrote %q", stderr)
	}
	_, stderr = verifyRun("--progress")
	if !strings.HasPrefix(stderr, "\rverify bkt: 3/3 objects (100%), ") || !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 ||
		strings.Contains(stderr, "progress:") {
		t.Errorf("--progress: %q", stderr)
	}
}

// TestProgressFlagRefusal: --progress takes true or false, nothing else.
func TestProgressFlagRefusal(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"gc", "--progress=sometimes"}, func(string) string { return "" }, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), `--progress: "sometimes" is not true or false`) {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

// TestGCProgressForced: gc counts the entries it looked at; --progress
// leaves a last frame naming the buckets; the summary is unchanged.
func TestGCProgressForced(t *testing.T) {
	dir, env := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		if _, err := be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "bkt", Key: "bare"}); err != nil {
			t.Fatal(err)
		}
	})
	var out, errOut bytes.Buffer
	if code := run([]string{"gc", "--data-dir", dir, "--min-age", "0s", "--progress"}, env, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "1 to remove in 1 bucket(s)") {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	if stderr := errOut.String(); !strings.HasPrefix(stderr, "\rgc of 1 bucket(s): 1 entries, ") || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("gc --progress: %q", stderr)
	}
}
