package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ListObjectVersions names each version's checksum algorithm and type, as
// S3 does, from the listing's first HEAD and from the cache after.
func TestListVersionsChecksums(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]types.ChecksumAlgorithm{}
	for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmSha256} {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("data"), ChecksumAlgorithm: alg})
		if err != nil {
			t.Fatal(err)
		}
		want[aws.ToString(out.VersionId)] = alg
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // HEADs, then the cache
		lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b})
		if err != nil {
			t.Fatal(err)
		}
		if len(lv.Versions) != 2 || len(lv.DeleteMarkers) != 1 {
			t.Fatalf("round %d: %d versions, %d markers", round, len(lv.Versions), len(lv.DeleteMarkers))
		}
		for _, v := range lv.Versions {
			alg := want[aws.ToString(v.VersionId)]
			if len(v.ChecksumAlgorithm) != 1 || v.ChecksumAlgorithm[0] != alg || v.ChecksumType != types.ChecksumTypeFullObject {
				t.Errorf("round %d: version %s: %v %q, want [%s] FULL_OBJECT", round, aws.ToString(v.VersionId), v.ChecksumAlgorithm, v.ChecksumType, alg)
			}
		}
	}
}

// A negative max-keys on ListObjectVersions is InvalidArgument in S3's
// words for it; PutObjectLockConfiguration on a bucket without versioning
// is InvalidBucketState in S3's words (no period).
func TestVersionsRefusalWords(t *testing.T) {
	url := newEmbeddedFullServer(t)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	b := aws.String("bkt")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	_, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, MaxKeys: aws.Int32(-123)})
	if msg := apiMessage(err); apiCode(err) != "InvalidArgument" || msg != "max-keys cannot be negative" {
		t.Errorf("negative max-keys: %v", err)
	}
	_, err = c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b,
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}})
	if msg := apiMessage(err); apiCode(err) != "InvalidBucketState" || msg != "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration" {
		t.Errorf("lock configuration without versioning: %v", err)
	}
}

// DeleteBucket of a bucket with versioning and objects asks, in S3's
// words, for every version to go; without versioning the words are
// shorter.
func TestDeleteBucketNotEmptyWords(t *testing.T) {
	url := newTestServer(t, adminCreds())
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	for b, status := range map[string]types.BucketVersioningStatus{"ver": types.BucketVersioningStatusEnabled,
		"susp": types.BucketVersioningStatusSuspended, "plain": ""} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
		if status != "" {
			if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(b),
				VersioningConfiguration: &types.VersioningConfiguration{Status: status}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := put(ctx, c, b, "k"); err != nil {
			t.Fatal(err)
		}
		want := "The bucket you tried to delete is not empty."
		if status != "" {
			want += " You must delete all versions in the bucket."
		}
		_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(b)})
		if apiCode(err) != "BucketNotEmpty" || apiMessage(err) != want {
			t.Errorf("%s: %v, want BucketNotEmpty: %s", b, err, want)
		}
	}
}
