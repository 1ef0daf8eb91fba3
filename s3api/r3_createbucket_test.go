package s3api

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// tagRefusingForwarder: a store that creates buckets through the raw path
// (Object Lock / ACL creates) but refuses PUT ?tagging.
type tagRefusingForwarder struct {
	mu  sync.Mutex
	log []string
}

func (f *tagRefusingForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, in.Method+" "+in.Bucket+"?"+in.Query.Encode())
	if in.Query.Has("tagging") {
		return nil, &backend.Error{Code: "InvalidTag", StatusCode: 400, Message: "store refuses these tags"}
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
}

// R3 FINDING (fixed; this test now guards it on the current code): CreateBucket with
// Object Lock (or an ACL) AND tags answers 200 even when the store
// refuses the tags and s3seal deletes the new bucket again.
// createLockedBucket (protect.go) writes the 200 itself; createBucket
// then goes on to tagNewBucket, whose refusal (and the DeleteBucket of
// configureNewBucket) comes after the client has been told success.
func TestR3CreateLockedBucketWithRefusedTagsSays200(t *testing.T) {
	fw := &tagRefusingForwarder{}
	c, _ := adminClient(t, fw)
	_, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("r3locked"),
		ObjectLockEnabledForBucket: aws.Bool(true),
		CreateBucketConfiguration:  &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
	t.Logf("store saw: %q; SDK: %v", fw.log, err)
	// What goes on the wire: the status line is what clients trust for
	// CreateBucket.
	srv := newTestServerWith(t, Config{Credentials: Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}, Forwarder: fw})
	resp, body := doSigned(t, http.MethodPut, srv.URL+"/r3locked2", http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}},
		`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Tags><Tag><Key>k</Key><Value>v</Value></Tag></Tags></CreateBucketConfiguration>`)
	if resp.StatusCode == http.StatusOK {
		t.Errorf("CreateBucket answered HTTP 200 although the store refused its tags and s3seal deleted the bucket; body: %s", body)
	}
}
