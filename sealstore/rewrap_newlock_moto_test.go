package sealstore

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// partLockRaceStore runs hook once, before the first UploadPartCopy of a
// rewrap's copy by parts: a client's lock change landing between the
// rewrap's HEAD and its copy.
type partLockRaceStore struct {
	*lockRaceStore
	partHook func(ctx context.Context)
	ran      bool
}

func (s *partLockRaceStore) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (string, error) {
	if !s.ran && in.Key == "obj" {
		s.ran = true
		s.partHook(ctx)
	}
	return s.lockRaceStore.UploadPartCopy(ctx, in)
}

// TestRewrapByPartsKeepsNewerLock: the copy by parts carries the lock of
// the rewrap's HEAD; a retention extended and a legal hold taken off
// meanwhile end up on the new current version all the same.
func TestRewrapByPartsKeepsNewerLock(t *testing.T) {
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
	long := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	rs := &partLockRaceStore{lockRaceStore: &lockRaceStore{Store: s3be, done: true}}
	rs.partHook = func(ctx context.Context) {
		if err := s3be.PutObjectLock(ctx, backend.ObjectLockInput{Bucket: bucket, Key: "obj", Retention: true, LegalHold: true,
			Lock: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: long, LegalHold: "OFF"}}); err != nil {
			t.Errorf("client's lock change: %v", err)
		}
	}
	st, err := New(rs, kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(3000, 9)
	if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: "obj", Body: bytes.NewReader(data), Size: int64(len(data)),
		Protect: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: short, LegalHold: "ON"}}); err != nil {
		t.Fatal(err)
	}
	old, err := s3be.HeadObject(ctx, bucket, "obj")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2", MaxCopySize: 1024}, func(r RewrapResult) {
		if r.Status != RewrapDone {
			t.Errorf("rewrap %+v", r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !rs.ran {
		t.Fatal("hook not run: no copy by parts")
	}
	bi, err := s3be.HeadObject(ctx, bucket, "obj")
	if err != nil {
		t.Fatal(err)
	}
	if bi.VersionID == old.VersionID {
		t.Fatal("no new version")
	}
	if bi.Lock.LockMode != "GOVERNANCE" || !bi.Lock.RetainUntil.Equal(long) || bi.Lock.LegalHold == "ON" {
		t.Fatalf("the new version's lock is %+v; the client had set retention until %v and the legal hold OFF during the rewrap", bi.Lock, long)
	}
}

// TestRewrapMultipartManifestKeepsNewerLock: for a multipart object, the
// lock a client set during the rewrap reaches the new version's manifest
// too (the manifest is copied after the new version got it).
func TestRewrapMultipartManifestKeepsNewerLock(t *testing.T) {
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
	until := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	rs := &lockRaceStore{Store: s3be}
	rs.hook = func(ctx context.Context) {
		if err := s3be.PutObjectLock(ctx, backend.ObjectLockInput{Bucket: bucket, Key: "mp", Retention: true, LegalHold: true,
			Lock: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: until, LegalHold: "ON"}}); err != nil {
			t.Errorf("client's lock: %v", err)
		}
	}
	st, err := New(rs, kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateMultipart(ctx, CreateMultipartInput{Bucket: bucket, Key: "mp"})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(5000, 3)
	pi, err := st.UploadPart(ctx, UploadPartInput{Bucket: bucket, Key: "mp", UploadID: id, PartNumber: 1, Body: bytes.NewReader(data), Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CompleteMultipart(ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1}, []string{pi.ETag})}); err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) {
		if r.Status != RewrapDone {
			t.Errorf("rewrap %+v", r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !rs.done {
		t.Fatal("hook not run")
	}
	mkey, vid, err := st.ManifestOf(ctx, bucket, "mp", "")
	if err != nil || mkey == "" {
		t.Fatalf("ManifestOf = %q, %v", mkey, err)
	}
	for _, k := range []string{"mp", mkey} {
		v := ""
		if k == "mp" {
			v = vid
		}
		bi, err := s3be.HeadObjectVersion(ctx, bucket, k, v)
		if err != nil {
			t.Fatal(err)
		}
		if bi.Lock.LockMode != "GOVERNANCE" || !bi.Lock.RetainUntil.Equal(until) || bi.Lock.LegalHold != "ON" {
			t.Errorf("%s: lock %+v after the rewrap; the client had set GOVERNANCE until %v and a legal hold during it", k, bi.Lock, until)
		}
	}
}
