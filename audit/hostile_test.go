package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestVerifyNewestFileRemovedIsNotClosed: removing the newest file (or
// forgetting to give it) leaves the older ones ending on the rotation's
// checkpoint. That checkpoint is no close: verify must not report the
// trail as closed, or a whole newest file is removed without a trace.
func TestVerifyNewestFileRemovedIsNotClosed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Access(Access{Op: "s3:GetObject", Bucket: "b", Key: "k", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	old := p + ".1"
	if err := os.Rename(p, old); err != nil {
		t.Fatal(err)
	}
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	if err := w.Access(Access{Op: "s3:DeleteObject", Bucket: "b", Key: "k", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := verifyFiles(t, "", old) // the newest file removed
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint || !res.Rotated {
		t.Fatalf("a trail whose newest file is missing reads as closed: %+v", res)
	}
	res, err = verifyFiles(t, "", old, p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Checkpoint || res.Rotated {
		t.Fatalf("the whole trail, closed at shutdown: %+v", res)
	}
}

// TestVerifyMACIsLowerCaseHex: a line's bytes are what the MAC proves; the
// MAC's own digits in upper case are a changed line that must not verify
// (FORMAT.md: 64 lower-case hex digits).
func TestVerifyMACIsLowerCaseHex(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	writeTrail(t, p, 3)
	ls := lines(t, p)
	l := ls[2]
	i := bytes.LastIndex(l, macSuffix) + len(macSuffix)
	up := append([]byte{}, l[:i]...)
	up = append(up, bytes.ToUpper(l[i:i+macLen])...)
	up = append(up, l[i+macLen:]...)
	if bytes.Equal(up, l) {
		t.Fatal("no letter in the MAC: change the test's key")
	}
	ls[2] = up
	writeLines(t, p, ls)
	_, err := verifyFiles(t, "", p)
	failsAt(t, err, 3, "a MAC in upper case")
}

// TestRestartAfterHugeLine: a client controls the key (the whole request
// path, up to the 64 KiB of headers serve accepts, each control byte
// written as 6), the access key it claims and the version id: a refused
// request makes a line longer than the 64 KiB a restart reads back. Such
// a line, the last one written before a crash, must not stop s3seal from
// starting again (nor may any line pass Verify's bound).
func TestRestartAfterHugeLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	w, err := Open(p, testKey, Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctl := strings.Repeat("\x01", 20000) // %01 in a URL: 3 bytes sent, 6 written
	if err := w.Access(Access{RequestID: "R", AccessKey: ctl, Op: "s3:GetObjectVersion", Bucket: "b", Key: ctl, VersionID: ctl, Rule: "signature"}); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock() // a crash: no checkpoint; the flusher stops
	close(w.done)
	w.file.Close()
	w.mu.Unlock()
	w2, err := Open(p, testKey, Options{})
	if err != nil {
		t.Fatalf("s3seal does not start again after a client's long line: %v", err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyFiles(t, "", p); err != nil {
		t.Fatal(err)
	}
	for i, l := range lines(t, p) {
		if len(l) > 32<<10 {
			t.Errorf("line %d is %d bytes: a client makes lines as long as it likes", i+1, len(l))
		}
	}
}

// TestFileHoldsWholeLines: what s3seal has written of a trail it is still
// writing ends at a line's end, so that `audit verify` of the live file
// (and a shipper tailing it) never finds a cut line while the writer runs.
func TestFileHoldsWholeLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	w, err := Open(p, testKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 1000 { // some 200 KiB: the 64 KiB buffer fills several times
		if err := w.Access(Access{RequestID: "0123456789ABCDEF", AccessKey: "AK", Op: "s3:PutObject", Bucket: "b",
			Key: fmt.Sprintf("some/key/%d", i), Allow: true, Rule: "owner", Reason: "the bucket's owner"}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("after line %d the file ends in the middle of a line (%d bytes)", i+2, len(b))
		}
	}
}

// TestConcurrentLinesAndRotations: lines from many goroutines while the
// file is rotated again and again (a SIGHUP storm) and by size: none lost
// or repeated, and the files, in order, verify as one trail.
func TestConcurrentLinesAndRotations(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{MaxSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 300
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := w.KeyUse(KeyUse{RequestID: fmt.Sprint(g), Op: "wrap", KeyID: "k", Bucket: "b", Key: fmt.Sprint(i), Outcome: "ok"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var hups []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 40 {
			aside := filepath.Join(dir, fmt.Sprintf("hup.%03d", i))
			w.mu.Lock() // as logrotate: move the file, then SIGHUP
			err := os.Rename(p, aside)
			w.mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			if err := w.Rotate(); err != nil {
				t.Error(err)
				return
			}
			hups = append(hups, aside)
		}
	}()
	wg.Wait()
	<-done
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Order the files by their first seq, as their names would.
	all, _ := filepath.Glob(filepath.Join(dir, "*"))
	type f struct {
		path  string
		first uint64
	}
	var fs []f
	for _, a := range all {
		_, _, l, err := splitLine(bytes.TrimSuffix(lines(t, a)[0], []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f{a, l.Seq})
	}
	paths := make([]string, 0, len(fs))
	for len(fs) > 0 {
		m := 0
		for i := range fs {
			if fs[i].first < fs[m].first {
				m = i
			}
		}
		paths = append(paths, fs[m].path)
		fs = append(fs[:m], fs[m+1:]...)
	}
	res, err := verifyFiles(t, "", paths...)
	if err != nil {
		t.Fatal(err)
	}
	keyLines := 0
	for _, p := range paths {
		keyLines += bytes.Count(bytes.Join(lines(t, p), nil), []byte(`"type":"key"`))
	}
	if keyLines != writers*each || !res.Genesis || !res.Checkpoint {
		t.Fatalf("%d key lines of %d, %+v", keyLines, writers*each, res)
	}
}

// TestLongFieldsAreCut: a field longer than maxField is cut at a rune's
// start and says how long it was.
func TestLongFieldsAreCut(t *testing.T) {
	key := strings.Repeat("a", maxField-1) + "é" + "tail"
	body := appendBody(nil, Line{Seq: 1, Type: TypeAccess, Key: key}, time.Unix(0, 0))
	var got Line
	if err := json.Unmarshal(append(body, '}'), &got); err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("a", maxField-1) + fmt.Sprintf("…[cut, %d bytes]", len(key))
	if got.Key != want {
		t.Fatalf("cut to %q", got.Key)
	}
}

// TestReopenAfterFailureInPlace: the disk filled mid-write (a line cut
// in the file), the operator made room and sent SIGHUP without moving
// the file (OPERATIONS.md says only that SIGHUP reopens it). The new
// lines must not be glued to the cut one, in a file that then fails
// verification at that point for ever: the failed file is moved aside,
// and the new one verifies from its anchor.
func TestReopenAfterFailureInPlace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Access(Access{Op: "s3:GetObject", Bucket: "b", Key: "k", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":3,"time":"2026-`) // the short write of a full disk
	f.Close()
	w.mu.Lock()
	w.fail(errors.New("no space left on device"))
	w.mu.Unlock()
	if err := w.Rotate(); err != nil { // SIGHUP, the file left in place
		t.Fatal(err)
	}
	if err := w.Access(Access{Op: "s3:GetObject", Bucket: "b", Key: "k2", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyFiles(t, "", p); err != nil {
		t.Fatalf("the file reopened after the failure: %v", err)
	}
	aside, _ := filepath.Glob(p + ".*")
	if len(aside) != 1 {
		t.Fatalf("the failed file is not kept aside: %v", aside)
	}
	if _, err := verifyFiles(t, "", aside[0]); err == nil {
		t.Fatal("the failed file, cut, verifies")
	}
}

// TestVerifyReportsUnclosedRestart: an insider cuts the tail of a
// stopped trail (its shutdown checkpoint and the lines before it), then
// s3seal starts again and goes on from the cut. The chain is whole and
// the kept anchor is no longer at the end to check with --last-mac; the
// restart's start line is the only trace, and verify must report it
// rather than say the trail is whole and closed.
func TestVerifyReportsUnclosedRestart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	writeTrail(t, p, 5)
	ls := lines(t, p)
	writeLines(t, p, ls[:len(ls)-3]) // two decisions and the checkpoint cut
	writeTrail(t, p, 1)
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	restart := uint64(len(ls)-3) + 1 // the seq of the restart's start line
	if len(res.Unclosed) != 1 || res.Unclosed[0] != restart {
		t.Fatalf("a restart after an end with no checkpoint is not reported: %+v (want seq %d)", res, restart)
	}
	// A clean restart is no news.
	q := filepath.Join(t.TempDir(), "audit.log")
	writeTrail(t, q, 2)
	writeTrail(t, q, 2)
	if res, err := verifyFiles(t, "", q); err != nil || len(res.Unclosed) != 0 {
		t.Fatalf("a clean restart: %+v %v", res, err)
	}
}

// TestVerifyLastMACAnyCase: the anchor an operator copies from a log
// line may come back in upper case or with a newline: it is the same
// MAC, not a cut trail.
func TestVerifyLastMACAnyCase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	writeTrail(t, p, 2)
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifyFiles(t, strings.ToUpper(res.LastMAC)+"\n", p); err != nil {
		t.Fatalf("the last MAC in upper case: %v", err)
	}
}

// TestFileRemovedWhileWriting: whoever can write the trail's directory
// removes the file s3seal is writing. Its lines must not go on into the
// removed file unseen until the next SIGHUP: within a flush the writer
// begins a new file at the path, whose start line is anchored on the
// last line it wrote (so the loss shows at the junction).
func TestFileRemovedWhileWriting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{FlushEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Access(Access{Op: "s3:GetObject", Bucket: "b", Key: "before", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(p); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the removed file is not begun again: every line goes to a file nobody can read")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.Access(Access{Op: "s3:GetObject", Bucket: "b", Key: "after", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if res.Genesis || !strings.Contains(string(b), `"key":"after"`) || !strings.Contains(string(b), "moved or removed") {
		t.Fatalf("the new file: %+v\n%s", res, b)
	}
}
