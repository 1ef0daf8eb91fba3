package s3api

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/retry"
	"github.com/s3seal/s3seal/sealstore"
)

// A version id no store makes is 400 InvalidArgument "Invalid version id
// specified" on every operation that takes one; a well-formed id no
// version has is 404 NoSuchVersion (HEAD: a bare 404; DELETE: 204, as S3
// answers a delete of a missing version). The ULID is versitygw's kind of
// id, which the embedded store never makes.
func TestVersionIDValidatedEverywhere(t *testing.T) {
	url := newEmbeddedFullServer(t)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	b, k := aws.String("bkt"), aws.String("obj")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("data")}); err != nil {
		t.Fatal(err)
	}
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("dst")})
	if err != nil {
		t.Fatal(err)
	}
	tags := &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}
	until := time.Now().Add(time.Hour)
	ops := map[string]func(vid *string) error{
		"GetObject": func(v *string) error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"HeadObject": func(v *string) error {
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"DeleteObject": func(v *string) error {
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"GetObjectTagging": func(v *string) error {
			_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"PutObjectTagging": func(v *string) error {
			_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k, VersionId: v, Tagging: tags})
			return err
		},
		"DeleteObjectTagging": func(v *string) error {
			_, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"GetObjectRetention": func(v *string) error {
			_, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"PutObjectRetention": func(v *string) error {
			_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: k, VersionId: v,
				Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
			return err
		},
		"GetObjectLegalHold": func(v *string) error {
			_, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: k, VersionId: v})
			return err
		},
		"PutObjectLegalHold": func(v *string) error {
			_, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: k, VersionId: v,
				LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}})
			return err
		},
		"GetObjectAttributes": func(v *string) error {
			_, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k, VersionId: v,
				ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag}})
			return err
		},
		"CopyObject": func(v *string) error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("dst"), CopySource: aws.String("bkt/obj?versionId=" + *v)})
			return err
		},
		"UploadPartCopy": func(v *string) error {
			_, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("dst"), UploadId: mp.UploadId,
				PartNumber: aws.Int32(1), CopySource: aws.String("bkt/obj?versionId=" + *v)})
			return err
		},
	}
	for name, op := range ops {
		// Malformed: InvalidArgument, with S3's words (HEAD: a bare 400).
		for _, bad := range []string{"invalid_versionId", "non_existing_version_id", "../../secret.txt", "01K97XE6PJQ1A4X5TJFDHK4EM!"} {
			err := op(aws.String(bad))
			if name == "HeadObject" {
				if httpStatus(err) != 400 {
					t.Errorf("%s %q: %v, want 400", name, bad, err)
				}
				continue
			}
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidArgument" || ae.ErrorMessage() != "Invalid version id specified" {
				t.Errorf("%s %q: %v, want InvalidArgument: Invalid version id specified", name, bad, err)
			}
		}
		// Well-formed, missing: NoSuchVersion.
		err := op(aws.String("01K97XE6PJQ1A4X5TJFDHK4EMC"))
		switch name {
		case "HeadObject":
			if httpStatus(err) != 404 {
				t.Errorf("%s missing version: %v, want 404", name, err)
			}
		case "DeleteObject":
			if err != nil {
				t.Errorf("%s missing version: %v, want success", name, err)
			}
		default:
			if apiCode(err) != "NoSuchVersion" {
				t.Errorf("%s missing version: %v, want NoSuchVersion", name, err)
			}
		}
	}
	// A copy source by version id in a bucket never versioned: its HEAD
	// finds nothing either, and that is NoSuchVersion too.
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain")}); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, "plain", "obj"); err != nil {
		t.Fatal(err)
	}
	src := aws.String("plain/obj?versionId=01BX5ZZKBKACTAV9WEVGEMMVS0")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("dst"), CopySource: src})
	if apiCode(err) != "NoSuchVersion" {
		t.Errorf("CopyObject from a bucket without versions: %v, want NoSuchVersion", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plain2")}); err != nil {
		t.Fatal(err)
	}
	pmp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("plain2"), Key: aws.String("dst")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("plain2"), Key: aws.String("dst"), UploadId: pmp.UploadId,
		PartNumber: aws.Int32(1), CopySource: src})
	if apiCode(err) != "NoSuchVersion" {
		t.Errorf("UploadPartCopy from a bucket without versions: %v, want NoSuchVersion", err)
	}
}

// GetObjectAttributes of a delete marker by its id is 404 NoSuchKey with
// x-amz-delete-marker, as versitygw's suite expects of S3.
func TestAttributesOfDeleteMarkerByID(t *testing.T) {
	url := newEmbeddedFullServer(t)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	b, k := aws.String("bkt"), aws.String("obj")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("data")}); err != nil {
		t.Fatal(err)
	}
	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k})
	if err != nil || del.VersionId == nil {
		t.Fatalf("delete: %+v %v", del, err)
	}
	for _, v := range []*string{del.VersionId, nil} {
		_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: k, VersionId: v,
			ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesEtag}})
		var re *smithyhttp.ResponseError
		if apiCode(err) != "NoSuchKey" || !errors.As(err, &re) || re.Response.Header.Get("x-amz-delete-marker") != "true" {
			t.Errorf("attributes of the marker (id %v): %v, want NoSuchKey with x-amz-delete-marker", aws.ToString(v), err)
		}
	}
}

// newEmbeddedFullServer is newTestServer over the embedded store with its
// sub-resources forwarded (tags, Object Lock) and retries, as serve sets
// it up.
func newEmbeddedFullServer(t *testing.T) string {
	t.Helper()
	return newEmbeddedFullServerFor(t, Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true}})
}

// newEmbeddedFullServerFor is newEmbeddedFullServer for creds.
func newEmbeddedFullServerFor(t *testing.T, creds Credentials) string {
	t.Helper()
	be := embeddedStore(t)
	kr := testKeyring()
	var err error
	cfg := Config{Credentials: creds}
	// Wrapped as serve wraps it (its SourceReader reads copy sources).
	if cfg.Store, err = sealstore.New(retry.NewStore(be, retry.Policies{}), kr, sealstore.Options{SpoolDir: t.TempDir(), Settings: be.(backend.Forwarder)}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestNullVersionInVersionedBucket: ?versionId=null in a bucket that
// only ever held versioned writes names no version; s3seal must not answer
// the current one as "null" (echoVersion).
func TestNullVersionInVersionedBucket(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	b := aws.String("vbkt")
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
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")})
	if err == nil {
		t.Errorf("GET ?versionId=null answered version %q", aws.ToString(g.VersionId))
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")})
	if err == nil {
		t.Errorf("HEAD ?versionId=null answered version %q", aws.ToString(h.VersionId))
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}}); err == nil {
		t.Errorf("PUT ?tagging&versionId=null succeeded")
	}
	t.Logf("last: %v", err)
}
