package sealstore

import (
	"bytes"
	"errors"
	"maps"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// An upload's checksum algorithm and type, and its id, are sealed in its
// state: a hostile store that edits the plain entries, moves one upload's
// state over another's cannot change what s3seal acts on. A state without
// sealed settings is an earlier release's, read from its plain entries.
func TestUploadSettingsSealed(t *testing.T) {
	f := newFixture(t)
	info := func(key, id string) string { return uploadPrefix(bucket, key, id) + infoName }
	stateMeta := func(key, id string) map[string]string {
		t.Helper()
		bi, err := f.be.Store.HeadObject(f.ctx, bucket, info(key, id))
		if err != nil {
			t.Fatal(err)
		}
		return bi.Meta
	}
	putState := func(key, id string, meta map[string]string) {
		t.Helper()
		if _, err := f.be.Store.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: info(key, id), Body: bytes.NewReader(nil), Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
	// read is what a process that has not cached the upload reads.
	read := func(key, id string) (*upload, error) {
		fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return fresh.loadUpload(f.ctx, bucket, key, id)
	}
	create := func(key, alg, typ string) string {
		t.Helper()
		id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key, ChecksumAlgorithm: alg, ChecksumType: typ})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sha := create("k", "sha256", "COMPOSITE")
	none := create("k", "", "")
	if u, err := read("k", sha); err != nil || u.checksumAlg != "sha256" || u.checksumType != "COMPOSITE" {
		t.Fatalf("untouched state: %+v, %v", u, err)
	}

	// Plain entries changed: the sealed settings win.
	m := stateMeta("k", none)
	m[metaChecksumAlg], m[metaChecksumType] = "crc32", "COMPOSITE"
	putState("k", none, m)
	if u, err := read("k", none); err != nil || u.checksumAlg != "" || u.checksumType != "" {
		t.Errorf("plain entries added by the store: %q %q, %v", u.checksumAlg, u.checksumType, err)
	}
	m = stateMeta("k", sha)
	delete(m, metaChecksumAlg)
	delete(m, metaChecksumType)
	putState("k", sha, m)
	if u, err := read("k", sha); err != nil || u.checksumAlg != "sha256" {
		t.Errorf("plain entries removed by the store: %+v, %v", u, err)
	}

	// Another upload's state (same key, so the same name binding).
	other := create("k", "", "")
	third := create("k", "", "")
	putState("k", other, stateMeta("k", sha))
	if _, err := read("k", other); !errors.Is(err, ErrIntegrity) {
		t.Errorf("another upload's state: %v, want an integrity failure", err)
	}

	// Sealed settings stripped: read as an earlier release's state, from
	// its plain entries, when they name this upload (FORMAT.md says what
	// that leaves the store); another upload's is refused.
	m = stateMeta("k", none)
	delete(m, metaSettings)
	delete(m, metaChecksumAlg) // what the store added above
	delete(m, metaChecksumType)
	putState("k", none, maps.Clone(m))
	if u, err := read("k", none); err != nil || u.checksumAlg != "" {
		t.Errorf("an earlier release's state without an algorithm: %+v, %v", u, err)
	}
	m[metaChecksumAlg], m[metaChecksumType] = "crc32", "COMPOSITE"
	putState("k", none, maps.Clone(m))
	if u, err := read("k", none); err != nil || u.checksumAlg != "crc32" || u.checksumType != "COMPOSITE" {
		t.Errorf("an earlier release's state with an algorithm: %+v, %v", u, err)
	}
	m = stateMeta("k", sha)
	delete(m, metaSettings)
	putState("k", third, m)
	if _, err := read("k", third); !errors.Is(err, ErrIntegrity) {
		t.Errorf("another upload's state, its sealed settings stripped: %v, want an integrity failure", err)
	}

	// Settings sealed for another object do not open.
	m = stateMeta("k", none)
	m[metaSettings] = stateMeta("k", sha)[metaSettings]
	putState("k", none, m)
	if _, err := read("k", none); !errors.Is(err, ErrIntegrity) {
		t.Errorf("another upload's sealed settings: %v, want an integrity failure", err)
	}
}
