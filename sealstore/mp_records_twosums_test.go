package sealstore

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// A part of an upload created without an algorithm keeps two checksums in
// its record, the client's and CRC64NVME (FORMAT.md, upload state): the
// record stays in one key segment for every algorithm but SHA-512 (whose
// record was cut once already), needs no GET, and ListParts and the
// completion's manifest carry both.
func TestPartRecordWithClientChecksumAndCRC64NVME(t *testing.T) {
	f := newFixture(t)
	for _, alg := range []string{"crc32", "sha256", "xxhash128", "sha512"} {
		key := "two/" + alg
		id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		data := []byte("part data")
		sums := map[string]string{alg: longChecksum(alg, data), "crc64nvme": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 8))}
		if alg == "crc32" || alg == "sha256" {
			sums[alg] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, map[string]int{"crc32": 4, "sha256": 32}[alg]))
		}
		pi, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: 1,
			Body: bytes.NewReader(data), Size: int64(len(data)),
			Finalize: func() (map[string]string, error) { return sums, nil }})
		if err != nil {
			t.Fatal(err)
		}
		prefix := uploadPrefix(bucket, key, id)
		records := 0
		for _, k := range f.reservedKeys(t, prefix) {
			if _, _, inBody, ok := parseRecordKey(prefix, k); ok {
				records++
				cuts := strings.Count(strings.TrimPrefix(k, prefix), "/")
				if inBody || (alg != "sha512" && cuts != 0) || (alg == "sha512" && cuts != 1) {
					t.Errorf("%s+crc64nvme record: in body %v, cut %d times", alg, inBody, cuts)
				}
			}
		}
		if records != 1 {
			t.Errorf("%s: %d records", alg, records)
		}
		page, err := f.st.ListParts(f.ctx, bucket, key, id, 0, 10)
		if err != nil || len(page.Parts) != 1 || len(page.Parts[0].Checksums) != 2 ||
			page.Parts[0].Checksums[alg] != sums[alg] || page.Parts[0].Checksums["crc64nvme"] != sums["crc64nvme"] {
			t.Fatalf("%s: ListParts %+v %v, want both checksums", alg, page, err)
		}
		info, err := f.st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: key, UploadID: id, ExpectSize: -1,
			Parts: []CompletePart{{PartNumber: 1, ETag: pi.ETag, Checksums: map[string]string{alg: sums[alg]}}}})
		if err != nil {
			t.Fatalf("%s: complete: %v", alg, err)
		}
		_, parts, err := f.st.Attributes(f.ctx, bucket, key, "", nil)
		if err != nil || len(parts) != 1 || len(parts[0].Checksums) != 2 {
			t.Errorf("%s: manifest parts %+v %v (object %+v), want both checksums", alg, parts, err, info.Checksums)
		}
	}
}
