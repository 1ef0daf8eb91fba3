package s3api

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A part checksummed with another algorithm than its upload's is refused
// in S3's words: the algorithms upper-case, no closing period.
func TestPartAlgorithmMismatchWords(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
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

// A part that names no checksum: refused on a COMPOSITE upload (S3 says
// the part's type is "null"); on a FULL_OBJECT upload the upload's
// algorithm is computed and reported in the answer.
func TestPartWithoutChecksum(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, typ := range []types.ChecksumType{types.ChecksumTypeComposite, types.ChecksumTypeFullObject} {
		up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumType: typ})
		if err != nil {
			t.Fatal(err)
		}
		resp, body := doSigned(t, "PUT", url+"/bkt/k?partNumber=1&uploadId="+*up.UploadId, nil, "abcdefg")
		if typ == types.ChecksumTypeComposite {
			const want = "<Code>InvalidRequest</Code><Message>Checksum Type mismatch occurred, expected checksum Type: CRC32, actual checksum Type: null</Message>"
			if resp.StatusCode != 400 || !strings.Contains(body, want) {
				t.Errorf("COMPOSITE: HTTP %d %s", resp.StatusCode, body)
			}
			continue
		}
		if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Checksum-Crc32") != "MSpqpg==" {
			t.Errorf("FULL_OBJECT: HTTP %d crc32 %q %s", resp.StatusCode, resp.Header.Get("X-Amz-Checksum-Crc32"), body)
		}
	}
}
