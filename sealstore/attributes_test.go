package sealstore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// TestLongPartChecksumsAndAttributes: a part whose checksum is long
// (SHA-512's 88 characters) makes a record longer than one key segment on
// the embedded store (255 bytes); its key is cut into segments, and the
// upload lists and completes with it. Attributes then gives every part's
// size and checksum from the manifest, also once the manifest is cached
// (the cache drops per-part checksums).
func TestLongPartChecksumsAndAttributes(t *testing.T) {
	f := newFixture(t)
	key := "long/checksums"
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key, ChecksumAlgorithm: "sha512", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	datas := [][]byte{bytes.Repeat([]byte("x"), 5*mib), []byte("tail")}
	sums := []string{longChecksum("sha512", datas[0]), longChecksum("sha512", datas[1])}
	var parts []CompletePart
	for i, d := range datas {
		sum := sums[i]
		pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: i + 1,
			Body: bytes.NewReader(d), Size: int64(len(d)),
			Finalize: func() (map[string]string, error) { return map[string]string{"sha512": sum}, nil }})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, CompletePart{PartNumber: i + 1, ETag: `"` + pi.ETag + `"`})
	}
	for _, k := range f.reservedKeys(t, uploadsPrefix) {
		if len(k) > maxRecordKey {
			t.Fatalf("state key of %d bytes: %s", len(k), k)
		}
	}
	page, err := f.st.ListParts(f.ctx, bucket, key, id, 0, 1000)
	if err != nil || len(page.Parts) != 2 || page.Parts[0].Checksums["sha512"] != sums[0] || page.Parts[1].Checksums["sha512"] != sums[1] {
		t.Fatalf("ListParts: %+v, %v", page, err)
	}
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: key, UploadID: id, Parts: parts, ExpectSize: -1}); err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // the second reads the cached manifest
		info, got, err := f.st.Attributes(f.ctx, bucket, key, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != int64(5*mib+4) || len(got) != 2 {
			t.Fatalf("round %d: size %d, parts %+v", round, info.Size, got)
		}
		for i, p := range got {
			if p.PartNumber != i+1 || p.Size != int64(len(datas[i])) || p.Checksums["sha512"] != sums[i] {
				t.Fatalf("round %d: part %d = %+v", round, i+1, p)
			}
		}
	}
	if _, got, err := f.st.Attributes(f.ctx, bucket, key+"-none", "", nil); err == nil || got != nil {
		t.Fatalf("missing object: %v %v", got, err)
	}
}

// TestAttributesOfVersion: Attributes by version id describes that
// version (its own size, ETag and id), not the current one; without an id
// it describes the current version and names it; a delete marker asked for
// by id is the backend's delete-marker error.
func TestAttributesOfVersion(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	v1 := f.put(t, "k", []byte("one"))
	v2 := f.put(t, "k", []byte("twotwo"))
	for _, c := range []struct {
		vid, want string
		size      int64
	}{{v1.VersionID, v1.VersionID, 3}, {v2.VersionID, v2.VersionID, 6}, {"", v2.VersionID, 6}} {
		info, parts, err := f.st.Attributes(f.ctx, bucket, "k", c.vid, nil)
		if err != nil {
			t.Fatalf("version %q: %v", c.vid, err)
		}
		if info.Size != c.size || info.VersionID != c.want || parts != nil {
			t.Errorf("version %q: size %d id %q parts %v, want %d %q nil", c.vid, info.Size, info.VersionID, parts, c.size, c.want)
		}
	}
	del, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k"})
	if err != nil || !del.DeleteMarker {
		t.Fatalf("delete: %+v %v", del, err)
	}
	var be *backend.Error
	if _, _, err := f.st.Attributes(f.ctx, bucket, "k", del.VersionID, nil); !errors.As(err, &be) || !(be.DeleteMarker || be.Code == "MethodNotAllowed") {
		t.Errorf("attributes of the delete marker: %v, want the backend's delete-marker error", err)
	}
}
