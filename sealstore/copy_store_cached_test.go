package sealstore

import (
	"bytes"
	"testing"

	"github.com/s3seal/s3seal/checksum"
)

// crcPart uploads a part with its CRC64NVME, as the S3 API layer
// computes it for a part the client sent without another checksum.
func (f *fixture) crcPart(t *testing.T, st *Store, key, id string, n int, data []byte) PartInfo {
	t.Helper()
	h := checksum.NewHasher(checksum.CRC64NVME)
	pi, err := st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: n,
		Body: bytes.NewReader(data), Size: int64(len(data)), Observe: h,
		Finalize: func() (map[string]string, error) { return map[string]string{"crc64nvme": h.Base64()}, nil }})
	if err != nil {
		t.Fatalf("part %d: %v", n, err)
	}
	return pi
}

// A multipart object that this very process completed (or read: its
// manifest is then in the manifest cache, which keeps no per-part
// checksums) is still copied by the store, with its checksum: a copy that
// moves no bytes must not depend on whether the source's manifest was
// cached.
func TestCopyOfCachedMultipartMovesNoBytes(t *testing.T) {
	f := newFixture(t)
	st, bs := countBytes(t, f)
	p1, p2 := randBytes(MinPartSize+3, 51), randBytes(100<<10, 52)
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp"})
	if err != nil {
		t.Fatal(err)
	}
	e1, e2 := f.crcPart(t, st, "mp", id, 1, p1).ETag, f.crcPart(t, st, "mp", id, 2, p2).ETag
	src, err := st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1, e2}), ExpectSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Checksums) == 0 {
		t.Fatal("the source has no checksum")
	}
	bs.moved()
	info, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "mp", Bucket: bucket, Key: "mpcopy"})
	if err != nil {
		t.Fatal(err)
	}
	if n := bs.moved(); n != 0 {
		t.Errorf("the copy of a multipart object this process completed moved %d object bytes through s3seal", n)
	}
	if info.ETag != src.ETag {
		t.Errorf("copy ETag %s, source %s", info.ETag, src.ETag)
	}
}

// An UploadPartCopy of a whole part of a multipart source whose manifest
// is cached gives the part the part's CRC64NVME, as it does when the
// manifest is read from the store: the completed object has a checksum
// either way.
func TestPartCopyFromCachedManifestKeepsChecksum(t *testing.T) {
	f := newFixture(t)
	p1, p2 := randBytes(MinPartSize+3, 53), randBytes(100<<10, 54)
	id := f.create(t, "mp")
	e1, e2 := f.crcPart(t, f.st, "mp", id, 1, p1).ETag, f.crcPart(t, f.st, "mp", id, 2, p2).ETag
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1, e2}), ExpectSize: -1}); err != nil {
		t.Fatal(err)
	}
	copyPart := func(st *Store, key string) (PartInfo, ObjectInfo) {
		t.Helper()
		dst, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		pi, err := st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "mp",
			Range: &Range{First: 0, Last: int64(len(p1)) - 1}, Bucket: bucket, Key: key, UploadID: dst, PartNumber: 1})
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: key, UploadID: dst,
			Parts: completeParts([]int{1}, []string{pi.ETag}), ExpectSize: -1})
		if err != nil {
			t.Fatal(err)
		}
		return pi, info
	}
	// A fresh process: the manifest is read from the store.
	fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	coldPart, cold := copyPart(fresh, "cold")
	// The process that completed the source: its manifest is cached.
	warmPart, warm := copyPart(f.st, "warm")
	if coldPart.Checksums["crc64nvme"] == "" {
		t.Skipf("the cold part copy has no %s either: %v", "crc64nvme", coldPart.Checksums)
	}
	if warmPart.Checksums["crc64nvme"] != coldPart.Checksums["crc64nvme"] || len(warm.Checksums) != len(cold.Checksums) {
		t.Errorf("part copy from a cached manifest: part checksums %v, object %v; from the store: part %v, object %v",
			warmPart.Checksums, warm.Checksums, coldPart.Checksums, cold.Checksums)
	}
}
