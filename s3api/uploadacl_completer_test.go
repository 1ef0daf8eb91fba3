package s3api

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestCompletedUploadOwnedByItsInitiator: an upload is its initiator's,
// as in S3 (the upload's Owner): another account with WRITE on the
// bucket that completes the bucket owner's upload does not become the
// object's owner, and cannot read it.
func TestCompletedUploadOwnedByItsInitiator(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="b0b"`),
		GrantRead: aws.String(`id="b0b"`), GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
	// Some object of the bucket has a record (bob's).
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bobs"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	up, err := alice.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1),
		Body: strings.NewReader("alice's secret")}); err != nil {
		t.Fatal(err)
	}
	// Bob finds the upload and its parts, and completes it.
	ups, err := bob.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(ups.Uploads) != 1 {
		t.Fatalf("bob's ListMultipartUploads: %v, %v", ups, err)
	}
	parts, err := bob.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: ups.Uploads[0].UploadId})
	if err != nil || len(parts.Parts) != 1 {
		t.Fatalf("bob's ListParts: %v, %v", parts, err)
	}
	if _, err := bob.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: ups.Uploads[0].UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: parts.Parts[0].ETag}}}}); err != nil {
		t.Fatalf("bob's CompleteMultipartUpload: %v", err)
	}
	if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err == nil {
		body, _ := io.ReadAll(out.Body)
		t.Errorf("bob read the bucket owner's upload he completed: %q", body)
	}
	if acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k}); err != nil || aws.ToString(acl.Owner.ID) != "a11ce" {
		t.Errorf("GetObjectAcl of the completed upload: %+v, %v; want alice's", acl, err)
	}
}
