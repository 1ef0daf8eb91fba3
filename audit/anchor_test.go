package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trailWithAnchor writes n lines to the trail at path, its anchor kept in
// anchor, and closes it.
func trailWithAnchor(t *testing.T, path, anchor string, n int) {
	t.Helper()
	w, err := Open(path, testKey, Options{AnchorFile: anchor})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.KeyUse(KeyUse{Op: "unwrap", KeyID: "default", Bucket: "b", Key: strings.Repeat("k", i+1), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLogrotateWhileStoppedKeepsChain: logrotate moved the trail aside
// while s3seal was stopped (its SIGHUP went nowhere). s3seal, started
// again, finds no file: the new one must go on from the last line s3seal
// wrote, so that `audit verify FILE.1 FILE` holds, not begin a new trail
// that the junction fails and that alone reads as "a new trail".
func TestLogrotateWhileStoppedKeepsChain(t *testing.T) {
	dir := t.TempDir()
	p, anchor := filepath.Join(dir, "audit.log"), filepath.Join(dir, "data", "audit-anchor")
	os.Mkdir(filepath.Dir(anchor), 0o700)
	trailWithAnchor(t, p, anchor, 2)
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	trailWithAnchor(t, p, anchor, 1)
	res, err := verifyFiles(t, "", p+".1", p)
	if err != nil {
		t.Fatalf("the trail across a rotation made while s3seal was stopped: %v", err)
	}
	if !res.Genesis || !res.Checkpoint || len(res.Unclosed) != 0 {
		t.Fatalf("%+v", res)
	}
	// The trail removed whole: the new file says it continues, it is no
	// new trail.
	os.Remove(p + ".1")
	os.Remove(p)
	trailWithAnchor(t, p, anchor, 1)
	res, err = verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Genesis {
		t.Fatalf("a trail removed whole while s3seal was stopped reads as a new trail: %+v", res)
	}
}

// TestCutWhileStoppedIsSaid: the end of a stopped trail cut (its
// checkpoint and lines before it) is told by the anchor s3seal kept: the
// restart's start line says so, and verify lists the restart.
func TestCutWhileStoppedIsSaid(t *testing.T) {
	dir := t.TempDir()
	p, anchor := filepath.Join(dir, "audit.log"), filepath.Join(dir, "audit-anchor")
	trailWithAnchor(t, p, anchor, 4)
	ls := lines(t, p)
	writeLines(t, p, ls[:len(ls)-2])
	trailWithAnchor(t, p, anchor, 1)
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if len(res.Unclosed) != 1 || !strings.Contains(string(b), "lines were cut") {
		t.Fatalf("a cut made while s3seal was stopped: %+v\n%s", res, b)
	}
}
