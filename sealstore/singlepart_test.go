package sealstore

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// freshBucket makes bucket name through st, as s3api's CreateBucket
// does, with an owner.
func freshBucket(t *testing.T, st *Store, name string) {
	t.Helper()
	ctx := context.Background()
	if err := st.CreateBucket(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucketDoc(ctx, name, "owner", []byte(`{"id":"o"}`)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) putIn(t *testing.T, st *Store, bkt, key string, data []byte) {
	t.Helper()
	if _, err := st.Put(f.ctx, PutInput{Bucket: bkt, Key: key, Body: bytes.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
}

// completeIn makes a one-part multipart object at key of bkt through st.
func (f *fixture) completeIn(t *testing.T, st *Store, bkt, key string, data []byte) {
	t.Helper()
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bkt, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.UploadPart(f.ctx, UploadPartInput{Bucket: bkt, Key: key, UploadID: id, PartNumber: 1, Body: bytes.NewReader(data), Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bkt, Key: key, UploadID: id,
		Parts: completeParts([]int{1}, []string{p.ETag})}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) manifestsIn(t *testing.T, bkt string) int {
	t.Helper()
	out, err := f.be.ListObjects(f.ctx, backend.ListInput{Bucket: bkt, V2: true, Prefix: manifestsPrefix})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Entries)
}

// A bucket s3seal made holds SinglePartDoc, and its PUTs HEAD nothing;
// its first multipart upload takes the document away, and from then on
// a PUT over a multipart object drops its manifest.
func TestSinglePartBucketSkipsManifestHead(t *testing.T) {
	f := newFixture(t)
	freshBucket(t, f.st, "fresh")
	if !f.st.singlePart(f.ctx, "fresh") {
		t.Fatal("a bucket s3seal made does not carry SinglePartDoc")
	}
	heads := f.be.heads.Load()
	f.putIn(t, f.st, "fresh", "k", []byte("small"))
	if n := f.be.heads.Load() - heads; n != 0 {
		t.Errorf("a PUT into a bucket that never held a multipart object made %d HEADs", n)
	}
	f.completeIn(t, f.st, "fresh", "mp", []byte("parts"))
	if f.st.singlePart(f.ctx, "fresh") {
		t.Fatal("SinglePartDoc outlived the bucket's first multipart object")
	}
	f.putIn(t, f.st, "fresh", "mp", []byte("over it"))
	if n := f.manifestsIn(t, "fresh"); n != 0 {
		t.Errorf("%d manifests left after a PUT over the multipart object", n)
	}
	// A bucket s3seal did not make (the fixture's) never carries it.
	if f.st.singlePart(f.ctx, bucket) {
		t.Error("a bucket made on the store directly carries SinglePartDoc")
	}
}

// A multipart object made through another process is seen within the
// bucket documents' TTL: a PUT over it after that drops its manifest.
// Within the TTL the PUT may leave it, and gc finds it.
func TestSinglePartOtherProcessUpload(t *testing.T) {
	for _, within := range []bool{false, true} {
		f := newFixture(t)
		ttl := 300 * time.Millisecond
		if within {
			ttl = time.Hour
		}
		other, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BucketDocTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		freshBucket(t, f.st, "fresh")
		if !other.singlePart(f.ctx, "fresh") {
			t.Fatal("the other process does not see SinglePartDoc")
		}
		f.completeIn(t, f.st, "fresh", "mp", []byte("parts"))
		if !within {
			time.Sleep(ttl)
		}
		f.putIn(t, other, "fresh", "mp", []byte("over it"))
		left := f.manifestsIn(t, "fresh")
		if !within {
			if left != 0 {
				t.Errorf("past the TTL: %d manifests left by the other process's PUT", left)
			}
			continue
		}
		if left != 1 {
			t.Fatalf("within the TTL: %d manifests, want the one the PUT could not know of", left)
		}
		found, err := f.st.GC(f.ctx, "fresh", GCOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 || found[0].Kind != "manifest" {
			t.Errorf("gc found %+v, want the manifest left", found)
		}
	}
}

// recreateOK answers a CreateBucket of a bucket that exists with success,
// as AWS does in us-east-1 for its owner.
type recreateOK struct{ *countingStore }

func (r recreateOK) CreateBucket(ctx context.Context, bucket string) error {
	if err := r.countingStore.CreateBucket(ctx, bucket); err != nil && backend.ErrorCode(err) != "BucketAlreadyOwnedByYou" && backend.ErrorCode(err) != "BucketAlreadyExists" {
		return err
	}
	return nil
}

// A bucket that holds anything when CreateBucket answers is not marked:
// it may hold multipart objects.
func TestSinglePartNotForBucketWithObjects(t *testing.T) {
	f := newFixture(t)
	st, err := New(Direct(recreateOK{f.be}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.completeIn(t, st, bucket, "mp", []byte("parts"))
	if err := st.CreateBucket(f.ctx, bucket); err != nil {
		t.Fatal(err)
	}
	if st.singlePart(f.ctx, bucket) {
		t.Fatal("a bucket created again over a multipart object was marked SinglePartDoc")
	}
}

// An upload created before the bucket carried SinglePartDoc (an older
// s3seal's) takes it away when it completes.
func TestSinglePartDroppedByOlderUpload(t *testing.T) {
	f := newFixture(t)
	freshBucket(t, f.st, "fresh")
	if err := f.st.DeleteBucketDoc(f.ctx, "fresh", SinglePartDoc); err != nil {
		t.Fatal(err)
	}
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: "fresh", Key: "mp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.PutBucketDoc(f.ctx, "fresh", SinglePartDoc, []byte("1")); err != nil {
		t.Fatal(err)
	}
	p, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: "fresh", Key: "mp", UploadID: id, PartNumber: 1, Body: bytes.NewReader([]byte("x")), Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: "fresh", Key: "mp", UploadID: id,
		Parts: completeParts([]int{1}, []string{p.ETag})}); err != nil {
		t.Fatal(err)
	}
	if f.st.singlePart(f.ctx, "fresh") {
		t.Error("a completion left SinglePartDoc in place")
	}
}
