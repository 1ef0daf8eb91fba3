package e2e

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// TestRecreateBucketAfterRestartKeepsTags: a CreateBucket with tags of a
// bucket that exists in the store but that this s3seal process did not
// create (a restart: which buckets it created is kept in memory) leaves the
// existing bucket's tags as they were.
func TestRecreateBucketAfterRestartKeepsTags(t *testing.T) {
	m := startMoto(t)
	o := sealOpts{Backend: m, Key: randomKey(t)}
	ctx := context.Background()
	tags := func(v string) *types.CreateBucketConfiguration {
		return &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String(v)}}}
	}
	p1 := startS3seal(t, o)
	c1 := sdkFor(t, p1)
	b := aws.String("recreate-tags")
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

// TestRecreateBucketTagFailureKeepsBucket: the same CreateBucket
// of an existing (empty) bucket after a restart, when the store fails the
// PUT ?tagging (503 SlowDown here, every attempt, through the fault
// proxy): the bucket, which existed before the request, still exists
// (configureNewBucket must not take it for the one it just made and
// delete it).
func TestRecreateBucketTagFailureKeepsBucket(t *testing.T) {
	_, fp := motoBehindProxy(t)
	o := sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Key: randomKey(t)}
	ctx := context.Background()
	p1 := startS3seal(t, o)
	c1 := sdkFor(t, p1)
	b := aws.String("recreate-victim")
	mustCreateVersionedBucket(t, c1, *b)
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

// TestCreateExistingBucketTagsRefusedKeepsBucket: a CreateBucket with
// tags, of a bucket that already exists on the store (created before this
// s3seal process, so not in its bucketCreators; moto, like AWS in
// us-east-1, answers re-creating one's own bucket with 200), when the
// store refuses the tags (a flaky 200-with-<Error>, which s3seal itself
// calls a store failure worth retrying): the existing bucket, with
// everything configured on it, is not deleted as if it were new.
func TestCreateExistingBucketTagsRefusedKeepsBucket(t *testing.T) {
	m, fp := motoBehindProxy(t)
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Args: fastRetries})
	direct := motoClient(t, m)
	// (the proxy classifies PUT ?tagging as CreateBucket: attempt 2 is the tags.)
	// The bucket exists before (another s3seal, a restart, an admin).
	mustCreateVersionedBucket(t, direct, "existing-tagged")
	c := sdkFor(t, p)
	fp.Inject(faultproxy.Rule{Op: faultproxy.CreateBucket, Attempt: 2, Fault: faultproxy.ErrorInBody, Code: "InvalidTag", Message: "refused"})
	_, err := c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("existing-tagged"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
	t.Logf("CreateBucket through s3seal: %v; store saw CreateBucket %d, Other %+v, DeleteBucket %d", err, len(fp.Requests(faultproxy.CreateBucket)), fp.Requests(faultproxy.Other), len(fp.Requests(faultproxy.DeleteBucket)))

	fp.Reset()
	if _, herr := direct.HeadBucket(ctxT(t), &s3.HeadBucketInput{Bucket: aws.String("existing-tagged")}); herr != nil {
		t.Errorf("the pre-existing bucket is gone after a refused CreateBucket: %v", herr)
	}
}
