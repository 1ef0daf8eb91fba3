package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func r3crc32(b []byte) string {
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(s[:])
}

// R3 check (HOLDS if it passes): a FULL_OBJECT CRC32 upload whose first
// part is an UploadPartCopy (range) and second an UploadPart completes
// with the CRC32 of the plaintext; a wrong stated final CRC32 is refused
// and leaves no object.
func TestR3FullObjectChecksumWithCopiedPart(t *testing.T) {
	p := startS3seal(t, sealOpts{Backend: startMoto(t)})
	c := sdkFor(t, p)
	ctx := ctxT(t)
	mustCreateBucket(t, c, "r3ck")
	src := patternBytes(91, 6*mib)
	putObj(t, c, "r3ck", "src", src)
	part2 := patternBytes(92, 1000)
	want := append(append([]byte{}, src[mib:6*mib]...), part2...)
	for _, wrong := range []bool{true, false} {
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("r3ck"), Key: aws.String("dst"),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumType: types.ChecksumTypeFullObject})
		if err != nil {
			t.Fatal(err)
		}
		cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("r3ck"), Key: aws.String("dst"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String("r3ck/src"), CopySourceRange: aws.String("bytes=1048576-6291455")})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(cp.CopyPartResult.ChecksumCRC32); got != r3crc32(src[mib:6*mib]) {
			t.Errorf("copied part's CRC32 %q, want %q", got, r3crc32(src[mib:6*mib]))
		}
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("r3ck"), Key: aws.String("dst"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(2), Body: bytes.NewReader(part2), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			t.Fatal(err)
		}
		final := r3crc32(want)
		if wrong {
			final = r3crc32([]byte("not it"))
		}
		out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("r3ck"), Key: aws.String("dst"), UploadId: cr.UploadId,
			ChecksumCRC32: aws.String(final), ChecksumType: types.ChecksumTypeFullObject,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
				{PartNumber: aws.Int32(1), ETag: cp.CopyPartResult.ETag, ChecksumCRC32: cp.CopyPartResult.ChecksumCRC32},
				{PartNumber: aws.Int32(2), ETag: up.ETag, ChecksumCRC32: up.ChecksumCRC32}}}})
		if wrong {
			if err == nil {
				t.Errorf("completion with a wrong final CRC32 succeeded")
			}
			if _, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("r3ck"), Key: aws.String("dst")}); herr == nil {
				t.Errorf("an object exists after the refused completion")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(out.ChecksumCRC32); got != final {
			t.Errorf("completion reports CRC32 %q, want %q", got, final)
		}
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("r3ck"), Key: aws.String("dst"), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(g.Body)
		g.Body.Close()
		if err != nil || !bytes.Equal(body, want) || aws.ToString(g.ChecksumCRC32) != final {
			t.Errorf("GET: err %v, same bytes %v, CRC32 %q want %q", err, bytes.Equal(body, want), aws.ToString(g.ChecksumCRC32), final)
		}
	}
}
