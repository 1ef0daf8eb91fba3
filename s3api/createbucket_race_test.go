package s3api

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
)

// lateHeadBucket answers its first HeadBucket of bucket as the store
// found it, but late: after release is closed (a slow answer, or a
// CreateBucket through another s3seal process meanwhile). It re-creates
// as AWS does in us-east-1 (recreateOK).
type lateHeadBucket struct {
	recreateOK
	first   atomic.Bool
	asked   chan struct{}
	release chan struct{}
	bucket  string
}

func (l *lateHeadBucket) HeadBucket(ctx context.Context, bucket string) error {
	err := l.recreateOK.HeadBucket(ctx, bucket)
	if bucket == l.bucket {
		if l.first.CompareAndSwap(false, true) {
			close(l.asked)
			<-l.release
		}
	}
	return err
}

// TestCreateBucketRaceKeepsFirstOwner: of two CreateBuckets of one name by
// different accounts, where the second found the bucket missing before
// the first created it (a store that answers a re-create with 200, as AWS
// in us-east-1), the first keeps the bucket: the second does not become
// its owner and is answered BucketAlreadyExists.
func TestCreateBucketRaceKeepsFirstOwner(t *testing.T) {
	l := &lateHeadBucket{asked: make(chan struct{}), release: make(chan struct{}), bucket: "race"}
	srv := newTestServerOver(t, Config{Credentials: aclCreds()}, func(s backend.Store) backend.Store {
		l.recreateOK = recreateOK{s}
		return l
	})
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	bobErr := make(chan error, 1)
	go func() {
		_, err := bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("race")})
		bobErr <- err
	}()
	<-l.asked
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("race")}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("k"), Body: strings.NewReader("alice's")}); err != nil {
		t.Fatal(err)
	}
	close(l.release)
	if err := <-bobErr; errCode(err) != "BucketAlreadyExists" {
		t.Errorf("the second CreateBucket: %v, want BucketAlreadyExists", err)
	}
	if _, err := alice.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("race"), Key: aws.String("k")}); err != nil {
		t.Errorf("the first creator reading its object after the second CreateBucket: %v", err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("race"), Key: aws.String("k")}); errCode(err) != "AccessDenied" {
		t.Errorf("the second creator reading the first's object: %v, want AccessDenied", err)
	}
}
