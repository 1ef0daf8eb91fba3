package sealstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

func TestBucketDocsRoundTrip(t *testing.T) {
	f := newFixture(t)
	docs, err := f.st.BucketDocs(f.ctx, bucket)
	if err != nil || len(docs) != 0 {
		t.Fatalf("fresh bucket: %v %v", docs, err)
	}
	if err := f.st.PutBucketDoc(f.ctx, bucket, "policy", []byte(`{"Statement":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", []byte("alice")); err != nil {
		t.Fatal(err)
	}
	// A change through this store is seen at once, whatever the TTL.
	d, ok, err := f.st.BucketDoc(f.ctx, bucket, "policy")
	if err != nil || !ok || string(d) != `{"Statement":[]}` {
		t.Fatalf("policy: %q %v %v", d, ok, err)
	}
	if err := f.st.DeleteBucketDoc(f.ctx, bucket, "policy"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.DeleteBucketDoc(f.ctx, bucket, "policy"); err != nil {
		t.Fatalf("deleting a missing document: %v", err)
	}
	docs, err = f.st.BucketDocs(f.ctx, bucket)
	if err != nil || len(docs) != 1 || string(docs["owner"]) != "alice" {
		t.Fatalf("after delete: %q %v", docs, err)
	}
	// The store sees ciphertext, and the client's listing hides them.
	raw, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: BucketDocPrefix + "owner"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	if bytes.Contains(body, []byte("alice")) {
		t.Fatal("the store holds the document in the clear")
	}
	out, err := f.st.List(f.ctx, backend.ListInput{Bucket: bucket, V2: true})
	if err != nil || len(out.Entries) != 0 {
		t.Fatalf("listing shows bucket documents: %+v %v", out.Entries, err)
	}
}

func TestBucketDocsOfMissingBucket(t *testing.T) {
	f := newFixture(t)
	_, err := f.st.BucketDocs(f.ctx, "nobucket")
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != "NoSuchBucket" {
		t.Fatalf("got %v, want NoSuchBucket", err)
	}
}

// A document the store forged, or moved from another bucket, does not
// open: it is never taken for s3seal's.
func TestBucketDocsRefuseForgedAndMoved(t *testing.T) {
	f := newFixture(t)
	if err := f.be.CreateBucket(f.ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.PutBucketDoc(f.ctx, "other", "policy", []byte("other's")); err != nil {
		t.Fatal(err)
	}
	raw, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: "other", Key: BucketDocPrefix + "policy"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	put := func(b []byte, meta map[string]string) {
		t.Helper()
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: BucketDocPrefix + "policy",
			Body: bytes.NewReader(b), Size: int64(len(b)), Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
	put(body, raw.Info.Meta)
	if _, err := f.st.BucketDocs(f.ctx, bucket); !errors.Is(err, ErrIntegrity) {
		t.Fatalf("moved document: got %v, want an integrity failure", err)
	}
	put([]byte(`{"Statement":"forged"}`), nil)
	if _, err := f.st.BucketDocs(f.ctx, bucket); err == nil {
		t.Fatal("forged document opened")
	}
}

// A change made through another s3seal process over the same store is
// seen once the TTL has passed, not before.
func TestBucketDocsTTL(t *testing.T) {
	f := newFixtureWith(t, Options{BucketDocTTL: time.Hour})
	other, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if docs, err := f.st.BucketDocs(f.ctx, bucket); err != nil || len(docs) != 0 {
		t.Fatalf("%v %v", docs, err)
	}
	if err := other.PutBucketDoc(f.ctx, bucket, "acl", []byte("private")); err != nil {
		t.Fatal(err)
	}
	if docs, _ := f.st.BucketDocs(f.ctx, bucket); len(docs) != 0 {
		t.Fatal("the cache was not used within its TTL")
	}
	f.st.opt.BucketDocTTL = time.Nanosecond
	if d, ok, err := f.st.BucketDoc(f.ctx, bucket, "acl"); err != nil || !ok || string(d) != "private" {
		t.Fatalf("after the TTL: %q %v %v", d, ok, err)
	}
}

func TestBucketDocsRefuseBadNames(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"", "a/b"} {
		if err := f.st.PutBucketDoc(f.ctx, bucket, name, nil); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	if err := f.st.PutBucketDoc(f.ctx, bucket, "big", []byte(strings.Repeat("x", MaxBucketDoc+1))); err == nil {
		t.Error("a document over MaxBucketDoc was accepted")
	}
}

// A bucket with documents can be deleted, versioned or not, and one
// created again under its name starts with none.
func TestDeleteBucketTakesItsDocs(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		f := newFixture(t)
		if versioned {
			f.enableVersioning(t)
		}
		for _, name := range []string{"owner", "policy"} {
			if err := f.st.PutBucketDoc(f.ctx, bucket, name, []byte(name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.st.DeleteBucketDoc(f.ctx, bucket, "policy"); err != nil {
			t.Fatal(err)
		}
		if err := f.st.DeleteBucket(f.ctx, bucket); err != nil {
			t.Fatalf("versioned=%v: %v", versioned, err)
		}
		if err := f.be.CreateBucket(f.ctx, bucket); err != nil {
			t.Fatal(err)
		}
		if docs, err := f.st.BucketDocs(f.ctx, bucket); err != nil || len(docs) != 0 {
			t.Fatalf("versioned=%v: the new bucket has %q %v", versioned, docs, err)
		}
	}
}

// Verify checks bucket documents as it checks objects, and finds one the
// store altered.
func TestVerifyCoversBucketDocs(t *testing.T) {
	f := newFixture(t)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", []byte("alice")); err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	verify := func() {
		t.Helper()
		clear(results)
		if err := f.st.Verify(f.ctx, bucket, VerifyOptions{}, func(r VerifyResult) { results[r.Key] = r.Status }); err != nil {
			t.Fatal(err)
		}
	}
	verify()
	if st, ok := results[BucketDocPrefix+"owner"]; !ok || st != VerifyOK {
		t.Fatalf("verify of a bucket document: %v (seen %v)", st, ok)
	}
	raw, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: BucketDocPrefix + "owner"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	body[len(body)-1] ^= 1
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: BucketDocPrefix + "owner",
		Body: bytes.NewReader(body), Size: int64(len(body)), Meta: raw.Info.Meta}); err != nil {
		t.Fatal(err)
	}
	verify()
	if st := results[BucketDocPrefix+"owner"]; st == VerifyOK {
		t.Fatal("verify passed an altered bucket document")
	}
}

// uploadsRefused refuses every listing of uploads, as a store whose
// credentials may not list them does.
type uploadsRefused struct{ backend.Store }

func (uploadsRefused) ListMultipartUploads(context.Context, backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	return backend.ListUploadsOutput{}, &backend.Error{Op: "ListMultipartUploads", Code: "AccessDenied", StatusCode: 403, Message: "Access Denied"}
}

// TestOwnerlessDocumentsWhereUploadsCannotBeListed: a bucket without an
// owner is looked at for the marker of documents set aside; on a store
// that refuses to list uploads there is no marker to find, and its
// documents read as they are (none), not as the store's refusal.
func TestOwnerlessDocumentsWhereUploadsCannotBeListed(t *testing.T) {
	f := newFixture(t)
	st, err := New(Direct(uploadsRefused{f.be}), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := st.BucketDocs(f.ctx, bucket)
	if err != nil || len(docs) != 0 {
		t.Fatalf("documents of an ownerless bucket where uploads cannot be listed: %v, %v", docs, err)
	}
}
