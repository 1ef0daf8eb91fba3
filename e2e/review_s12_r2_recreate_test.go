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
)

func TestR2BugRecreateBucketAfterRestartReplacesTags(t *testing.T) {
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
