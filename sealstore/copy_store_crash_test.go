package sealstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// dyingStore is a store seen by an s3seal that is killed right after the
// store made the first part copy of a multipart copy: from then on
// nothing it sends arrives (not even the abort of its upload).
type dyingStore struct {
	backend.Store
	dead  atomic.Bool
	calls atomic.Int32
}

var errKilled = errors.New("s3seal was killed")

func (d *dyingStore) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (string, error) {
	if d.calls.Add(1) > 1 {
		d.dead.Store(true)
		return "", errKilled
	}
	return d.Store.UploadPartCopy(ctx, in)
}

func (d *dyingStore) AbortMultipartUpload(ctx context.Context, bucket, key, id string) error {
	if d.dead.Load() {
		return errKilled
	}
	return d.Store.AbortMultipartUpload(ctx, bucket, key, id)
}

func (d *dyingStore) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]backend.DeleteResult, error) {
	if d.dead.Load() {
		return nil, errKilled
	}
	return d.Store.DeleteObjects(ctx, bucket, keys)
}

// dyingCopier is a Store over a dyingStore of f's store that has probed
// its copy conditions already (the probe makes part copies of its own):
// it dies at the second part copy of its first multipart copy of "mp".
func (f *fixture) dyingCopier(t *testing.T) *Store {
	t.Helper()
	ds := &dyingStore{Store: f.be}
	st, err := New(Direct(ds), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	ds.calls.Store(-10)
	if !st.storeHonoursCopyConditions(f.ctx, bucket, bucket, "mp") {
		t.Fatal("the embedded store does not honour copy conditions")
	}
	ds.calls.Store(0)
	return st
}

// A CopyObject of a multipart source is a multipart upload the client
// never asked for and cannot know the id of: when s3seal dies in the
// middle of it, s3seal gc must find what it left (the backend upload and
// the parts the store already copied), as it finds a crashed completion's.
func TestGCRemovesMultipartCopyOfKilledProcess(t *testing.T) {
	f := newFixture(t)
	p1, p2 := randBytes(MinPartSize+3, 91), randBytes(100<<10, 92)
	f.twoParts(t, "mp", p1, p2)
	st := f.dyingCopier(t)
	_, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "mp", Bucket: bucket, Key: "mpcopy"})
	if err == nil {
		t.Fatal("the copy completed")
	}
	gc, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	found, err := gc.GC(f.ctx, bucket, GCOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range found {
		t.Logf("gc: %s %s %s: %s removed=%v", g.Kind, g.Key, g.UploadID, g.Reason, g.Removed)
	}
	out, err := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range out.Uploads {
		t.Errorf("after gc, the killed copy's upload %s of %s stays, with the parts the store copied", u.UploadID, u.Key)
	}
}
