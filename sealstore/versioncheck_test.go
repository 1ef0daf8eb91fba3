package sealstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// swapAllStore answers every read of version asked (GET and HEAD) with
// version served, as a store that ignores ?versionId would.
type swapAllStore struct {
	swapVersionStore
}

func (s *swapAllStore) HeadObjectVersion(ctx context.Context, bucket, key, versionID string) (backend.ObjectInfo, error) {
	if versionID == s.asked {
		versionID = s.served
	}
	return s.Store.(backend.Versions).HeadObjectVersion(ctx, bucket, key, versionID)
}

// Every read by version (HEAD, whole and ranged GET, copy source) refuses
// an answer that names another version as a store fault; the current
// version and version B itself still read.
func TestVersionMismatchRefused(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	a := f.put(t, "k", []byte("version A"))
	b := f.put(t, "k", []byte("version B, current"))
	sw := &swapAllStore{swapVersionStore{Store: f.be, asked: a.VersionID, served: b.VersionID}}
	st, err := New(Direct(sw), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		var se *Error
		if !errors.As(err, &se) || se.Code != "InternalError" || !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s of version A answered with version B: %v, want InternalError (integrity)", what, err)
		}
	}
	_, err = st.HeadVersion(f.ctx, bucket, "k", a.VersionID)
	refused("HEAD", err)
	_, _, err = st.Attributes(f.ctx, bucket, "k", a.VersionID, nil)
	refused("GetObjectAttributes", err)
	for _, rng := range []*Range{nil, {First: 0, Last: 3}} {
		_, rd, err := st.GetVersion(f.ctx, bucket, "k", a.VersionID, rng)
		if rd != nil {
			rd.Close()
		}
		refused("GET", err)
	}
	_, err = st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "k", SrcVersionID: a.VersionID, Bucket: bucket, Key: "copy"})
	refused("copy", err)
	if _, err := f.be.HeadObject(f.ctx, bucket, "copy"); !backend.IsNotFound(err) {
		t.Errorf("the refused copy wrote its destination: %v", err)
	}
	_, rd, err := st.GetVersion(f.ctx, bucket, "k", b.VersionID, nil)
	if err != nil {
		t.Fatalf("GET of version B: %v", err)
	}
	got, _ := io.ReadAll(rd)
	rd.Close()
	if !bytes.Equal(got, []byte("version B, current")) {
		t.Errorf("version B: %q", got)
	}
}

// echolessStore ignores ?versionId on GET and HEAD and names no version in
// its answers, as a store (or proxy) that drops both would.
type echolessStore struct {
	backend.Store
}

func (s *echolessStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	in.VersionID = ""
	obj, err := s.Store.GetObject(ctx, in)
	if err == nil {
		obj.Info.VersionID = ""
	}
	return obj, err
}

func (s *echolessStore) HeadObjectVersion(ctx context.Context, bucket, key, versionID string) (backend.ObjectInfo, error) {
	bi, err := s.Store.HeadObject(ctx, bucket, key)
	bi.VersionID = ""
	return bi, err
}

// A read by version id answered by the current version with no version id
// named is refused like one naming another version: HEAD, whole and
// ranged GET, copy and part-copy sources.
func TestVersionNotEchoedRefused(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	a := f.put(t, "k", []byte("version A"))
	f.put(t, "k", []byte("version B, current"))
	st, err := New(Direct(&echolessStore{f.be}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		var se *Error
		if !errors.As(err, &se) || se.Code != "InternalError" || !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s of version A answered with no version id: %v, want InternalError (integrity)", what, err)
		}
	}
	_, err = st.HeadVersion(f.ctx, bucket, "k", a.VersionID)
	refused("HEAD", err)
	for _, rng := range []*Range{nil, {First: 0, Last: 3}} {
		_, rd, err := st.GetVersion(f.ctx, bucket, "k", a.VersionID, rng)
		if rd != nil {
			rd.Close()
		}
		refused("GET", err)
	}
	_, err = st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "k", SrcVersionID: a.VersionID, Bucket: bucket, Key: "copy"})
	refused("copy", err)
	if _, err := f.be.HeadObject(f.ctx, bucket, "copy"); !backend.IsNotFound(err) {
		t.Errorf("the refused copy wrote its destination: %v", err)
	}
	id := f.create(t, "dst")
	_, err = st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "k", SrcVersionID: a.VersionID,
		Bucket: bucket, Key: "dst", UploadID: id, PartNumber: 1})
	refused("part copy", err)
	// The current object still reads through such a store.
	if _, got, err := f.getWith(st, "k"); err != nil || string(got) != "version B, current" {
		t.Errorf("current version: %q, %v", got, err)
	}
}

// Only the "null" version may be answered without a version id.
func TestCheckVersionNull(t *testing.T) {
	for _, c := range []struct {
		asked, got string
		ok         bool
	}{{"", "", true}, {"", "v1", true}, {"v1", "v1", true}, {"null", "", true}, {"null", "null", true},
		{"v1", "", false}, {"v1", "v2", false}, {"null", "v1", false}} {
		if err := checkVersion("b", "k", c.asked, c.got); (err == nil) != c.ok {
			t.Errorf("checkVersion(asked %q, got %q) = %v, want ok %v", c.asked, c.got, err, c.ok)
		}
	}
}
