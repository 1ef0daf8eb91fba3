package e2e

// Review s12 R2 (FAILS on purpose: a finding).

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestR2FixedDeleteObjectsBlankVersionID: a DeleteObjects entry whose
// <VersionId> is blank but not empty ("   ") is not checked the way
// DeleteObject's ?versionId is (checkVersionID / WellFormedVersionID):
// list.go refuses only "" and forwards the rest. It names no version, so S3
// answers that entry NoSuchVersion (or InvalidArgument) and nothing is
// deleted. Expected: an error entry, the object intact, no delete marker.
func TestR2FixedDeleteObjectsBlankVersionID(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		ctx := context.Background()
		c := sdkFor(t, p)
		for _, versioned := range []bool{false, true} {
			b := aws.String("r2-blank-plain")
			if versioned {
				b = aws.String("r2-blank-versioned")
			}
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
				t.Fatal(err)
			}
			if versioned {
				if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
					VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, blank := range []string{" ", "   ", "\t", "\n"} {
				k := aws.String("k")
				if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("keep me")}); err != nil {
					t.Fatal(err)
				}
				out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
					Objects: []types.ObjectIdentifier{{Key: k, VersionId: aws.String(blank)}}}})
				if err != nil {
					t.Logf("versioned=%v %q: DeleteObjects refused: %v", versioned, blank, err)
				} else {
					for _, d := range out.Deleted {
						t.Logf("versioned=%v %q: Deleted %s version %q marker %v", versioned, blank, aws.ToString(d.Key), aws.ToString(d.VersionId), aws.ToBool(d.DeleteMarker))
					}
					for _, e := range out.Errors {
						t.Logf("versioned=%v %q: Error %s %s", versioned, blank, aws.ToString(e.Code), aws.ToString(e.Message))
					}
				}
				if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k}); err != nil {
					t.Errorf("versioned=%v: DeleteObjects with <VersionId>%q</VersionId> deleted the current object: HEAD %v", versioned, blank, err)
				}
			}
		}
	})
}

// TestR2HeldDeleteObjectsPaddedVersionID: the same gap with a real id
// padded with blanks (" <id> "): DeleteObject refuses it, DeleteObjects
// forwards it. Held: neither store deletes version <id> (moto answers the
// entry Deleted, version " <id> ", which s3seal passes on: low).
func TestR2HeldDeleteObjectsPaddedVersionID(t *testing.T) {
	onEachStore(t, func(t *testing.T, p *sealProc) {
		ctx := context.Background()
		c := sdkFor(t, p)
		b := aws.String("r2-padded")
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
		k := aws.String("k")
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("v1")})
		if err != nil {
			t.Fatal(err)
		}
		v1 := aws.ToString(out.VersionId)
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: aws.String(" " + v1 + " ")}); err == nil {
			t.Fatalf("DeleteObject took the padded id")
		}
		d, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
			Objects: []types.ObjectIdentifier{{Key: k, VersionId: aws.String(" " + v1 + " ")}}}})
		if err == nil {
			for _, e := range d.Deleted {
				t.Logf("Deleted %s version %q", aws.ToString(e.Key), aws.ToString(e.VersionId))
			}
			for _, e := range d.Errors {
				t.Logf("Error %s %s", aws.ToString(e.Code), aws.ToString(e.Message))
			}
		}
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String(v1)}); err != nil {
			t.Errorf("DeleteObjects with <VersionId> %q deleted version %s: HEAD %v", " "+v1+" ", v1, err)
		}
	})
}
