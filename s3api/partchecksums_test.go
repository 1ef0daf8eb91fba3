package s3api

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
)

// uploadParts completes a multipart upload of parts under key with the
// checksum algorithm alg and type typ, and returns the completion.
func uploadParts(ctx context.Context, t *testing.T, c *s3.Client, key string, alg types.ChecksumAlgorithm, typ types.ChecksumType, parts [][]byte) *s3.CompleteMultipartUploadOutput {
	t.Helper()
	b, k := aws.String("bkt"), aws.String(key)
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k, ChecksumAlgorithm: alg, ChecksumType: typ})
	if err != nil {
		t.Fatal(err)
	}
	var done []types.CompletedPart
	for i, p := range parts {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: alg})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag,
			ChecksumCRC32: out.ChecksumCRC32, ChecksumSHA256: out.ChecksumSHA256})
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: cr.UploadId,
		ChecksumType: typ, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	return comp
}

// TestPartReadChecksums: with checksum mode ENABLED, a GET or HEAD by
// partNumber of a COMPOSITE multipart object reports the part's checksum
// and type COMPOSITE (also on a second read, which finds the manifest
// cached without part checksums); a part of a FULL_OBJECT object of
// several parts, and a range short of the whole object, report none; a
// part or range that is the whole object (part 1 of a single PUT, a
// FULL_OBJECT upload of one part, bytes=0-) reports the object's
// checksum; without checksum mode nothing is reported.
func TestPartReadChecksums(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	parts := [][]byte{bytes.Repeat([]byte("a"), 5<<20), []byte("the last part")}
	get := func(key string, part int32, rng string) (string, string, types.ChecksumType) {
		t.Helper()
		in := &s3.GetObjectInput{Bucket: b, Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled}
		if part > 0 {
			in.PartNumber = aws.Int32(part)
		}
		if rng != "" {
			in.Range = aws.String(rng)
		}
		g, err := c.GetObject(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		g.Body.Close()
		return aws.ToString(g.ChecksumSHA256), aws.ToString(g.ChecksumCRC32), g.ChecksumType
	}
	head := func(key string, part int32, mode types.ChecksumMode) (string, string, types.ChecksumType) {
		t.Helper()
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(key), PartNumber: aws.Int32(part), ChecksumMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(h.ChecksumSHA256), aws.ToString(h.ChecksumCRC32), h.ChecksumType
	}

	uploadParts(ctx, t, c, "composite", types.ChecksumAlgorithmSha256, types.ChecksumTypeComposite, parts)
	for round := 0; round < 2; round++ { // the second finds the manifest cached
		for i, p := range parts {
			want := b64sum(checksum.SHA256, p)
			if sha, _, typ := get("composite", int32(i+1), ""); sha != want || typ != types.ChecksumTypeComposite {
				t.Fatalf("GET composite part %d: %q %q, want %q COMPOSITE", i+1, sha, typ, want)
			}
			if sha, _, typ := head("composite", int32(i+1), types.ChecksumModeEnabled); sha != want || typ != types.ChecksumTypeComposite {
				t.Fatalf("HEAD composite part %d: %q %q, want %q COMPOSITE", i+1, sha, typ, want)
			}
		}
	}
	if sha, _, typ := head("composite", 1, ""); sha != "" || typ != "" {
		t.Fatalf("HEAD composite part 1 without checksum mode: %q %q", sha, typ)
	}

	uploadParts(ctx, t, c, "full", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject, parts)
	for i := range parts {
		if _, crc, typ := get("full", int32(i+1), ""); crc != "" || typ != "" {
			t.Fatalf("GET full-object part %d: %q %q, want none", i+1, crc, typ)
		}
		if _, crc, typ := head("full", int32(i+1), types.ChecksumModeEnabled); crc != "" || typ != "" {
			t.Fatalf("HEAD full-object part %d: %q %q, want none", i+1, crc, typ)
		}
	}
	whole := b64sum(checksum.CRC32, append(append([]byte{}, parts[0]...), parts[1]...))
	if _, crc, typ := get("full", 0, "bytes=0-"); crc != whole || typ != types.ChecksumTypeFullObject {
		t.Fatalf("GET full-object bytes=0-: %q %q, want %q FULL_OBJECT", crc, typ, whole)
	}
	if _, crc, typ := get("full", 0, "bytes=0-9"); crc != "" || typ != "" {
		t.Fatalf("GET full-object bytes=0-9: %q %q, want none", crc, typ)
	}

	uploadParts(ctx, t, c, "one", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject, parts[1:])
	if _, crc, typ := head("one", 1, types.ChecksumModeEnabled); crc != b64sum(checksum.CRC32, parts[1]) || typ != types.ChecksumTypeFullObject {
		t.Fatalf("HEAD one-part full-object part 1: %q %q", crc, typ)
	}

	data := []byte("one PUT")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("single"), Body: bytes.NewReader(data),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}); err != nil {
		t.Fatal(err)
	}
	if _, crc, typ := get("single", 1, ""); crc != b64sum(checksum.CRC32, data) || typ != types.ChecksumTypeFullObject {
		t.Fatalf("GET single part 1: %q %q", crc, typ)
	}
}

// TestPartNumberNotSatisfiable: a part number beyond the object's parts is
// 416 InvalidPartNumber in S3's words (no period), naming the part asked
// for (PartNumberRequested) and the parts there are (ActualPartCount; 1
// for a single PUT).
func TestPartNumberNotSatisfiable(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	uploadParts(ctx, t, c, "multi", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject,
		[][]byte{bytes.Repeat([]byte("a"), 5<<20), []byte("last")})
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("single"), Body: bytes.NewReader([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key          string
		part, actual string
	}{{"multi", "3", "2"}, {"single", "2", "1"}} {
		status, body := rawDo(t, "GET", url+"/bkt/"+tc.key+"?partNumber="+tc.part, "")
		want := "<Code>InvalidPartNumber</Code><Message>The requested partnumber is not satisfiable</Message>" +
			"<PartNumberRequested>" + tc.part + "</PartNumberRequested><ActualPartCount>" + tc.actual + "</ActualPartCount>"
		if status != 416 || !strings.Contains(body, want) {
			t.Fatalf("%s partNumber=%s: %d %s", tc.key, tc.part, status, body)
		}
		if status, _ := rawDo(t, "HEAD", url+"/bkt/"+tc.key+"?partNumber="+tc.part, ""); status != 416 {
			t.Fatalf("HEAD %s partNumber=%s: %d", tc.key, tc.part, status)
		}
	}
}
