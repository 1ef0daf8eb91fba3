package s3api

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestNullVersionACLGoesWithItsContent: an ACL put on the "null" version
// of a key (versionId=null) is that content's: a write that replaces the
// null version (a bucket without versioning, or with versioning
// suspended) gives the new content the default ACL, so a read naming
// versionId=null is not opened by the replaced content's grants.
func TestNullVersionACLGoesWithItsContent(t *testing.T) {
	for _, suspended := range []bool{false, true} {
		name := "unversioned"
		if suspended {
			name = "suspended"
		}
		t.Run(name, func(t *testing.T) {
			url := newTestServer(t, aclCreds())
			ctx := context.Background()
			alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
			b, k := aws.String("bkt"), aws.String("k")
			if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
				t.Fatal(err)
			}
			if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("old, shared")}); err != nil {
				t.Fatal(err)
			}
			setVersioning := func(s types.BucketVersioningStatus) {
				if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
					VersioningConfiguration: &types.VersioningConfiguration{Status: s}}); err != nil {
					t.Fatal(err)
				}
			}
			if suspended {
				// The null version is an older one when its ACL is put.
				setVersioning(types.BucketVersioningStatusEnabled)
				if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("v2")}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, VersionId: aws.String("null"),
				GrantRead: aws.String(`id="b0b"`), GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
				t.Fatalf("PutObjectAcl versionId=null: %v", err)
			}
			if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: aws.String("null")}); err != nil {
				t.Logf("bob's read of the shared null version: %v", err)
			}
			if suspended {
				setVersioning(types.BucketVersioningStatusSuspended)
			}
			// The owner replaces the null version with a secret.
			if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
				t.Fatal(err)
			}
			for _, vid := range []*string{nil, aws.String("null")} {
				out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: vid})
				if err == nil {
					body, _ := io.ReadAll(out.Body)
					t.Errorf("bob read the owner's new null version (versionId %v): %q", aws.ToString(vid), body)
				}
			}
		})
	}
}
