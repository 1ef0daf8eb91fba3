package sealstore

import (
	"testing"
	"time"
)

// A bucket deleted and made again through one process carries
// SinglePartDoc anew; another process whose cached documents (read
// before, within their TTL) lack it creates and completes a multipart
// upload there. The document must be gone once a multipart object is in
// the bucket, whatever this process had cached: otherwise every process,
// for the rest of the bucket's life, skips the HEAD of a PUT over that
// object and leaves its manifest behind (not the once-per-bucket window
// singlepart.go documents).
func TestSinglePartGoneAfterUploadThroughStaleReplica(t *testing.T) {
	f := newFixture(t)
	a, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BucketDocTTL: time.Hour, OwnerPendingAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BucketDocTTL: time.Hour, OwnerPendingAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	// The bucket's first life: a multipart object took SinglePartDoc
	// away, and process a has read the documents since.
	freshBucket(t, b, "fresh")
	f.completeIn(t, b, "fresh", "old", []byte("parts"))
	if a.singlePart(f.ctx, "fresh") {
		t.Fatal("SinglePartDoc outlived the first multipart object")
	}
	// Through b: the bucket emptied, deleted and made again.
	if err := b.Delete(f.ctx, "fresh", "old"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteBucket(f.ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
	freshBucket(t, b, "fresh")
	// Through a, a moment later (within its TTL): a multipart object.
	f.completeIn(t, a, "fresh", "mp", []byte("parts"))

	// A process started afterwards (or any process past the TTL).
	c, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if c.singlePart(f.ctx, "fresh") {
		t.Errorf("the bucket holds a multipart object and still carries SinglePartDoc")
	}
	f.putIn(t, c, "fresh", "mp", []byte("over it"))
	if n := f.manifestsIn(t, "fresh"); n != 0 {
		t.Errorf("%d manifests left by a PUT over the multipart object, made long after the TTL", n)
	}
}
