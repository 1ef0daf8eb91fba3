package sealstore

// Review i10b (branch review-i10b): proving tests. Tests named
// TestReviewI10b* are EXPECTED TO FAIL against the current code: each
// demonstrates a finding.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// In a versioned bucket whose only client content is an old version
// behind a delete marker (S3 counts both: the bucket is not empty),
// DeleteBucket must answer BucketNotEmpty and touch nothing, as it does
// in an unversioned bucket with a client object left. Actual: it aborts
// every multipart upload in progress (and deletes upload state) before
// the backend refuses the deletion, so the client gets BucketNotEmpty
// and has lost its uploads.
func TestReviewI10bVersionedDeleteBucketAbortsUploads(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	f.put(t, "old", []byte("an old version the client keeps"))
	if err := f.st.Delete(f.ctx, bucket, "old"); err != nil { // a delete marker
		t.Fatal(err)
	}
	live := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", live, 1, randBytes(10, 2))

	err := f.st.DeleteBucket(f.ctx, bucket)
	t.Logf("DeleteBucket: %v", err)
	if backend.ErrorCode(err) != "BucketNotEmpty" {
		if se, ok := err.(*Error); !ok || se.Code != "BucketNotEmpty" {
			t.Fatalf("DeleteBucket of a bucket with a version left: %v, want BucketNotEmpty", err)
		}
	}
	if _, err := f.be.ListParts(f.ctx, backend.ListPartsInput{Bucket: bucket, Key: "inprogress", UploadID: live}); err != nil {
		t.Errorf("the client's upload after a refused DeleteBucket: %v, want it alive", err)
	}
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "inprogress", UploadID: live, PartNumber: 2,
		Body: bytes.NewReader([]byte("more")), Size: 4}); err != nil {
		t.Errorf("UploadPart after a refused DeleteBucket: %v", err)
	}
}

