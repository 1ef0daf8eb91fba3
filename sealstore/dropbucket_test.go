package sealstore

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// TestDeleteBucket: a bucket whose client objects are all deleted is
// deletable although s3seal keeps manifests and upload state in it, and
// an upload is still in progress (S3 discards it with the bucket). While
// one client object remains, BucketNotEmpty, and nothing of s3seal's is
// touched.
func TestDeleteBucket(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) *fixture{
		"embedded": func(t *testing.T) *fixture { return newFixture(t) },
		"moto":     motoFixture,
	} {
		t.Run(name, func(t *testing.T) {
			f := mk(t)
			data := randBytes(1000, 1)
			f.completeSmall(t, "mp", data)
			live := f.create(t, "inprogress")
			f.part(t, f.st, "inprogress", live, 1, randBytes(10, 2))
			f.put(t, "plain", []byte("x"))
			before := f.reservedKeys(t, ReservedPrefix)
			if len(before) < 3 {
				t.Fatalf("expected manifests and upload state, got %q", before)
			}

			if err := f.st.Delete(f.ctx, bucket, "plain"); err != nil {
				t.Fatal(err)
			}
			err := f.st.DeleteBucket(f.ctx, bucket)
			if se, ok := err.(*Error); !ok || se.Code != "BucketNotEmpty" {
				t.Fatalf("with a client object left: %v", err)
			}
			if after := f.reservedKeys(t, ReservedPrefix); !slices.Equal(before, after) {
				t.Fatalf("BucketNotEmpty touched s3seal's objects:\n%q\n%q", before, after)
			}
			if _, got, err := f.get(t, "mp", nil); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("multipart object after BucketNotEmpty: %v", err)
			}
			if _, err := f.be.ListParts(f.ctx, backend.ListPartsInput{Bucket: bucket, Key: "inprogress", UploadID: live}); err != nil {
				t.Fatalf("upload after BucketNotEmpty: %v", err)
			}

			if err := f.st.Delete(f.ctx, bucket, "mp"); err != nil {
				t.Fatal(err)
			}
			if err := f.st.DeleteBucket(f.ctx, bucket); err != nil {
				t.Fatalf("client-empty bucket: %v", err)
			}
			if err := f.be.HeadBucket(f.ctx, bucket); !backend.IsNotFound(err) {
				t.Fatalf("bucket still there: %v", err)
			}
		})
	}
}

// completingStore completes a pending upload when DeleteBucket starts its
// clean-up, i.e. after it found the bucket empty of client objects: at its
// listing of uploads (not a reading of the documents' marker).
type completingStore struct {
	backend.Store
	complete func()
}

func (c *completingStore) ListMultipartUploads(ctx context.Context, in backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	if c.complete != nil && in.Prefix != asideMarkerPrefix {
		c.complete()
		c.complete = nil
	}
	return c.Store.ListMultipartUploads(ctx, in)
}

// TestDeleteBucketRaceWithCompletion: a completion that lands between the
// emptiness check and the clean-up keeps its manifest; the backend then
// refuses to delete the bucket, and the object stays readable.
func TestDeleteBucketRaceWithCompletion(t *testing.T) {
	f := newFixture(t)
	data := randBytes(1000, 3)
	id := f.create(t, "late")
	e := f.part(t, f.st, "late", id, 1, data)
	cs := &completingStore{Store: f.be, complete: func() {
		if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "late", UploadID: id,
			Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
			t.Errorf("completion: %v", err)
		}
	}}
	st, err := New(Direct(cs), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	err = st.DeleteBucket(f.ctx, bucket)
	if backend.ErrorCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket with an object completed meanwhile: %v", err)
	}
	// A fresh store: the completing one has the manifest in its cache.
	reader, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := f.getWith(reader, "late"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object completed during DeleteBucket lost its manifest: %v", err)
	}
}

// writingStore lets a client PUT land just before the backend's first
// DeleteBucket, i.e. after s3seal found the bucket empty of client objects.
type writingStore struct {
	backend.Store
	write func()
	calls int
}

func (w *writingStore) DeleteBucket(ctx context.Context, bucket string) error {
	w.calls++
	if w.write != nil {
		w.write()
		w.write = nil
	}
	return w.Store.DeleteBucket(ctx, bucket)
}

// TestDeleteBucketWriteBeforeBackendRefusal: the backend refuses for
// content (BucketNotEmpty) because a client object landed after the first
// look; s3seal asks again before its clean-up and touches nothing: the
// upload in progress lives on, s3seal's objects stay, and the backend is
// not asked a second time.
func TestDeleteBucketWriteBeforeBackendRefusal(t *testing.T) {
	f := newFixture(t)
	f.completeSmall(t, "mp", randBytes(1000, 4))
	if err := f.st.Delete(f.ctx, bucket, "mp"); err != nil {
		t.Fatal(err)
	}
	live := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", live, 1, randBytes(10, 5))
	before := f.reservedKeys(t, ReservedPrefix)
	ws := &writingStore{Store: f.be, write: func() { f.put(t, "late", []byte("written meanwhile")) }}
	st, err := New(Direct(ws), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	err = st.DeleteBucket(f.ctx, bucket)
	if backend.ErrorCode(err) != "BucketNotEmpty" {
		if se, ok := err.(*Error); !ok || se.Code != "BucketNotEmpty" {
			t.Fatalf("DeleteBucket with a client object written meanwhile: %v", err)
		}
	}
	if _, err := f.be.ListParts(f.ctx, backend.ListPartsInput{Bucket: bucket, Key: "inprogress", UploadID: live}); err != nil {
		t.Errorf("upload after BucketNotEmpty: %v, want it alive", err)
	}
	if after := f.reservedKeys(t, ReservedPrefix); !slices.Equal(before, after) {
		t.Errorf("BucketNotEmpty touched s3seal's objects:\n%q\n%q", before, after)
	}
	if ws.calls != 1 {
		t.Errorf("backend DeleteBucket asked %d times, want 1", ws.calls)
	}
}

// protectedBucketStore refuses DeleteBucket as a store does for a bucket
// whose policy denies s3:DeleteBucket (a common guard), or when s3seal's
// backend credentials lack that permission.
type protectedBucketStore struct{ backend.Store }

func (protectedBucketStore) DeleteBucket(context.Context, string) error {
	return &backend.Error{Op: "DeleteBucket", Code: "AccessDenied", StatusCode: 403, Message: "Access Denied"}
}

// TestRefusedDeleteBucketKeepsUploads: DeleteBucket of a client-empty
// bucket that the store refuses to delete (AccessDenied) answers
// AccessDenied, and the multipart upload in progress in it stays alive
// (S3 discards uploads only with their bucket).
func TestRefusedDeleteBucketKeepsUploads(t *testing.T) {
	f := newFixture(t)
	st, err := New(Direct(protectedBucketStore{f.be}), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	live := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", live, 1, randBytes(10, 2))
	err = st.DeleteBucket(f.ctx, bucket)
	t.Logf("DeleteBucket: %v", err)
	if err == nil {
		t.Fatal("DeleteBucket succeeded")
	}
	if _, err := f.be.ListParts(f.ctx, backend.ListPartsInput{Bucket: bucket, Key: "inprogress", UploadID: live}); err != nil {
		t.Errorf("upload after a DeleteBucket the store refused: %v, want it alive", err)
	}
}
