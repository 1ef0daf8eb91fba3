package s3api

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// On CompleteMultipartUpload, x-amz-checksum-type and x-amz-checksum-<alg>
// are about the object (S3: the type must match the upload's, else
// BadDigest; the value is the whole object's checksum), not about the XML
// body: a mismatching type is refused and the right full-object checksum
// accepted. (s3seal once checked them against the body.)
func TestCompleteChecksumHeaders(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	data := bytes.Repeat([]byte("abc"), 1000)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(data))
	full := base64.StdEncoding.EncodeToString(sum[:])

	upload := func(key string) (*string, []types.CompletedPart) {
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(key),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumType: types.ChecksumTypeFullObject})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			t.Fatal(err)
		}
		return cr.UploadId, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32}}
	}

	// 1. A checksum type other than the upload's must not be ignored.
	id, parts := upload("typemismatch")
	_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("typemismatch"), UploadId: id,
		ChecksumType: types.ChecksumTypeComposite, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err == nil {
		t.Errorf("x-amz-checksum-type COMPOSITE on a FULL_OBJECT upload was silently ignored (completed with 200)")
	}

	// 2. The right full-object checksum must be accepted.
	id, parts = upload("fullsum")
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("fullsum"), UploadId: id,
		ChecksumCRC32: aws.String(full), ChecksumType: types.ChecksumTypeFullObject,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Errorf("complete with the object's correct x-amz-checksum-crc32 %s refused: %v", full, err)
	}
}