// A versioned bucket that ever held a multipart object can never be
// deleted through s3seal, even after the client removed every version
// and delete marker it can see: s3seal's manifest (and its upload state)
// leave versions under .s3seal/ that listings hide and CheckKey forbids
// the client to delete, and DeleteBucket only deletes them without a
// version id (making more delete markers).
func TestReviewI10bVersionedBucketNeverDeletable(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	f.completeSmall(t, "mp", randBytes(1000, 1))
	// The client removes every version and marker it can list.
	for {
		page, err := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) == 0 {
			break
		}
		for _, e := range page.Entries {
			if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: e.Key, VersionID: e.VersionID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 2; i++ {
		err := f.st.DeleteBucket(f.ctx, bucket)
		t.Logf("DeleteBucket #%d of a bucket with no client version left: %v", i+1, err)
		if err == nil {
			return
		}
	}
	t.Errorf("a versioned bucket emptied of every client version stays undeletable through s3seal")
}

// swapVersionStore answers a GET of version asked with version served
// (the same key's other, authentic version), headers included, as a
// store that rolls one version back to another, or one that ignores
// ?versionId, would.
type swapVersionStore struct {
	backend.Store
	asked, served string
}

func (s *swapVersionStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	if in.VersionID == s.asked {
		in.VersionID = s.served
	}
	return s.Store.GetObject(ctx, in)
}

// A GET of version A answered with version B of the same key (B's own
// x-amz-version-id in the answer): s3seal serves B's bytes for the
// request naming A and reports version B, without noticing that the
// answer names another version than the one asked for (a check that
// costs nothing). Expected: the answer refused (the store did not give
// the version asked for). Actual: B's bytes served.
func TestReviewI10bGetVersionServesAnotherVersion(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	a := f.put(t, "k", []byte("version A"))
	b := f.put(t, "k", []byte("version B, current"))
	st, err := New(&swapVersionStore{Store: f.be, asked: a.VersionID, served: b.VersionID}, f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	info, rd, err := st.GetVersion(f.ctx, bucket, "k", a.VersionID, nil)
	if err != nil {
		t.Logf("refused: %v", err)
		return
	}
	defer rd.Close()
	got, _ := io.ReadAll(rd)
	t.Errorf("GET version %s answered %q with version id %q; want the answer refused (another version than asked)", a.VersionID, got, info.VersionID)
}

// Held up (passes): a store that answers gc's ListObjectVersions with 200
// and an <Error> body does not make gc take "no version has its ETag" for
// certain: the SDK refuses the body and retries, and the manifest an older
// multipart version needs stays.
func TestReviewI10bHeldGCErrorInBodyListingKeepsOldVersionManifest(t *testing.T) {
	ep := startMotoLoopback(t)
	px, err := faultproxy.Start(ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	be, err := backend.NewS3(backend.S3Config{Endpoint: px.URL(), AccessKey: "a", SecretKey: "b", PathStyle: true, HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{be: &countingStore{Store: be}, ctx: t.Context()}
	key, _ := crypto.GenerateKey()
	f.kr, _ = crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	if f.st, err = New(f.be, f.kr, Options{SpoolDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := be.CreateBucket(f.ctx, bucket); err != nil {
		t.Fatal(err)
	}
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	data := randBytes(1000, 7)
	f.completeSmall(t, "k", data)
	old, err := f.st.Head(f.ctx, bucket, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Delete(f.ctx, bucket, "k"); err != nil { // a delete marker; the version stays
		t.Fatal(err)
	}
	if got, err := f.readVersion(t, "k", old.VersionID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("old version before gc: %v", err)
	}
	// Listings: #1 the completion's clean-up of its upload state, then gc's: #2 the manifests, #3 the versions of "k".
	px.Inject(faultproxy.Rule{Op: faultproxy.ListObjects, Attempt: 3, Fault: faultproxy.ErrorInBody})
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true})
	t.Logf("gc: %+v, %v", found, err)
	px.Reset()
	if got, err := f.readVersion(t, "k", old.VersionID); err != nil || !bytes.Equal(got, data) {
		t.Errorf("old multipart version after gc met a 200 <Error> listing: %v (its manifest was removed)", err)
	}
}

// protectedBucketStore refuses DeleteBucket as a store does for a bucket
// whose policy denies s3:DeleteBucket (a common guard), or when s3seal's
// backend credentials lack that permission.
type protectedBucketStore struct{ backend.Store }

func (protectedBucketStore) DeleteBucket(context.Context, string) error {
	return &backend.Error{Op: "DeleteBucket", Code: "AccessDenied", StatusCode: 403, Message: "Access Denied"}
}

// DeleteBucket of a client-empty bucket that the store refuses to delete
// (AccessDenied): the client is told AccessDenied and the bucket stays,
// but s3seal has already aborted every multipart upload in progress in it
// (and removed their state). Expected: a refused DeleteBucket leaves the
// uploads alone (S3 discards them only with the bucket). Actual: see
// the failure.
func TestReviewI10bRefusedDeleteBucketAbortsUploads(t *testing.T) {
	f := newFixture(t)
	st, err := New(protectedBucketStore{f.be}, f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
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

// racingDeleteStore lets another writer overwrite the key between
// s3seal's HEAD (condition checked) and its backend delete.
type racingDeleteStore struct {
	backend.Store
	before func()
}

func (s *racingDeleteStore) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	if s.before != nil {
		s.before()
		s.before = nil
	}
	return s.Store.(backend.Versions).DeleteObjectVersion(ctx, in)
}

// Held up (passes on moto): a conditional delete whose condition held at
// its HEAD, raced by an overwrite, fails 412 and leaves the new object,
// in an unversioned and a versioned bucket.
func TestReviewI10bHeldConditionalDeleteRace(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		f := motoFixture(t)
		if versioned {
			if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
				t.Fatal(err)
			}
		}
		old := f.put(t, "k", []byte("old"))
		rs := &racingDeleteStore{Store: f.be}
		st, err := New(rs, f.kr, Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		rs.before = func() { f.put(t, "k", []byte("new, written meanwhile")) }
		_, err = st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: &DeleteCondition{IfMatch: []string{old.ETag}, Size: -1}})
		if se, ok := err.(*Error); !ok || se.Code != "PreconditionFailed" {
			t.Errorf("versioned=%v: conditional delete raced by an overwrite: %v, want PreconditionFailed", versioned, err)
		}
		if _, got, err := f.get(t, "k", nil); err != nil || string(got) != "new, written meanwhile" {
			t.Errorf("versioned=%v: the new object after the raced delete: %q %v", versioned, got, err)
		}
	}
}

// gc keeps a manifest while a version of its key has its ETag, found by
// ListObjectVersions and compared by key. moto lists versions without
// url-encoding (no EncodingType in its answer), so a key with a carriage
// return comes back "\n" (XML end-of-line normalisation) and never equals
// the key: gc removes the manifest of the key's older multipart version,
// which is then unreadable for good. (gc goes by upload id elsewhere for
// exactly this reason.) Expected: the old version still reads after gc.
func TestReviewI10bGCDropsOldVersionManifestOfCRKey(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	const key = "cr\rkey"
	data := randBytes(1000, 9)
	f.completeSmall(t, key, data)
	old, err := f.st.Head(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	f.put(t, key, []byte("a newer version")) // the multipart version is now noncurrent
	if got, err := f.readVersion(t, key, old.VersionID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("old version before gc: %v", err)
	}
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true})
	for _, g := range found {
		t.Logf("gc: %s %q (%s) removed=%v", g.Kind, g.Key, g.Reason, g.Removed)
	}
	if err != nil {
		t.Logf("gc error: %v", err)
	}
	// A fresh s3seal (another process, or after a restart): no cached manifest.
	st2, err := New(f.be, f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, rd, err := st2.GetVersion(f.ctx, bucket, key, old.VersionID, nil)
	if err == nil {
		got, rerr := io.ReadAll(rd)
		rd.Close()
		if rerr == nil && bytes.Equal(got, data) {
			return
		}
		err = rerr
	}
	t.Errorf("old multipart version of %q after gc, read by a fresh s3seal: %v", key, err)
}
