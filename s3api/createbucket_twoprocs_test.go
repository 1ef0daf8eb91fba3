package s3api

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// heldOwnerDoc is a store slow to take a new bucket's owner document: it
// holds the first PUT of it until release closes.
type heldOwnerDoc struct {
	backend.Store
	once    sync.Once
	inside  chan struct{}
	release chan struct{}
}

func (h *heldOwnerDoc) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	if in.Key == sealstore.BucketDocPrefix+docOwner {
		h.once.Do(func() { close(h.inside); <-h.release })
	}
	return h.Store.PutObject(ctx, in)
}

// TestNewBucketIsNobodyElsesWhileItsOwnerIsKept: alice creates a bucket
// (with tags, and without) through one process while the store is slow to
// take its owner document; bob, whose lists reach every bucket through
// "*", asks another process meanwhile. The young bucket without an owner
// is SlowDown to him (not a bucket decided by his lists), and once
// alice's owner is kept he can neither list, write, delete nor change its
// ACL.
func TestNewBucketIsNobodyElsesWhileItsOwnerIsKept(t *testing.T) {
	for _, tagged := range []bool{false, true} {
		be, kr := embeddedStore(t), testKeyring()
		held := &heldOwnerDoc{Store: be, inside: make(chan struct{}), release: make(chan struct{})}
		serve := func(st0 backend.Store) *httptest.Server {
			st, err := sealstore.New(sealstore.Direct(st0), kr, sealstore.Options{SpoolDir: t.TempDir(), Settings: be.(backend.Forwarder)})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(New(Config{Credentials: aclCreds(), Store: st}))
			t.Cleanup(srv.Close)
			return srv
		}
		one, two := serve(held), serve(be)
		ctx := context.Background()
		alice := sdkClient(one.URL, "alice", "as")
		bob := s3.New(sdkClient(two.URL, "bob", "bs").Options(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
		b := aws.String("newbkt")
		in := &s3.CreateBucketInput{Bucket: b}
		if tagged {
			in.CreateBucketConfiguration = &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}}
		}
		created := make(chan error, 1)
		go func() {
			_, err := alice.CreateBucket(ctx, in)
			created <- err
		}()
		<-held.inside
		_, err := bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantFullControl: aws.String(`id="b0b"`)})
		if errCode(err) != "SlowDown" {
			t.Errorf("tagged %v: bob's PutBucketAcl through another process before alice's owner was kept: %v, want SlowDown", tagged, err)
		}
		if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("bob's")}); errCode(err) != "SlowDown" {
			t.Errorf("tagged %v: bob's PutObject before alice's owner was kept: %v, want SlowDown", tagged, err)
		}
		close(held.release)
		if err := <-created; err != nil {
			t.Fatalf("tagged %v: alice's CreateBucket: %v", tagged, err)
		}
		if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("secret"), Body: strings.NewReader("alice's")}); err != nil {
			t.Fatal(err)
		}
		if _, err := bob.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); errCode(err) != "AccessDenied" {
			t.Errorf("tagged %v: bob listing alice's new bucket: %v, want AccessDenied", tagged, err)
		}
		if _, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("secret")}); errCode(err) != "AccessDenied" {
			t.Errorf("tagged %v: bob deleting from alice's new bucket: %v, want AccessDenied", tagged, err)
		}
		if _, err := bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantFullControl: aws.String(`id="b0b"`)}); errCode(err) != "AccessDenied" {
			t.Errorf("tagged %v: bob's PutBucketAcl after: %v, want AccessDenied", tagged, err)
		}
	}
}
