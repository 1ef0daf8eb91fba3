package e2e

// Review i10b (branch review-i10b): proving tests against the s3seal
// binary in front of moto. Tests named TestReviewI10b* are EXPECTED TO
// FAIL against the current code: each demonstrates a finding.

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// DELETE ?versionId= (empty) is refused by s3seal with 400
// InvalidArgument "Version id cannot be the empty string", but the same
// empty version id in a DeleteObjects entry (<VersionId></VersionId>) is
// taken for "no version": in a versioned bucket the entry makes a delete
// marker that hides the object, reported as deleted. Expected: that
// entry's error (InvalidArgument), the object still current.
func TestReviewI10bDeleteObjectsEmptyVersionID(t *testing.T) {
	p := startS3seal(t, sealOpts{Backend: startMoto(t)})
	c := sdkFor(t, p)
	ctx := ctxT(t)
	const b = "review-empty-vid"
	mustCreateBucket(t, c, b)
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("keep me")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String("")})
	t.Logf("DeleteObject versionId=\"\": %v", err)
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("k"), VersionId: aws.String("")}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range out.Deleted {
		t.Logf("DeleteObjects deleted %q marker=%v markerVersion=%q", aws.ToString(d.Key), aws.ToBool(d.DeleteMarker), aws.ToString(d.DeleteMarkerVersionId))
	}
	for _, e := range out.Errors {
		t.Logf("DeleteObjects error %q %s", aws.ToString(e.Key), aws.ToString(e.Code))
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")}); err != nil {
		t.Errorf("after a DeleteObjects entry with an empty VersionId the object is hidden (HEAD: %v); want that entry refused as DELETE ?versionId= is", err)
	}
}
