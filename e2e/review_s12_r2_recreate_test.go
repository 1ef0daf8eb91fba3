package e2e

// Review s12 R2 (FAILS on purpose: a finding). CreateBucket of a bucket that exists in the store but
// that this s3seal process did not create (restart: the creators map is
// in memory), with tags: the existing bucket's tags must not change.

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

func TestR2FixedRecreateBucketAfterRestartReplacesTags(t *testing.T) {
	m := startMoto(t)
	o := sealOpts{Backend: m, Key: randomKey(t)}
	ctx := context.Background()
	tags := func(v string) *types.CreateBucketConfiguration {
		return &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String(v)}}}
	}
	p1 := startS3seal(t, o)
	c1 := sdkFor(t, p1)
	b := aws.String("r2-recreate")
	if _, err := c1.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, CreateBucketConfiguration: tags("first")}); err != nil {
		t.Fatal(err)
	}
	p1.Stop()
	p2 := startS3seal(t, o)
	c2 := sdkFor(t, p2)
	_, err := c2.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, CreateBucketConfiguration: tags("second")})
	t.Logf("second CreateBucket after restart: %v", err)
	got, gerr := c2.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: b})
	if gerr != nil {
		t.Fatalf("GetBucketTagging: %v", gerr)
	}
	v := ""
	for _, tg := range got.TagSet {
		v = aws.ToString(tg.Value)
	}
	t.Logf("tags now: team=%s", v)
	if v != "first" {
		t.Errorf("a CreateBucket of an existing bucket (answered %v) replaced its tags: team=%s", err, v)
	}
}

// TestR2FixedRecreateBucketTagFailureDeletesExisting: the same CreateBucket
// of an existing (empty) bucket after a restart, when the store fails the
// PUT ?tagging (503 SlowDown here, every attempt, through the fault proxy): configureNewBucket
// takes the bucket for the one it just made and DELETES it. Expected: the
// bucket, which existed before the request, still exists.
func TestR2FixedRecreateBucketTagFailureDeletesExisting(t *testing.T) {
	m := startMoto(t)
	fp, err := faultproxy.Start(m.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fp.Close() })
	o := sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Key: randomKey(t)}
	ctx := context.Background()
	p1 := startS3seal(t, o)
	c1 := sdkFor(t, p1)
	b := aws.String("r2-victim")
	if _, err := c1.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	p1.Stop()
	p2 := startS3seal(t, o)
	c2 := sdkFor(t, p2)
	// The proxy classifies PUT /bucket?tagging as CreateBucket: attempt 1
	// is the CreateBucket itself, the next ones the ?tagging (retried).
	fp.Reset()
	for a := 2; a <= 8; a++ {
		fp.Inject(faultproxy.Rule{Op: faultproxy.CreateBucket, Attempt: a, Fault: faultproxy.SlowDown})
	}
	_, cerr := c2.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b,
		CreateBucketConfiguration: &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("x")}}}})
	fp.Reset()
	t.Logf("CreateBucket of the existing bucket: %v", cerr)
	if _, err := c2.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: b}); err != nil {
		t.Errorf("the bucket that existed before the CreateBucket is gone: HeadBucket %v", err)
	}
}
