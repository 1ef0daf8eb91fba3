package sealstore

// Review I10c: proving tests. They FAIL on purpose while the finding stands.

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestReviewI10cRewrapByPartsSharedManifestDelete (FAILS on purpose):
// a multipart object whose backend parts the rewrap's copy by parts cuts
// the same way (here one part, below copyPartSize; in production parts of
// exactly 1 GiB) keeps its backend ETag, so rewrapManifest copies nothing
// and the old and the new version share one manifest key. Deleting the
// new version by id then drops that manifest (a delete marker in a
// versioned bucket): the older version, current again, no longer reads.
func TestReviewI10cRewrapByPartsSharedManifestDelete(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	f.st, _ = New(f.be, both, Options{SpoolDir: t.TempDir()})
	data := randBytes(70000, 91)
	f.completeSmall(t, "mp", data)
	before, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", NoWriters: true, MaxCopySize: 1000}, func(r RewrapResult) {
		if r.Status != RewrapDone {
			t.Errorf("rewrap %+v", r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	after, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backend ETag before %s after %s; versions %s -> %s", before.ETag, after.ETag, before.VersionID, after.VersionID)
	if after.VersionID == before.VersionID {
		t.Fatal("rewrap made no new version")
	}
	// Undo the rewrap: delete the new version by id (what an admin does
	// to go back to the version before).
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "mp", VersionID: after.VersionID}); err != nil {
		t.Fatal(err)
	}
	f.st, _ = New(f.be, both, Options{SpoolDir: t.TempDir()}) // nothing cached
	got, err := f.readVersion(t, "mp", before.VersionID)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("FINDING: the version before the rewrap no longer reads after the rewrapped version was deleted: %d bytes, %v", len(got), err)
	}
}

// lockRaceStore runs hook once, just before the first CopyObject onto
// the same key (the rewrap's single copy), as a client's request landing
// between the rewrap's HEAD and its copy.
type lockRaceStore struct {
	backend.Store
	hook func(ctx context.Context)
	done bool
}

func (s *lockRaceStore) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	if !s.done && in.SrcKey == in.Key && !strings.HasPrefix(in.Key, ReservedPrefix) {
		s.done = true
		s.hook(ctx)
	}
	// Honour the source ETag condition as S3 does (moto ignores it), so
	// that Rewrap runs in its default mode (writers allowed).
	if in.SrcIfMatch != "" {
		bi, err := s.Store.HeadObject(ctx, in.SrcBucket, in.SrcKey)
		if err != nil {
			return backend.CopyOutput{}, err
		}
		if strings.Trim(bi.ETag, `"`) != strings.Trim(in.SrcIfMatch, `"`) {
			return backend.CopyOutput{}, &backend.Error{Code: "PreconditionFailed", StatusCode: 412}
		}
	}
	return s.Store.CopyObject(ctx, in)
}

func (s *lockRaceStore) etagIs(ctx context.Context, bucket, key, etag string) error {
	bi, err := s.Store.HeadObject(ctx, bucket, key)
	if err != nil {
		return err
	}
	if strings.Trim(bi.ETag, `"`) != strings.Trim(etag, `"`) {
		return &backend.Error{Code: "PreconditionFailed", StatusCode: 412}
	}
	return nil
}

func (s *lockRaceStore) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (string, error) {
	if in.SrcIfMatch != "" {
		if err := s.etagIs(ctx, in.SrcBucket, in.SrcKey, in.SrcIfMatch); err != nil {
			return "", err
		}
	}
	return s.Store.UploadPartCopy(ctx, in)
}

func (s *lockRaceStore) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if in.IfMatch != "" {
		if err := s.etagIs(ctx, in.Bucket, in.Key, in.IfMatch); err != nil {
			return backend.CompleteMultipartOutput{}, err
		}
	}
	return s.Store.CompleteMultipartUpload(ctx, in)
}

