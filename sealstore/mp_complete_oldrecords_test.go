package sealstore

import (
	"bytes"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// defaultObjectChecksums is what the S3 front computes for an upload
// created without an algorithm: the CRC64NVME of the whole object when
// every part recorded one, else none.
func defaultObjectChecksums(alg, typ string, parts []crypto.ManifestPart) (map[string]string, error) {
	for _, p := range parts {
		if p.Checksums["crc64nvme"] == "" {
			return nil, nil
		}
	}
	return map[string]string{"crc64nvme": "combined"}, nil
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
				ExpectChecksumType: typ, ObjectChecksums: defaultObjectChecksums})
			if err != nil {
				t.Fatalf("completion stating x-amz-checksum-type %s: %v", typ, err)
			}
			if len(info.Checksums) != 0 {
				t.Errorf("object checksums %v, want none (a part has no CRC64NVME)", info.Checksums)
			}
		})
	}
}
