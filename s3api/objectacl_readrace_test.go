package s3api

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
)

// overwriteBeforeRead runs hook once, armed, before the store reads key:
// a write landing between a GET's decision and its read.
type overwriteBeforeRead struct {
	backend.Store
	key   string
	armed atomic.Bool
	hook  func()
}

func (o *overwriteBeforeRead) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	if in.Key == o.key && o.armed.CompareAndSwap(true, false) {
		o.hook()
	}
	return o.Store.GetObject(ctx, in)
}

// TestGetDecidedOnReadVersion: a GET decided by the previous writer's
// ACL record (its own object) does not serve the content the bucket
// owner wrote over it between the decision and the read.
func TestGetDecidedOnReadVersion(t *testing.T) {
	var ob *overwriteBeforeRead
	srv := newTestServerOver(t, Config{Credentials: aclCreds()}, func(s backend.Store) backend.Store {
		ob = &overwriteBeforeRead{Store: s, key: "k"}
		return ob
	})
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="b0b"`),
		GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")}); err != nil {
		t.Fatal(err)
	}
	ob.hook = func() {
		if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
			t.Error(err)
		}
	}
	ob.armed.Store(true)
	out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
	if err == nil {
		body, _ := io.ReadAll(out.Body)
		if strings.Contains(string(body), "alice") {
			t.Errorf("bob's GET served the bucket owner's overwrite: %q", body)
		}
	}
}
