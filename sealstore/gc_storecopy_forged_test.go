package sealstore

import (
	"maps"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// gc aborts a multipart copy's upload only on its sealed settings: a
// store that marks a client's upload store-copy in the clear, or puts a
// dead copy's upload state (same bucket and key) in place of a client's
// state with the client's upload id in the clear, must not make gc abort
// the client's upload.
func TestGCKeepsClientUploadWithForgedStoreCopyState(t *testing.T) {
	f := newFixture(t)
	p1, p2 := randBytes(MinPartSize+3, 1), randBytes(100<<10, 2)
	f.twoParts(t, "mp", p1, p2)
	// A copy to "k" that s3seal died in: its upload and state stay.
	st := f.dyingCopier(t)
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "mp", Bucket: bucket, Key: "k"}); err == nil {
		t.Fatal("the copy completed")
	}
	out, err := f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil || len(out.Uploads) != 1 {
		t.Fatalf("uploads %+v %v", out.Uploads, err)
	}
	dead := out.Uploads[0].UploadID
	deadInfo := uploadPrefix(bucket, "k", dead) + infoName
	deadMeta := f.backendMetaOf(t, deadInfo)

	// Two client uploads of "k".
	swapped, marked := f.create(t, "k"), f.create(t, "k")
	f.part(t, f.st, "k", swapped, 1, p1)
	f.part(t, f.st, "k", marked, 1, p1)
	// The store puts the dead copy's state in place of one, with the
	// client's upload id in the clear ...
	m := maps.Clone(deadMeta)
	m[metaUploadID] = b64url.EncodeToString([]byte(swapped))
	if _, err := f.be.CopyObject(f.ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: deadInfo, Bucket: bucket,
		Key: uploadPrefix(bucket, "k", swapped) + infoName, Meta: m}); err != nil {
		t.Fatal(err)
	}
	// ... and marks the other store-copy in the clear.
	mi := uploadPrefix(bucket, "k", marked) + infoName
	m = f.backendMetaOf(t, mi)
	m[metaStoreCopy] = "1"
	if _, err := f.be.CopyObject(f.ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: mi, Bucket: bucket, Key: mi, Meta: m}); err != nil {
		t.Fatal(err)
	}
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true})
	for _, g := range found {
		t.Logf("gc: %s %s %s: %s removed=%v", g.Kind, g.Key, g.UploadID, g.Reason, g.Removed)
	}
	if err != nil {
		t.Log(err)
	}
	out, err = f.be.ListMultipartUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, u := range out.Uploads {
		left[u.UploadID] = true
	}
	if !left[swapped] || !left[marked] {
		t.Errorf("gc aborted a client's upload: left %v, swapped %s marked %s", left, swapped, marked)
	}
	if left[dead] {
		t.Errorf("the dead copy's upload %s stays", dead)
	}
}

func (f *fixture) backendMetaOf(t *testing.T, key string) map[string]string {
	t.Helper()
	bi, err := f.be.HeadObject(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return maps.Clone(bi.Meta)
}