// TestReviewI10cRewrapLosesConcurrentLock (FAILS on purpose): a client
// extends an object's retention and puts a legal hold on it (both 200)
// while rewrap runs; rewrap's CopyObject carries the lock its HEAD read
// before, so the new current version has the shorter retention and no
// legal hold. The copy is conditional on the ETag only, which a lock
// change does not move.
func TestReviewI10cRewrapLosesConcurrentLock(t *testing.T) {
	ep := startMotoLoopback(t)
	s3be, err := backend.NewS3(backend.S3Config{Endpoint: ep, AccessKey: "a", SecretKey: "b", PathStyle: true, HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s3be.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{},
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}}); err != nil {
		t.Fatal(err)
	}
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": mustKey(t), "k2": mustKey(t)})
	short := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	long := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	rs := &lockRaceStore{Store: s3be}
	rs.hook = func(ctx context.Context) {
		body := `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>` + long.Format(time.RFC3339) + `</RetainUntilDate></Retention>`
		if _, err := s3be.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Key: "obj",
			Query: url.Values{"retention": {""}}, Header: http.Header{}, Body: []byte(body)}); err != nil {
			t.Errorf("client's retention: %v", err)
		}
		if _, err := s3be.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Key: "obj",
			Query: url.Values{"legal-hold": {""}}, Header: http.Header{}, Body: []byte(`<LegalHold><Status>ON</Status></LegalHold>`)}); err != nil {
			t.Errorf("client's legal hold: %v", err)
		}
	}
	st, err := New(rs, kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(1000, 7)
	if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: "obj", Body: bytes.NewReader(data), Size: int64(len(data)),
		Protect: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: short}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2", MaxCopySize: 5 << 20}, func(r RewrapResult) {
		if r.Status != RewrapDone {
			t.Errorf("rewrap %+v", r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !rs.done {
		t.Fatal("hook not run")
	}
	bi, err := s3be.HeadObject(ctx, bucket, "obj")
	if err != nil {
		t.Fatal(err)
	}
	if !bi.Lock.RetainUntil.Equal(long) || bi.Lock.LegalHold != "ON" {
		t.Fatalf("FINDING: after the rewrap the current version's lock is %+v; the client had set retention until %v and a legal hold ON (both answered 200) during the rewrap", bi.Lock, long)
	}
}

// TestReviewI10cDeleteBucketAbortsUploadsThenFails (FAILS on purpose): in
// a bucket with Object Lock and a default retention (which locks s3seal's
// upload state too, DESIGN), holding no client object but another
// client's upload in progress, DeleteBucket aborts every upload first,
// then cannot remove the locked upload state and answers with the
// backend's refusal: the bucket stays, and the upload in progress is
// destroyed by a request that failed. S3's DeleteBucket either deletes
// the bucket or changes nothing.
func TestReviewI10cDeleteBucketAbortsUploadsThenFails(t *testing.T) {
	f := motoFixture(t)
	s3be := f.be.Store.(*backend.S3)
	const lb = "worm"
	if _, err := s3be.Forward(f.ctx, backend.RawRequest{Method: http.MethodPut, Bucket: lb, Query: url.Values{},
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}}); err != nil {
		t.Fatal(err)
	}
	cfg := `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	if _, err := s3be.Forward(f.ctx, backend.RawRequest{Method: http.MethodPut, Bucket: lb, Query: url.Values{"object-lock": {""}},
		Header: http.Header{}, Body: []byte(cfg)}); err != nil {
		t.Fatal(err)
	}
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: lb, Key: "big-backup"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: lb, Key: "big-backup", UploadID: id, PartNumber: 1,
		Body: strings.NewReader("part one"), Size: 8}); err != nil {
		t.Fatal(err)
	}
	derr := f.st.DeleteBucket(f.ctx, lb)
	t.Logf("DeleteBucket: %v", derr)
	if derr == nil {
		t.Skip("the store deleted the bucket (no default retention on the upload state here)")
	}
	if err := s3be.HeadBucket(f.ctx, lb); err != nil {
		t.Fatalf("bucket gone after a failed DeleteBucket? %v", err)
	}
	if _, err := f.st.ListParts(f.ctx, lb, "big-backup", id, 0, 1000); err != nil {
		t.Fatalf("FINDING: DeleteBucket failed (%v) and the bucket stays, but the upload in progress was aborted: ListParts: %v", derr, err)
	}
}

// TestReviewI10cSecondRewrapSharesManifest (FAILS on purpose): in a
// versioned bucket a multipart object rewrapped twice by the ordinary
// single CopyObject (any object up to 5 GiB) gets the same backend ETag
// both times (the MD5 of the unchanged ciphertext), so the second run's
// rewrapManifest sees newETag == oldETag and copies nothing: the versions
// of the two runs share one manifest version. Deleting the noncurrent
// versions by id (cleaning up versions under the retired keys) drops
// that manifest too, and the CURRENT version no longer reads.
func TestReviewI10cSecondRewrapSharesManifest(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	keys := map[string][]byte{"k1": mustKey(t), "k2": mustKey(t), "k3": mustKey(t)}
	kr, _ := crypto.NewKeyring("k1", keys)
	f.st, _ = New(f.be, kr, Options{SpoolDir: t.TempDir()})
	data := randBytes(70000, 92)
	f.completeSmall(t, "mp", data)
	first, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	var vids []string
	for _, to := range []string{"k2", "k3"} {
		if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: to, NoWriters: true}, func(r RewrapResult) {
			if r.Status != RewrapDone {
				t.Errorf("rewrap to %s: %+v", to, r)
			}
		}); err != nil {
			t.Fatal(err)
		}
		bi, err := f.be.HeadObject(f.ctx, bucket, "mp")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after rewrap to %s: version %s backend ETag %s", to, bi.VersionID, bi.ETag)
		vids = append(vids, bi.VersionID)
	}
	// Remove the noncurrent versions, under the retired keys k1 and k2.
	for _, vid := range []string{first.VersionID, vids[0]} {
		if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "mp", VersionID: vid}); err != nil {
			t.Fatal(err)
		}
	}
	f.st, _ = New(f.be, kr, Options{SpoolDir: t.TempDir()}) // nothing cached
	_, got, err := f.get(t, "mp", nil)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("FINDING: after deleting the noncurrent versions, the current version %s no longer reads: %d bytes, %v", vids[1], len(got), err)
	}
}
