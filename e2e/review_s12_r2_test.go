package e2e

// Review s12 R2: ?versionId=null in a versioned bucket without a null
// version, on moto and the embedded store: never the current version
// relabelled "null" (echoVersion). Passes: the attack held.

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func TestR2HeldNullVersionEcho(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		ctx := context.Background()
		c := sdkFor(t, p)
		b := aws.String("r2-null")
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("v1")}); err != nil {
			t.Fatal(err)
		}
		if g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")}); err == nil {
			t.Errorf("GET ?versionId=null answered version %q", aws.ToString(g.VersionId))
		}
		if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")}); err == nil {
			t.Errorf("HEAD ?versionId=null answered version %q", aws.ToString(h.VersionId))
		}
		if _, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")}); err == nil {
			t.Errorf("GET ?tagging&versionId=null succeeded")
		}
	})
}
