package sealstore

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/crypto"
)

// sumOf is the base64 checksum of b with algorithm a, as S3 prints it.
func sumOf(a checksum.Algorithm, b []byte) string {
	h := a.New()
	h.Write(b)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// A part recorded by an s3seal from before parts kept CRC64NVME beside
// the client's checksum has only the client's: such an upload still
// completes, and its object has no checksum, as before.
func TestObjectChecksumsOfPartsWithoutDefault(t *testing.T) {
	p1, p2 := []byte("first"), []byte("second")
	both := func(b []byte) map[string]string {
		return map[string]string{"crc32": sumOf(checksum.CRC32, b), "crc64nvme": sumOf(checksum.CRC64NVME, b)}
	}
	parts := []crypto.ManifestPart{
		{Stream: crypto.Stream{Part: 1}, PlainSize: int64(len(p1)), Checksums: both(p1)},
		{Stream: crypto.Stream{Part: 2}, PlainSize: int64(len(p2)), Checksums: both(p2)},
	}
	got, err := objectChecksums("", "", parts)
	want := sumOf(checksum.CRC64NVME, append(append([]byte{}, p1...), p2...))
	if err != nil || len(got) != 1 || got["crc64nvme"] != want {
		t.Errorf("parts with CRC32 and CRC64NVME: %v %v, want crc64nvme %s alone", got, err, want)
	}
	parts[1].Checksums = map[string]string{"crc32": sumOf(checksum.CRC32, p2)} // an older record
	if got, err := objectChecksums("", "", parts); err != nil || got != nil {
		t.Errorf("a part without CRC64NVME: %v %v, want no checksum", got, err)
	}
}

// An upload created without an algorithm whose first part was recorded by
// the previous release (the client's CRC32 only, no CRC64NVME) completes
// whatever checksum type the client states: for such an upload a stated
// type, like a stated checksum, is ignored.
func TestCompleteOldRecordsIgnoresStatedType(t *testing.T) {
	for _, typ := range []string{"FULL_OBJECT", "COMPOSITE"} {
		t.Run(typ, func(t *testing.T) {
			f := newFixture(t)
			key := "oldrec"
			id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			records := []map[string]string{
				{"crc32": "AAAAAA=="},                              // the previous release's record
				{"crc32": "BBBBBB==", "crc64nvme": "CCCCCCCCCCC="}, // this release's: the client's and s3seal's
			}
			datas := [][]byte{bytes.Repeat([]byte("x"), 5*mib), []byte("tail")}
			var parts []CompletePart
			for i, d := range datas {
				rec := records[i]
				pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: i + 1,
					Body: bytes.NewReader(d), Size: int64(len(d)),
					Finalize: func() (map[string]string, error) { return rec, nil }})
				if err != nil {
					t.Fatalf("part %d: %v", i+1, err)
				}
				parts = append(parts, CompletePart{PartNumber: i + 1, ETag: `"` + pi.ETag + `"`})
			}
			info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: key, UploadID: id, Parts: parts, ExpectSize: -1,
				ExpectChecksumType: typ})
			if err != nil {
				t.Fatalf("completion stating x-amz-checksum-type %s: %v", typ, err)
			}
			if len(info.Checksums) != 0 {
				t.Errorf("object checksums %v, want none (a part has no CRC64NVME)", info.Checksums)
			}
		})
	}
}
