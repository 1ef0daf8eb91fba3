package e2e

import (
	"bytes"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Version answers s3seal gives itself, whatever the store says (moto says
// less than S3 here; versitygw's suite checks them): a malformed id is
// InvalidArgument and a missing one NoSuchVersion on every sub-resource
// and HEAD; a sub-resource of a delete marker by id is 405
// MethodNotAllowed; a delete by id names the version, and says when it
// removed a marker; GET ?versionId=null and tagging name their version;
// UploadPartCopy names its source's version.
func TestVersionAnswersOnEachStore(t *testing.T) {
	t.Parallel()
	onEachStore(t, func(t *testing.T, p *sealProc) {
		c := sdkFor(t, p)
		ctx := ctxT(t)
		b, k := aws.String("vanswers"), aws.String("obj")
		mustCreateBucket(t, c, *b)
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: bytes.NewReader([]byte("null version"))}); err != nil {
			t.Fatal(err)
		}
		// moto answers a bare 400 to a HEAD by an id not its own here.
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String("01G65Z755AFWAKHE12NY0CQ9FH")})
		if status(err) != 404 {
			t.Errorf("HEAD of a missing version, bucket never versioned: %v, want 404", err)
		}
		mustEnableVersioning(t, c, *b)
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: aws.String("null")})
		if err != nil || aws.ToString(g.VersionId) != "null" {
			t.Errorf("GET ?versionId=null: %v, version %q", err, aws.ToString(g.VersionId))
		}
		if g != nil {
			g.Body.Close()
		}
		v1, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: bytes.NewReader([]byte("v1"))})
		if err != nil {
			t.Fatal(err)
		}
		tags := &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}
		pt, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k, VersionId: v1.VersionId, Tagging: tags})
		if err != nil || aws.ToString(pt.VersionId) != aws.ToString(v1.VersionId) {
			t.Errorf("PutObjectTagging by id: %v, version %q, want %q", err, aws.ToString(pt.VersionId), aws.ToString(v1.VersionId))
		}
		const missing = "01K97XE6PJQ1A4X5TJFDHK4EMC"
		_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String(missing)})
		if status(err) != 404 {
			t.Errorf("HEAD of a missing version: %v, want 404", err)
		}
		_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String("invalid_versionId")})
		if status(err) != 400 {
			t.Errorf("HEAD of a malformed id: %v, want 400", err)
		}
		_, err = c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: k, VersionId: aws.String(missing)})
		if code(err) != "NoSuchVersion" {
			t.Errorf("DeleteObjectTagging of a missing version: %v, want NoSuchVersion", err)
		}
		_, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k, VersionId: aws.String("invalid_versionId")})
		if code(err) != "InvalidArgument" {
			t.Errorf("GetObjectTagging of a malformed id: %v, want InvalidArgument", err)
		}
		del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k})
		if err != nil || !aws.ToBool(del.DeleteMarker) {
			t.Fatalf("delete: %+v %v", del, err)
		}
		_, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k, VersionId: del.VersionId})
		if code(err) != "MethodNotAllowed" {
			t.Errorf("GetObjectTagging of a delete marker: %v, want MethodNotAllowed", err)
		}
		_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k, VersionId: del.VersionId, Tagging: tags})
		if code(err) != "MethodNotAllowed" {
			t.Errorf("PutObjectTagging of a delete marker: %v, want MethodNotAllowed", err)
		}
		// UploadPartCopy names the source version it read.
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("dst")})
		if err != nil {
			t.Fatal(err)
		}
		pc, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("dst"), UploadId: mp.UploadId, PartNumber: aws.Int32(1),
			CopySource: aws.String(*b + "/obj?versionId=" + aws.ToString(v1.VersionId))})
		if err != nil || aws.ToString(pc.CopySourceVersionId) != aws.ToString(v1.VersionId) {
			t.Errorf("UploadPartCopy: %v, source version %q, want %q", err, aws.ToString(pc.CopySourceVersionId), aws.ToString(v1.VersionId))
		}
		// Deleting the marker by id says it was one; a missing version's
		// delete names it.
		dm, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: del.VersionId})
		if err != nil || !aws.ToBool(dm.DeleteMarker) || aws.ToString(dm.VersionId) != aws.ToString(del.VersionId) {
			t.Errorf("delete of the marker by id: %+v %v", dm, err)
		}
		dn, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: aws.String(missing)})
		if err != nil || aws.ToString(dn.VersionId) != missing {
			t.Errorf("delete of a missing version: %+v %v", dn, err)
		}
	})
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
