package s3api

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/s3api/checksum"
)

// TestPartReadChecksums: a GET or HEAD by partNumber with checksum mode
// ENABLED reports the selected part's checksum and the object's checksum
// type (FULL_OBJECT CRC32 and COMPOSITE SHA-256 uploads; the second read
// of a part finds the manifest cached without part checksums); without
// checksum mode it reports none; part 1 of a single-PUT object reports the
// object's own checksum.
func TestPartReadChecksums(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	parts := [][]byte{bytes.Repeat([]byte("a"), 5<<20), []byte("the last part")}
	for _, tc := range []struct {
		alg checksum.Algorithm
		sdk types.ChecksumAlgorithm
		typ types.ChecksumType
		get func(o *s3.GetObjectOutput) string
		hd  func(o *s3.HeadObjectOutput) string
	}{
		{checksum.CRC32, types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject,
			func(o *s3.GetObjectOutput) string { return aws.ToString(o.ChecksumCRC32) },
			func(o *s3.HeadObjectOutput) string { return aws.ToString(o.ChecksumCRC32) }},
		{checksum.SHA256, types.ChecksumAlgorithmSha256, types.ChecksumTypeComposite,
			func(o *s3.GetObjectOutput) string { return aws.ToString(o.ChecksumSHA256) },
			func(o *s3.HeadObjectOutput) string { return aws.ToString(o.ChecksumSHA256) }},
	} {
		key := aws.String("multi-" + string(tc.alg))
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: key,
			ChecksumAlgorithm: tc.sdk, ChecksumType: tc.typ})
		if err != nil {
			t.Fatal(err)
		}
		var done []types.CompletedPart
		for i, p := range parts {
			out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: key, UploadId: cr.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: tc.sdk})
			if err != nil {
				t.Fatal(err)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag,
				ChecksumCRC32: out.ChecksumCRC32, ChecksumSHA256: out.ChecksumSHA256})
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: key, UploadId: cr.UploadId,
			ChecksumType: tc.typ, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ { // the second finds the manifest cached
			for i, p := range parts {
				n := aws.Int32(int32(i + 1))
				g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: key, PartNumber: n, ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				g.Body.Close()
				if got, want := tc.get(g), b64sum(tc.alg, p); got != want || g.ChecksumType != tc.typ {
					t.Fatalf("%s GET part %d: checksum %q type %q, want %q %q", tc.alg, i+1, got, g.ChecksumType, want, tc.typ)
				}
				h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: key, PartNumber: n, ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := tc.hd(h), b64sum(tc.alg, p); got != want || h.ChecksumType != tc.typ {
					t.Fatalf("%s HEAD part %d: checksum %q type %q, want %q %q", tc.alg, i+1, got, h.ChecksumType, want, tc.typ)
				}
			}
		}
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: key, PartNumber: aws.Int32(1)})
		if err != nil {
			t.Fatal(err)
		}
		if tc.hd(h) != "" || h.ChecksumType != "" {
			t.Fatalf("%s HEAD part 1 without checksum mode: %q %q", tc.alg, tc.hd(h), h.ChecksumType)
		}
	}

	data := []byte("one PUT")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("single"), Body: bytes.NewReader(data),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("single"), PartNumber: aws.Int32(1), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if aws.ToString(g.ChecksumCRC32) != b64sum(checksum.CRC32, data) || g.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("single part 1: %q %q", aws.ToString(g.ChecksumCRC32), g.ChecksumType)
	}
}
