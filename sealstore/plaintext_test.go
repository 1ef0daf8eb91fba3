package sealstore

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// captureLog sends slog's default logger to a buffer for the test.
func captureLog(t *testing.T) *logBuffer {
	lb := &logBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lb, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return lb
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// putBare stores an object on the backend without s3seal metadata: one
// written around s3seal, or chosen by a hostile provider.
func (f *fixture) putBare(t *testing.T, key string, data []byte) {
	t.Helper()
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
}

// TestPlaintextRefusedByDefault: without AllowPlaintextReads an object
// without s3seal metadata is refused by HEAD, GET, ranged GET and as a copy
// source (so a provider cannot get chosen content sealed), with an
// integrity error; it can still be deleted.
func TestPlaintextRefusedByDefault(t *testing.T) {
	f := newFixture(t)
	f.putBare(t, "bare", []byte("content the provider chose"))
	wantRefused := func(what string, err error) {
		t.Helper()
		var se *Error
		if !errors.Is(err, ErrIntegrity) || !errors.Is(err, ErrNotEncrypted) || !errors.As(err, &se) || se.Code != "InvalidObjectState" || !strings.Contains(se.Message, "--allow-plaintext-reads") {
			t.Errorf("%s: %v, want InvalidObjectState naming --allow-plaintext-reads, wrapping ErrIntegrity and ErrNotEncrypted", what, err)
		}
	}
	_, err := f.st.Head(f.ctx, bucket, "bare")
	wantRefused("head", err)
	_, _, err = f.get(t, "bare", nil)
	wantRefused("get", err)
	_, _, err = f.get(t, "bare", &Range{First: 2, Last: 5})
	wantRefused("ranged get", err)
	_, err = f.st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "bare", Bucket: bucket, Key: "sealed"})
	wantRefused("copy", err)
	if _, err := f.be.HeadObject(f.ctx, bucket, "sealed"); !backend.IsNotFound(err) {
		t.Errorf("a refused copy stored something: %v", err)
	}
	if err := f.st.Delete(f.ctx, bucket, "bare"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, "bare"); !backend.IsNotFound(err) {
		t.Errorf("refused object not deleted: %v", err)
	}
}

// TestPlaintextReadsAllowed: with AllowPlaintextReads such an object is
// served and copied (the copy is sealed), every read is logged at WARN
// with bucket and key, and a body cut short is an integrity error.
func TestPlaintextReadsAllowed(t *testing.T) {
	f := newFixture(t)
	data := []byte("written before s3seal, read while migrating")
	f.putBare(t, "old", data)
	logs := captureLog(t)
	st, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), AllowPlaintextReads: true})
	f.st = st
	for range 2 {
		if _, got, err := f.get(t, "old", nil); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get: %q %v", got, err)
		}
	}
	if _, got, err := f.get(t, "old", &Range{First: 8, Last: 13}); err != nil || string(got) != "before" {
		t.Fatalf("ranged get: %q %v", got, err)
	}
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "old", Bucket: bucket, Key: "sealed"}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	if raw, _ := f.be.HeadObject(f.ctx, bucket, "sealed"); raw.Meta["s3seal-v"] != "2" {
		t.Errorf("copy of a plaintext object is not sealed: %v", raw.Meta)
	}
	var warns int
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "bucket="+bucket) && strings.Contains(l, "key=old") {
			warns++
		}
	}
	if warns != 4 { // two GETs, one ranged GET, one copy
		t.Errorf("%d WARN lines for 4 reads:\n%s", warns, logs.String())
	}

	cut, _ := New(Direct(&cuttingStore{Store: f.be, keep: 10, end: io.EOF}), f.kr, Options{SpoolDir: t.TempDir(), AllowPlaintextReads: true})
	_, rd, err := cut.Get(f.ctx, bucket, "old", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if got, err := io.ReadAll(io.LimitReader(rd, rd.Len)); !errors.Is(err, ErrIntegrity) {
		t.Errorf("plaintext body cut after %d bytes: %v", len(got), err)
	}
}
