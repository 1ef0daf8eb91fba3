package e2e

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// R3 FINDING (fixed; this test now guards it on the current code): a CreateBucket with
// tags, of a bucket that already exists on the store (created before this
// s3seal process, so not in its bucketCreators; moto, like AWS in
// us-east-1, answers re-creating one's own bucket with 200), puts the
// tags on the EXISTING bucket, and when the store refuses them s3seal's
// configureNewBucket deletes that existing bucket ("the new bucket is
// deleted again"; here the refusal is a flaky 200-with-<Error>, which
// s3seal itself calls a store failure worth retrying): a CreateBucket destroys a bucket it did not create,
// with everything configured on it.
func TestR3CreateBucketTagsRefusedDeletesExistingBucket(t *testing.T) {
	m := startMoto(t)
	fp, err := faultproxy.Start(m.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fp.Close() })
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Args: fastRetries})
	direct := motoClient(t, m)
	// (the proxy classifies PUT ?tagging as CreateBucket: attempt 2 is the tags.)
	// The bucket exists before (another s3seal, a restart, an admin).
	if _, err := direct.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("r3existing")}); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.PutBucketVersioning(ctxT(t), &s3.PutBucketVersioningInput{Bucket: aws.String("r3existing"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	c := sdkFor(t, p)
	fp.Inject(faultproxy.Rule{Op: faultproxy.CreateBucket, Attempt: 2, Fault: faultproxy.ErrorInBody, Code: "InvalidTag", Message: "refused"})
	_, err = c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("r3existing"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
	t.Logf("CreateBucket through s3seal: %v; store saw CreateBucket %d, Other %+v, DeleteBucket %d", err, len(fp.Requests(faultproxy.CreateBucket)), fp.Requests(faultproxy.Other), len(fp.Requests(faultproxy.DeleteBucket)))

	fp.Reset()
	if _, herr := direct.HeadBucket(ctxT(t), &s3.HeadBucketInput{Bucket: aws.String("r3existing")}); herr != nil {
		t.Errorf("the pre-existing bucket is gone after a refused CreateBucket: %v", herr)
	}
}
