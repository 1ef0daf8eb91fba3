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

// TestObjectACLIsPerVersion: in a versioned bucket, an ACL given to one
// version of a key is that version's alone, as in S3: a later version
// written public-read does not open the earlier private one, and a
// PutObjectAcl naming an old version does not change the current one.
func TestObjectACLIsPerVersion(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("secret")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("public"),
		ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: v1.VersionId}); errCode(err) != "AccessDenied" {
		body := ""
		if err == nil {
			d, _ := io.ReadAll(out.Body)
			body = string(d)
		}
		t.Errorf("another account's GetObject of the private first version: %v (body %q), want AccessDenied", err, body)
	}

	// An ACL put on the old version leaves the current one as it was.
	k2 := aws.String("k2")
	w1, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k2, Body: strings.NewReader("old")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k2, Body: strings.NewReader("current secret")}); err != nil {
		t.Fatal(err)
	}
	// s3seal keeps one ACL per key, so it refuses one put on a version
	// rather than let it grant on the current one.
	if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k2, VersionId: w1.VersionId,
		ACL: types.ObjectCannedACLPublicRead}); errCode(err) != "NotImplemented" {
		t.Errorf("PutObjectAcl on an old version: %v, want NotImplemented", err)
	}
	if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k2}); errCode(err) != "AccessDenied" {
		body := ""
		if err == nil {
			d, _ := io.ReadAll(out.Body)
			body = string(d)
		}
		t.Errorf("another account's GetObject of the current version after PutObjectAcl on an old one: %v (body %q), want AccessDenied", err, body)
	}
}
