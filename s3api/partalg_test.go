package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A part checksummed with another algorithm than its upload's is refused
// in S3's words: the algorithms upper-case, no closing period.
func TestPartAlgorithmMismatchWords(t *testing.T) {
	c := sdkClient(newTestServer(t, SingleCredential("ak", "sk")), "ak", "sk")
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("bkt"), Key: aws.String("k"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("abcdefg"), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	const want = "Checksum Type mismatch occurred, expected checksum Type: CRC32, actual checksum Type: SHA256"
	if apiCode(err) != "InvalidRequest" || apiMessage(err) != want {
		t.Fatalf("err %v, want InvalidRequest %q", err, want)
	}
}
