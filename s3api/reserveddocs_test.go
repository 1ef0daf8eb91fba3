package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestBucketDocumentsOutOfClientReach: no object request names a bucket
// document: the owner document stays whatever a client asks of its key
// (deleting it, its "null" version, in a batch, copying from it,
// tagging, retention, ACLs, uploads), and the bucket keeps its owner.
func TestBucketDocumentsOutOfClientReach(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: aclCreds()})
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	k := aws.String(".s3seal/bucket/owner")
	try := map[string]func() error{
		"DeleteObject": func() error { _, err := alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k}); return err },
		"DeleteObject null": func() error {
			_, err := alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: aws.String("null")})
			return err
		},
		"DeleteObjects": func() error {
			out, err := alice.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: k}, {Key: k, VersionId: aws.String("null")}}}})
			if err == nil && len(out.Deleted) > 0 {
				return nil
			}
			return errFake
		},
		"GetObject":  func() error { _, err := alice.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); return err },
		"HeadObject": func() error { _, err := alice.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); return err },
		"CopyObject": func() error {
			_, err := alice.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("bkt/.s3seal/bucket/owner")})
			return err
		},
		"PutObjectTagging": func() error {
			_, err := alice.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k, Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}})
			return err
		},
		"PutObjectAcl": func() error {
			_, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPublicRead})
			return err
		},
		"PutObject": func() error {
			_, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader(`{"id":"b0b"}`)})
			return err
		},
		"CreateMultipartUpload": func() error {
			_, err := alice.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
			return err
		},
		"GetObjectAttributes": func() error {
			_, err := alice.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k, ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag}})
			return err
		},
	}
	for name, f := range try {
		if err := f(); err == nil {
			t.Errorf("%s of the owner document: allowed", name)
		}
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("x"), Body: strings.NewReader("x")}); errCode(err) != "AccessDenied" {
		t.Errorf("another account writing to the bucket after: %v, want AccessDenied (the owner kept)", err)
	}
}

var errFake = context.Canceled
