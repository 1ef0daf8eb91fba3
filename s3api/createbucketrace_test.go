package s3api

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// slowOwnerDoc is a store slow to take a bucket's owner document.
type slowOwnerDoc struct{ backend.Store }

func (s slowOwnerDoc) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	if in.Key == sealstore.BucketDocPrefix+docOwner {
		time.Sleep(600 * time.Millisecond)
	}
	return s.Store.PutObject(ctx, in)
}

// TestNewBucketNotOpenBeforeItsOwner: between the store creating a bucket
// and s3seal keeping its owner, another account whose lists reach every
// bucket cannot make the bucket its own (an ACL granting every account), to
// keep after the creator's owner document lands.
func TestNewBucketNotOpenBeforeItsOwner(t *testing.T) {
	srv := newTestServerOver(t, Config{Credentials: aclCreds()}, func(be backend.Store) backend.Store { return slowOwnerDoc{be} })
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b := aws.String("bkt")
	var wg sync.WaitGroup
	wg.Add(1)
	var createErr error
	go func() {
		defer wg.Done()
		_, createErr = alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b})
	}()
	time.Sleep(300 * time.Millisecond) // the store has the bucket; its owner is being kept
	_, aclErr := bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicReadWrite})
	_, bobCreate := bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b})
	wg.Wait()
	if bobCreate == nil {
		t.Errorf("another account's CreateBucket while the bucket's owner was being kept: 200, want refused")
	}
	if createErr != nil {
		t.Fatal(createErr)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Errorf("another account put an ACL while the new bucket had no owner yet (%v); its listing of the creator's bucket: %v, want AccessDenied", aclErr, err)
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("planted"), Body: strings.NewReader("x")}); errCode(err) != "AccessDenied" {
		t.Errorf("another account put an ACL while the new bucket had no owner yet (%v); its PutObject in the creator's bucket: %v, want AccessDenied", aclErr, err)
	}
}
