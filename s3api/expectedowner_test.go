package s3api

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestExpectedBucketOwner: x-amz-expected-bucket-owner (and its source
// form on copies) is checked against the owner s3seal shows, the caller:
// another value is 403 AccessDenied and changes nothing; the caller's own
// key passes (it was 501 before).
func TestExpectedOwnerOnBucketOps(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	if err := put(ctx, c, "bkt", "k"); err != nil {
		t.Fatal(err)
	}
	other := aws.String("123456789012")
	for name, err := range map[string]error{
		"DeleteBucket": func() error {
			_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("bkt"), ExpectedBucketOwner: other})
			return err
		}(),
		"PutObject": func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("changed"), ExpectedBucketOwner: other})
			return err
		}(),
		"HeadObject": func() error {
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), ExpectedBucketOwner: other})
			return err
		}(),
		"CopyObject source": func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k2"), CopySource: aws.String("bkt/k"), ExpectedSourceBucketOwner: other})
			return err
		}(),
	} {
		if httpStatus(err) != 403 || (name != "HeadObject" && apiCode(err) != "AccessDenied") {
			t.Errorf("%s with another owner: %v, want 403 AccessDenied", name, err)
		}
	}
	if got := readObject(t, c, "bkt", "k"); got != "data" {
		t.Fatalf("object after refused requests: %q", got)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), ExpectedBucketOwner: aws.String("ak")}); err != nil {
		t.Fatalf("HeadObject with the caller as owner: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k2"), CopySource: aws.String("bkt/k"),
		ExpectedBucketOwner: aws.String("ak"), ExpectedSourceBucketOwner: aws.String("ak")}); err != nil {
		t.Fatalf("CopyObject with the caller as owners: %v", err)
	}
}
