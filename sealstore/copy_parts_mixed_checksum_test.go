package sealstore

import (
	"bytes"
	"testing"

	"github.com/s3seal/s3seal/checksum"
)

// An upload created without an algorithm that mixes a part the store
// copied from a part of a CRC32 upload (the aws CLI's) with a part the
// client uploaded: every part had a checksum, and the same upload whose
// copied part is read (any store that ignores copy conditions, or the
// release before store copies) completes with a FULL_OBJECT CRC64NVME.
// With the store's copy the object gets no checksum at all.
func TestMixedCopiedAndUploadedPartsKeepAChecksum(t *testing.T) {
	f := newFixture(t)
	p1, p2 := randBytes(MinPartSize+3, 61), randBytes(100<<10, 62)
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "cli", ChecksumAlgorithm: "crc32", ChecksumType: "COMPOSITE"})
	if err != nil {
		t.Fatal(err)
	}
	crc32Part := func(n int, data []byte) string {
		h := checksum.NewHasher(checksum.CRC32)
		pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "cli", UploadID: id, PartNumber: n,
			Body: bytes.NewReader(data), Size: int64(len(data)), Observe: h,
			Finalize: func() (map[string]string, error) { return map[string]string{"crc32": h.Base64()}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return pi.ETag
	}
	e1, e2 := crc32Part(1, p1), crc32Part(2, p2)
	if _, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "cli", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1, e2}), ExpectSize: -1}); err != nil {
		t.Fatal(err)
	}
	dst, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := f.st.UploadPartCopy(f.ctx, UploadPartCopyInput{SrcBucket: bucket, SrcKey: "cli",
		Range: &Range{First: 0, Last: int64(len(p1)) - 1}, Bucket: bucket, Key: "mixed", UploadID: dst, PartNumber: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copied part's checksums: %v", cp.Checksums)
	up := f.crcPart(t, f.st, "mixed", dst, 2, p2)
	info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mixed", UploadID: dst,
		Parts: completeParts([]int{1, 2}, []string{cp.ETag, up.ETag}), ExpectSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Checksums) == 0 {
		t.Errorf("an upload of a copied part (CRC32) and an uploaded part (CRC64NVME) completed without any checksum; " +
			"reading the copied part would have given FULL_OBJECT CRC64NVME")
	}
}
