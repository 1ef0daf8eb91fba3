package sealstore

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// sourceOverwriter runs before once, just before the store's first
// UploadPartCopy: a client writing the copy's source while the copy is
// made.
type sourceOverwriter struct {
	backend.Store
	once   sync.Once
	before func()
}

func (s *sourceOverwriter) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (string, error) {
	s.once.Do(s.before)
	return s.Store.UploadPartCopy(ctx, in)
}

// A source overwritten while the store copies it: the copy either fails
// (ConditionalRequestConflict, which the client retries) or holds the
// source as it was when the copy began. It must never be acknowledged as
// done and then fail every read: on a store that does not honour
// x-amz-copy-source-if-match (moto), the copy's parts are then the new
// object's bytes, named by the old object's origins.
func TestCopyOfSourceOverwrittenDuringStoreCopy(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			p1, p2 := randBytes(MinPartSize+3, 61), randBytes(100<<10, 62)
			whole := append(append([]byte{}, p1...), p2...)
			f.twoParts(t, "mp", p1, p2)
			single := randBytes(200<<10, 63)
			f.put(t, "single", single)
			newer := randBytes(len(whole)+(1<<20), 64)

			check := func(what, key string, err error, want []byte) {
				t.Helper()
				if err != nil {
					t.Logf("%s: refused: %v", what, err)
					return
				}
				f.st.cache.Purge()
				f.st.manifests.lru.Purge()
				_, got, rerr := f.get(t, key, nil)
				if rerr != nil {
					t.Errorf("%s: acknowledged, but its copy does not read: %v", what, rerr)
				} else if !bytes.Equal(got, want) && !bytes.Equal(got, newer) {
					t.Errorf("%s: the copy reads %d bytes of neither version", what, len(got))
				}
			}

			ow := &sourceOverwriter{Store: f.be, before: func() { f.put(t, "mp", newer) }}
			st, err := New(Direct(ow), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "mp", Bucket: bucket, Key: "mpcopy"})
			check("CopyObject of a multipart source", "mpcopy", err, whole)

			ow2 := &sourceOverwriter{Store: f.be, before: func() { f.put(t, "single", newer) }}
			st2, err := New(Direct(ow2), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
			if err != nil {
				t.Fatal(err)
			}
			dst, err := st2.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "parts"})
			if err != nil {
				t.Fatal(err)
			}
			pi, err := st2.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "single", Bucket: bucket, Key: "parts",
				UploadID: dst, PartNumber: 1})
			if err == nil {
				_, err = st2.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "parts", UploadID: dst,
					Parts: completeParts([]int{1}, []string{pi.ETag}), ExpectSize: -1})
			}
			check("UploadPartCopy of a single-stream source", "parts", err, single)
			_ = errors.Is
		})
	}
}

// copyOverwriter runs before once, just before the store's CopyObject.
type copyOverwriter struct {
	backend.Store
	once   sync.Once
	before func()
}

func (s *copyOverwriter) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	s.once.Do(s.before)
	return s.Store.CopyObject(ctx, in)
}

// A CopyObject that fails leaves its destination as it was, as on S3: a
// single-stream copy whose source was overwritten between its HEAD and the
// store's copy (on a store that does not honour x-amz-copy-source-if-match,
// moto) is found wrong by its check and removed, and with it goes the
// object the destination held before the copy, in a bucket without
// versions.
func TestFailedStoreCopyKeepsPreviousDestination(t *testing.T) {
	for name, f := range copyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			f.put(t, "src", randBytes(80<<10, 131))
			prev := randBytes(3000, 132)
			f.put(t, "dst", prev)
			ow := &copyOverwriter{Store: f.be, before: func() { f.put(t, "src", randBytes(90<<10, 133)) }}
			st, err := New(Direct(ow), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, cerr := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst"})
			if cerr == nil {
				return // the copy took one version or the other: checked elsewhere
			}
			t.Logf("copy: %v", cerr)
			f.st.cache.Purge()
			if _, got, err := f.get(t, "dst", nil); err != nil || !bytes.Equal(got, prev) {
				t.Errorf("after a failed copy the destination reads %d bytes: %v; want the %d bytes it held", len(got), err, len(prev))
			}
		})
	}
}
