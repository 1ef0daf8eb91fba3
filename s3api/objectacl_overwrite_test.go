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
	"github.com/s3seal/s3seal/sealstore"
)

// recordDeleteFails answers 503 to the removal of an object record once
// armed (a store failing for a moment).
type recordDeleteFails struct {
	backend.Store
	armed atomic.Bool
}

func (r *recordDeleteFails) DeleteObject(ctx context.Context, bucket, key string) error {
	if r.armed.Load() && strings.HasPrefix(key, sealstore.ObjectRecordPrefix) {
		return &backend.Error{Op: "DeleteObject", Code: "ServiceUnavailable", StatusCode: 503, Message: "Please reduce your request rate."}
	}
	return r.Store.DeleteObject(ctx, bucket, key)
}

// TestOverwriteNotReadableByPreviousWriter: the bucket owner overwriting
// an object another account wrote (whose ACL record names that account
// as owner) does not leave the new content readable by that account,
// even when the store fails to remove the old record.
func TestOverwriteNotReadableByPreviousWriter(t *testing.T) {
	var rd *recordDeleteFails
	srv := newTestServerOver(t, Config{Credentials: aclCreds()}, func(s backend.Store) backend.Store {
		rd = &recordDeleteFails{Store: s}
		return rd
	})
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	createBucketBobWrites(t, alice, *b)
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")}); err != nil {
		t.Fatal(err)
	}
	rd.armed.Store(true)
	_, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")})
	t.Logf("alice's overwrite: %v", err)
	rd.armed.Store(false)
	out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
	if err == nil {
		body, _ := io.ReadAll(out.Body)
		if strings.Contains(string(body), "alice") {
			t.Errorf("bob read the bucket owner's overwrite: %q", body)
		}
	}
}
