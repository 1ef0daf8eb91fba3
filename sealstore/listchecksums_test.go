package sealstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// List gives each object's kept checksums (none for an object without),
// from the cache its PUT or completion filled and, on a fresh store, from
// the same HEAD (and manifest) the size and ETag come from: one HEAD per
// object, nothing more.
func TestListCarriesChecksums(t *testing.T) { listCarriesChecksums(t, newFixture(t)) }

func TestListCarriesChecksumsOnMoto(t *testing.T) { listCarriesChecksums(t, motoFixture(t)) }

func listCarriesChecksums(t *testing.T, f *fixture) {
	want := map[string]map[string]string{
		"crc32":  {"crc32": "AAAAAA=="},
		"sha256": {"sha256": strings.Repeat("B", 43) + "="},
		"none":   nil,
	}
	for key, cs := range want {
		in := PutInput{Bucket: bucket, Key: key, Body: strings.NewReader(key), Size: int64(len(key))}
		if cs != nil {
			in.Finalize = func() (map[string]string, error) { return cs, nil }
		}
		if _, err := f.st.Put(f.ctx, in); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	// A multipart object with a COMPOSITE SHA-256: the SHA-256 of the
	// parts' SHA-256 digests, then "-2".
	const mp = "multipart"
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: mp, ChecksumAlgorithm: "sha256", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	var parts []CompletePart
	ofSums := sha256.New()
	for i, d := range [][]byte{bytes.Repeat([]byte("x"), MinPartSize), []byte("tail")} {
		digest := sha256.Sum256(d)
		ofSums.Write(digest[:])
		sum := base64.StdEncoding.EncodeToString(digest[:])
		pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: mp, UploadID: id, PartNumber: i + 1,
			Body: bytes.NewReader(d), Size: int64(len(d)),
			Finalize: func() (map[string]string, error) { return map[string]string{"sha256": sum}, nil }})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, CompletePart{PartNumber: i + 1, ETag: `"` + pi.ETag + `"`})
	}
	composite := base64.StdEncoding.EncodeToString(ofSums.Sum(nil)) + "-2"
	info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: mp, UploadID: id, Parts: parts, ExpectSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	if info.Checksums["sha256"] != composite {
		t.Fatalf("completed multipart checksums %v, want a COMPOSITE sha256", info.Checksums)
	}
	want[mp] = info.Checksums

	check := func(st *Store, what string) {
		t.Helper()
		page, err := st.List(f.ctx, backend.ListInput{Bucket: bucket, MaxKeys: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != len(want) {
			t.Fatalf("%s: listed %d entries, want %d", what, len(page.Entries), len(want))
		}
		for _, e := range page.Entries {
			if !reflect.DeepEqual(e.Checksums, want[e.Key]) {
				t.Errorf("%s: %s lists checksums %v, want %v", what, e.Key, e.Checksums, want[e.Key])
			}
		}
	}
	before := f.be.heads.Load()
	check(f.st, "cached")
	if n := f.be.heads.Load() - before; n != 0 {
		t.Errorf("cached listing issued %d HEADs, want 0", n)
	}
	fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	before = f.be.heads.Load()
	check(fresh, "fresh")
	if n := f.be.heads.Load() - before; n != int64(len(want)) {
		t.Errorf("fresh listing issued %d HEADs, want %d (one per object)", n, len(want))
	}
	before = f.be.heads.Load()
	check(fresh, "fresh, cached")
	if n := f.be.heads.Load() - before; n != 0 {
		t.Errorf("second fresh listing issued %d HEADs, want 0", n)
	}
}

// UploadChecksums gives each upload's algorithm and type as its state has
// them: none for an upload created without, or without s3seal state, or
// whose state fails its check. A fresh store HEADs each state object once.
func TestUploadChecksums(t *testing.T) { uploadChecksums(t, newFixture(t)) }

func TestUploadChecksumsOnMoto(t *testing.T) { uploadChecksums(t, motoFixture(t)) }

func uploadChecksums(t *testing.T, f *fixture) {
	want := map[string]UploadChecksum{
		"a-crc32":     {"crc32", "COMPOSITE"},
		"b-crc64nvme": {"crc64nvme", "FULL_OBJECT"},
		"c-xxhash128": {"xxhash128", "COMPOSITE"},
		"d-none":      {},
	}
	for key, c := range want {
		if _, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key,
			ChecksumAlgorithm: c.Algorithm, ChecksumType: c.Type}); err != nil {
			t.Fatal(err)
		}
	}
	// Made on the backend directly: no state.
	if _, err := f.be.CreateMultipartUpload(f.ctx, backend.CreateMultipartInput{Bucket: bucket, Key: "e-stateless"}); err != nil {
		t.Fatal(err)
	}
	want["e-stateless"] = UploadChecksum{}
	// State that fails its check (no envelope).
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "f-tampered", ChecksumAlgorithm: "sha1", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: uploadPrefix(bucket, "f-tampered", id) + infoName,
		Body: bytes.NewReader(nil), Meta: map[string]string{metaChecksumAlg: "sha1", metaChecksumType: "COMPOSITE"}}); err != nil {
		t.Fatal(err)
	}
	want["f-tampered"] = UploadChecksum{}

	fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := fresh.ListUploads(f.ctx, backend.ListUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != len(want) {
		t.Fatalf("listed %d uploads, want %d: %+v", len(out.Uploads), len(want), out.Uploads)
	}
	for round := range 2 { // HEADs of the state objects, then the cache
		before := f.be.heads.Load()
		sums, err := fresh.UploadChecksums(f.ctx, bucket, out.Uploads)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range out.Uploads {
			if sums[i] != want[u.Key] {
				t.Errorf("round %d: %s: %+v, want %+v", round, u.Key, sums[i], want[u.Key])
			}
		}
		// The stateless and tampered uploads are not cached: HEADed each time.
		wantHeads := int64(2)
		if round == 0 {
			wantHeads = int64(len(want))
		}
		if n := f.be.heads.Load() - before; n != wantHeads {
			t.Errorf("round %d: %d HEADs, want %d", round, n, wantHeads)
		}
	}
}
