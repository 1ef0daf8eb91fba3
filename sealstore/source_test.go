package sealstore

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/retry"
)

// resetStore cuts the body of the first cuts GETs of big ranges after
// cutAt bytes, as a connection reset would.
type resetStore struct {
	backend.Store
	cuts  atomic.Int32
	cutAt int64
}

func (c *resetStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	obj, err := c.Store.GetObject(ctx, in)
	if err != nil || obj.Info.Size < 200_000 || c.cuts.Add(-1) < 0 {
		return obj, err
	}
	obj.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(obj.Body, c.cutAt), resetReader{}), obj.Body}
	return obj, nil
}

type resetReader struct{}

func (resetReader) Read([]byte) (int, error) { return 0, syscall.ECONNRESET }

// TestCopySourceResumes: a copy (CopyObject, UploadPartCopy) that reads its
// source (here: one that asks for a checksum the source lacks) and whose
// source read is cut resumes where it broke and copies the exact bytes.
func TestCopySourceResumes(t *testing.T) {
	f := newFixture(t)
	cut := &resetStore{Store: f.be, cutAt: 100_000}
	fast := retry.Policy{Attempts: 4, Backoff: time.Millisecond}
	st, err := New(retry.NewStore(cut, retry.Policies{Default: fast, Part: fast, Complete: fast, SourceRead: fast}), f.kr,
		Options{SpoolDir: t.TempDir(), BackendChecksum: true})

	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(3*mib+5, 21)
	f.put(t, "src", data)

	cut.cuts.Store(2)
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst", ChecksumAlgorithm: "sha256"}); err != nil {
		t.Fatal(err)
	}
	if n := cut.cuts.Load(); n >= 0 {
		t.Fatalf("the source was not cut (%d cuts left)", n)
	}
	if _, got, err := f.get(t, "dst", nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copy: %d bytes, %v", len(got), err)
	}

	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp"})
	if err != nil {
		t.Fatal(err)
	}
	cut.cuts.Store(1)
	pi, err := st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "src", Range: &Range{First: 1, Last: 3 * mib},
		Bucket: bucket, Key: "mp", UploadID: id, PartNumber: 1})
	if err != nil || pi.ETag != md5hex(data[1:3*mib+1]) {
		t.Fatalf("part copy: %+v, %v", pi, err)
	}
	// Cut before any byte, more often than the policy allows: the copy
	// fails, nothing partial is stored. (A read that makes progress starts
	// the count over, so a source cut every 100 kB still copies.)
	cut.cuts.Store(100)
	cut.cutAt = 0
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "never", ChecksumAlgorithm: "sha256"}); err == nil {
		t.Fatal("copy with a source cut at every read succeeded")
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, "never"); !backend.IsNotFound(err) {
		t.Fatalf("a failed copy left an object: %v", err)
	}
}
