package sealstore

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// opaqueCopyETags is a store whose copies get ETags that are not their
// bytes' MD5 (AWS with SSE-KMS, stores that hash otherwise): the ETag a
// CopyObject answers is not the source's, and names the copy in a
// conditional GET. after, when set, runs once right after the store made
// a copy: a client writing the destination meanwhile.
type opaqueCopyETags struct {
	backend.Store
	mu    sync.Mutex
	real  map[string]string
	after func()
}

func (s *opaqueCopyETags) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	out, err := s.Store.CopyObject(ctx, in)
	if err != nil {
		return out, err
	}
	fake := "opaque" + strings.Trim(out.ETag, `"`)
	s.mu.Lock()
	s.real[fake] = out.ETag
	after := s.after
	s.after = nil
	s.mu.Unlock()
	out.ETag = fake
	if after != nil {
		after()
	}
	return out, nil
}

func (s *opaqueCopyETags) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	s.mu.Lock()
	if r, ok := s.real[strings.Trim(in.IfMatch, `"`)]; ok {
		in.IfMatch = r
	}
	s.mu.Unlock()
	return s.Store.GetObject(ctx, in)
}

// A copy whose ETag is not its source's has its first segment checked;
// when that check cannot read the copy because another client wrote the
// destination meanwhile, the copy may fail, but the other client's
// object, acknowledged to it, must stay.
func TestCopyCheckKeepsConcurrentWriteOfDestination(t *testing.T) {
	f := newFixture(t)
	data := randBytes(100<<10, 71)
	f.put(t, "src", data)
	other := randBytes(5000, 72)
	oe := &opaqueCopyETags{Store: f.be, real: map[string]string{}}
	oe.after = func() { f.put(t, "dst", other) }
	st, err := New(Direct(oe), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst"})
	t.Logf("copy: %v", cerr)
	_, got, err := f.get(t, "dst", nil)
	if err != nil {
		t.Fatalf("the object another client wrote at the copy's destination is gone: %v", err)
	}
	if !bytes.Equal(got, other) && !bytes.Equal(got, data) {
		t.Fatalf("dst reads %d bytes of neither write", len(got))
	}
}

// The check of a copy whose ETag is not its source's opens the copy's
// first segment: for an empty object, its one empty segment.
func TestCopyCheckOfEmptyObject(t *testing.T) {
	f := newFixture(t)
	f.put(t, "empty", nil)
	oe := &opaqueCopyETags{Store: f.be, real: map[string]string{}}
	st, err := New(Direct(oe), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "empty", Bucket: bucket, Key: "dst"}); err != nil {
		t.Fatal(err)
	}
	if _, got, err := f.get(t, "dst", nil); err != nil || len(got) != 0 {
		t.Fatalf("the copy of an empty object reads %d bytes: %v", len(got), err)
	}
}
