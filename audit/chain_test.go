package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var testKey = bytes.Repeat([]byte{7}, KeySize)

// writeTrail writes n access lines to a new trail at path and closes it.
func writeTrail(t *testing.T, path string, n int) {
	t.Helper()
	w, err := Open(path, testKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Access(Access{RequestID: "R", AccessKey: "AK", Op: "s3:PutObject", Bucket: "b", Key: strings.Repeat("k", i), Allow: i%2 == 0, Rule: "owner"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func verifyFiles(t *testing.T, lastMAC string, paths ...string) (Result, error) {
	t.Helper()
	var files []File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{Name: p, R: bytes.NewReader(b)})
	}
	return Verify(testKey, files, lastMAC)
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(t *testing.T, path string, ls [][]byte) {
	t.Helper()
	b := bytes.Join(ls, nil)
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// failsAt checks that err is a Failure at line n.
func failsAt(t *testing.T, err error, n int, what string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("%s: got %v, want a failure at line %d", what, err, n)
	}
	if f.Line != n {
		t.Fatalf("%s: fails at line %d (%s), want line %d", what, f.Line, f.Reason, n)
	}
}

func TestTrailVerifies(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	writeTrail(t, p, 5)
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	// start, 5 lines, checkpoint
	if res.Lines != 7 || res.FirstSeq != 1 || res.LastSeq != 7 || !res.Genesis || !res.Checkpoint {
		t.Fatalf("result %+v", res)
	}
	if _, err := verifyFiles(t, res.LastMAC, p); err != nil {
		t.Fatalf("with its own last MAC: %v", err)
	}
	if _, err := Verify(bytes.Repeat([]byte{8}, KeySize), []File{{Name: p, R: bytes.NewReader(bytes.Join(lines(t, p), nil))}}, ""); err == nil {
		t.Fatal("verifies under another key")
	} else {
		failsAt(t, err, 1, "another key")
	}
}

func TestTrailEdits(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "audit.log")
	writeTrail(t, orig, 6)
	edited := filepath.Join(dir, "edited.log")
	for _, c := range []struct {
		name   string
		edit   func([][]byte) [][]byte
		failAt int
	}{
		{"one byte of a field", func(ls [][]byte) [][]byte {
			ls[3] = bytes.Replace(ls[3], []byte(`"allow"`), []byte(`"alloW"`), 1)
			ls[3] = bytes.Replace(ls[3], []byte(`"deny"`), []byte(`"dena"`), 1)
			return ls
		}, 4},
		{"one byte of the MAC", func(ls [][]byte) [][]byte {
			l := ls[2]
			i := len(l) - 4
			l[i] ^= 1
			if l[i] == '"' || l[i] > 'f' || l[i] < '0' {
				l[i] = '0'
			}
			return ls
		}, 3},
		{"a line removed", func(ls [][]byte) [][]byte { return slices.Delete(ls, 2, 3) }, 3},
		{"the first line removed", func(ls [][]byte) [][]byte { return ls[1:] }, 1},
		{"two lines swapped", func(ls [][]byte) [][]byte { ls[2], ls[3] = ls[3], ls[2]; return ls }, 3},
		{"a line repeated", func(ls [][]byte) [][]byte { return slices.Insert(ls, 3, ls[2]) }, 4},
		{"the last line cut in two", func(ls [][]byte) [][]byte {
			last := ls[len(ls)-1]
			ls[len(ls)-1] = last[:len(last)/2]
			return ls
		}, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := c.edit(lines(t, orig))
			b := bytes.Join(ls, nil)
			if err := os.WriteFile(edited, b, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := verifyFiles(t, "", edited)
			failsAt(t, err, c.failAt, c.name)
		})
	}
}

func TestTrailTruncatedTail(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	writeTrail(t, p, 4)
	full, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	ls := lines(t, p)
	writeLines(t, p, ls[:len(ls)-2])
	// Whole lines cut from the end verify, but say the trail was not
	// closed; the anchor kept elsewhere catches the cut.
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint || res.LastSeq != full.LastSeq-2 {
		t.Fatalf("cut trail: %+v", res)
	}
	if _, err := verifyFiles(t, full.LastMAC, p); err == nil {
		t.Fatal("a cut trail verifies against the last MAC it had")
	}
}

func TestTrailRotation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(k string) {
		if err := w.KeyUse(KeyUse{Op: "wrap", KeyID: "default", Bucket: "b", Key: k, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	rec("a")
	rec("b")
	old1 := p + ".1"
	if err := os.Rename(p, old1); err != nil {
		t.Fatal(err)
	}
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	rec("c")
	old2 := p + ".2"
	if err := os.Rename(p, old2); err != nil {
		t.Fatal(err)
	}
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	rec("d")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := verifyFiles(t, "", old1, old2, p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Genesis || !res.Checkpoint || res.Lines != 10 {
		t.Fatalf("across the files: %+v", res)
	}
	// The newest alone verifies from its anchor.
	res, err = verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Genesis || res.PrevSeq != 7 {
		t.Fatalf("the newest alone: %+v", res)
	}
	_, err = verifyFiles(t, "", old1, p) // the middle file missing
	failsAt(t, err, 1, "a file missing")
	_, err = verifyFiles(t, "", old2, old1, p) // out of order
	failsAt(t, err, 1, "files out of order")
}

func TestTrailMaxSize(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{MaxSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		if err := w.Access(Access{AccessKey: "AK", Op: "s3:GetObject", Bucket: "b", Key: "k", Allow: true, Rule: "owner"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(p + ".*")
	if len(files) < 3 {
		t.Fatalf("%d rotated files, want several", len(files))
	}
	slices.Sort(files)
	res, err := verifyFiles(t, "", append(files, p)...)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Genesis || !res.Checkpoint {
		t.Fatalf("%+v", res)
	}
}

func TestTrailRestart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	writeTrail(t, p, 2)
	writeTrail(t, p, 2) // a clean restart continues the chain
	// A crash: lines never closed by a checkpoint, and a cut line.
	w, err := Open(p, testKey, Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Access(Access{Op: "s3:GetObject", Bucket: "b", Allow: true, Rule: "owner"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":99,"time":"`)
	f.Close()
	writeTrail(t, p, 1)
	res, err := verifyFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Genesis || !res.Checkpoint {
		t.Fatalf("%+v", res)
	}
	b, _ := os.ReadFile(p)
	if !bytes.Contains(b, []byte("no checkpoint")) || !bytes.Contains(b, []byte("cut last line dropped")) {
		t.Fatalf("the restart does not say what it found:\n%s", b)
	}
	// A trail under another key is not continued.
	if _, err := Open(p, bytes.Repeat([]byte{9}, KeySize), Options{}); err == nil {
		t.Fatal("a trail written under another key was continued")
	}
}

// TestTrailWriteFailure checks that a failed write fails every record
// after it, and that a rotation resumes the trail saying so.
func TestTrailWriteFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.log")
	w, err := Open(p, testKey, Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.file.Close() // every write from now on fails
	w.mu.Unlock()
	if w.Err() != nil {
		t.Fatalf("Err before any failure: %v", w.Err())
	}
	if err := w.Access(Access{Op: "s3:GetObject"}); err == nil {
		t.Fatal("a failed write was acknowledged")
	}
	if err := w.KeyUse(KeyUse{Op: "wrap"}); err == nil {
		t.Fatal("a record after a failed write was acknowledged")
	}
	if w.Err() == nil {
		t.Fatal("Err does not report the failure (/readyz would say ready)")
	}
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Rotate(); err != nil {
		t.Fatal(err)
	}
	if w.Err() != nil {
		t.Fatalf("Err after the rotation reopened the trail: %v", w.Err())
	}
	if err := w.Access(Access{Op: "s3:GetObject"}); err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
	w.Close()
	if _, err := verifyFiles(t, "", p); err != nil {
		t.Fatalf("the new file alone: %v", err)
	}
	b, _ := os.ReadFile(p)
	if !bytes.Contains(b, []byte("after a failed write")) {
		t.Fatalf("the new file does not say lines were lost:\n%s", b)
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey([]byte("AAAA\n")); err == nil {
		t.Fatal("a short key parsed")
	}
	k, err := ParseKey([]byte("BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n"))
	if err != nil || !bytes.Equal(k, testKey) {
		t.Fatalf("%v %x", err, k)
	}
}

// TestTrailSplice: a line lifted from another trail under the same key,
// with the same sequence number and a MAC valid where it was, fails: each
// MAC covers the one before it.
func TestTrailSplice(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	writeTrail(t, a, 4)
	w, err := Open(b, testKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		w.Access(Access{AccessKey: "AK", Op: "s3:PutObject", Bucket: "b", Key: "other", Allow: true, Rule: "owner"})
	}
	w.Close()
	la, lb := lines(t, a), lines(t, b)
	la[2] = lb[2]
	writeLines(t, a, la)
	_, err = verifyFiles(t, "", a)
	failsAt(t, err, 3, "a line of another trail")
}
