package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/sealstore"
)

// TestBucketDocumentsOutOfClientsReach: no request reaches s3seal's own
// documents under .s3seal/bucket/ by naming them as keys: a DeleteObjects,
// a DeleteObject (with or without a versionId), a copy's source and a
// GetObjectAttributes leave them unread and in place, so that the
// owner's bucket stays owned and private.
func TestBucketDocumentsOutOfClientsReach(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("dst")}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	owner := sealstore.BucketDocPrefix + "owner"
	for _, key := range []string{owner, "/" + owner, "./" + owner} {
		out, err := alice.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String(key)}}}})
		t.Logf("DeleteObjects %q: %+v %v", key, out, err)
		_, err = alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key)})
		t.Logf("DeleteObject %q: %v", key, err)
		_, err = alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key), VersionId: aws.String("null")})
		t.Logf("DeleteObject %q ?versionId=null: %v", key, err)
		_, err = alice.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("c"), CopySource: aws.String("bkt/" + key)})
		t.Logf("CopyObject from %q: %v", key, err)
		_, err = alice.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String(key), ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
		t.Logf("GetObjectAttributes %q: %v", key, err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k")}); errCode(err) != "AccessDenied" {
		t.Errorf("after requests naming the owner document, another account's GetObject: %v, want AccessDenied", err)
	}
	if _, err := alice.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("dst"), Key: aws.String("c")}); err == nil {
		t.Errorf("a copy of the owner document was made")
	}
}
