package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestPolicyDenyOnGetObjectHoldsAtEveryDoor: a bucket policy that allows
// another account everything but denies it s3:GetObject on some keys
// keeps those keys' content and metadata from it through every request
// that reads them: HEAD, GetObjectAttributes (which S3 decides as
// s3:GetObject and s3:GetObjectAttributes both), a copy's source and an
// UploadPartCopy's.
func TestPolicyDenyOnGetObjectHoldsAtEveryDoor(t *testing.T) {
	creds := aclCreds()
	a := creds["alice"]
	a.Admin = true
	creds["alice"] = a
	url := newTestServer(t, creds)
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("secret/k")
	for _, name := range []string{"bkt", "bobs"} {
		c := alice
		if name == "bobs" {
			c = bob
		}
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	pol := `{"Version":"2012-10-17","Statement":[` +
		`{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]},` +
		`{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"}]}`
	if _, err := alice.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(pol)}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); err != nil {
		t.Fatalf("the policy's Allow: bob's listing: %v", err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
		t.Fatalf("the policy's Deny: bob's GetObject: %v, want AccessDenied", err)
	}
	if _, err := bob.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); err == nil {
		t.Errorf("bob's HeadObject of a denied key: 200, want 403")
	}
	if out, err := bob.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k,
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesObjectSize}}); errCode(err) != "AccessDenied" {
		t.Errorf("bob's GetObjectAttributes of a key denied to its GetObject: %v (%+v), want AccessDenied", err, out)
	}
	if _, err := bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bobs"), Key: aws.String("stolen"), CopySource: aws.String("bkt/secret/k")}); errCode(err) != "AccessDenied" {
		t.Errorf("bob's CopyObject from a denied key: %v, want AccessDenied", err)
	}
	up, err := bob.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bobs"), Key: aws.String("stolen2")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("bobs"), Key: aws.String("stolen2"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), CopySource: aws.String("bkt/secret/k")}); errCode(err) != "AccessDenied" {
		t.Errorf("bob's UploadPartCopy from a denied key: %v, want AccessDenied", err)
	}
}
