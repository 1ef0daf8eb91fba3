package s3api

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// As s3-tests test_object_lock_suspend_versioning: versioning cannot be
// suspended on a bucket with Object Lock (409 InvalidBucketState), and
// nothing reaches the store's versioning.
func TestLockedBucketKeepsVersioning(t *testing.T) {
	fw := &fakeForwarder{body: "none"} // answers the lock probe with Object Lock enabled
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	c := sdkClient(srv.URL, "user", "us")
	_, err := c.PutBucketVersioning(context.Background(), &s3.PutBucketVersioningInput{Bucket: aws.String("bkt"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}})
	if r, ok := errors.AsType[*smithyhttp.ResponseError](err); apiCode(err) != "InvalidBucketState" || !ok || r.HTTPStatusCode() != 409 {
		t.Fatalf("suspending a locked bucket's versioning: %v, want 409 InvalidBucketState", err)
	}
}
