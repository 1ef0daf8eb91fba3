package s3api

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// PutBucketAcl and PutObjectAcl with an x-amz-acl S3 does not know
// (s3-tests test_bucket_put_bad_canned_acl: "public-ready") are 400
// InvalidArgument from s3seal; no ACL request reaches the store (s3seal
// keeps ACLs; moto answered such a request with a 500).
func TestPutACLUnknownCanned(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	c := sdkClient(srv.URL, "admin", "as")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	bad := types.BucketCannedACL("public-ready")
	_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("bkt"), ACL: bad})
	if apiCode(err) != "InvalidArgument" || httpStatus(err) != http.StatusBadRequest {
		t.Errorf("bucket: %v, want 400 InvalidArgument", err)
	}
	_, err = c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("bkt"), Key: aws.String("k"), ACL: types.ObjectCannedACL("public-ready")})
	if apiCode(err) != "InvalidArgument" || httpStatus(err) != http.StatusBadRequest {
		t.Errorf("object: %v, want 400 InvalidArgument", err)
	}
	fw.mu.Lock()
	for _, r := range fw.reqs {
		if r.Query.Has("acl") {
			t.Errorf("an ACL request reached the store: %s %v", r.Method, r.Query)
		}
	}
	fw.mu.Unlock()
	for _, acl := range []types.BucketCannedACL{types.BucketCannedACLPublicRead, "log-delivery-write"} {
		if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("bkt"), ACL: acl}); err != nil {
			t.Errorf("%s: %v", acl, err)
		}
	}
	// Kept by s3seal (issue 22): no ACL request reaches the store (the
	// PUT's lifecycle lookup for x-amz-expiration does).
	fw.mu.Lock()
	defer fw.mu.Unlock()
	for _, r := range fw.reqs {
		if r.Query.Has("acl") {
			t.Errorf("an ACL request reached the store: %s %v", r.Method, r.Query)
		}
	}
}
