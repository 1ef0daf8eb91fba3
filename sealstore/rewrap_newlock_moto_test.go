package sealstore

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
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
	s3be := motoS3(t)
	ctx := t.Context()
	createLockBucket(ctx, t, s3be, bucket)
	kr := rotationKeyring(t)
	short := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	long := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	rs := &partLockRaceStore{lockRaceStore: &lockRaceStore{Store: s3be, done: true}}
	rs.partHook = func(ctx context.Context) {
		if err := s3be.PutObjectLock(ctx, backend.ObjectLockInput{Bucket: bucket, Key: "obj", Retention: true, LegalHold: true,
			Lock: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: long, LegalHold: "OFF"}}); err != nil {
			t.Errorf("client's lock change: %v", err)
		}
	}
	st, err := New(Direct(rs), kr, Options{SpoolDir: t.TempDir()})
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
	s3be := motoS3(t)
	ctx := t.Context()
	createLockBucket(ctx, t, s3be, bucket)
	kr := rotationKeyring(t)
	until := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	rs := &lockRaceStore{Store: s3be}
	rs.hook = func(ctx context.Context) {
		if err := s3be.PutObjectLock(ctx, backend.ObjectLockInput{Bucket: bucket, Key: "mp", Retention: true, LegalHold: true,
			Lock: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: until, LegalHold: "ON"}}); err != nil {
			t.Errorf("client's lock: %v", err)
		}
	}
	st, err := New(Direct(rs), kr, Options{SpoolDir: t.TempDir()})
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

// TestRewrapKeepsConcurrentLock: a client extends an object's retention and
// puts a legal hold on it (both answered 200) while rewrap runs, between
// its HEAD and its CopyObject (conditional on the ETag only, which a lock
// change does not move); the new current version has the longer retention
// and the legal hold all the same.
func TestRewrapKeepsConcurrentLock(t *testing.T) {
	s3be := motoS3(t)
	ctx := t.Context()
	createLockBucket(ctx, t, s3be, bucket)
	kr := rotationKeyring(t)
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
	st, err := New(Direct(rs), kr, Options{SpoolDir: t.TempDir()})
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
		t.Fatalf("after the rewrap the current version's lock is %+v; the client had set retention until %v and a legal hold ON (both answered 200) during the rewrap", bi.Lock, long)
	}
}
