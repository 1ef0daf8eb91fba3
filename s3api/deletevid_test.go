package s3api

import (
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A DeleteObjects entry with an empty <VersionId> names no version: that
// entry is NoSuchVersion (as S3 answers it) and the object stays; the
// other entries of the request are deleted.
func TestDeleteObjectsEmptyVersionIDRefused(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	for _, k := range []string{"keep", "gone"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("keep"), VersionId: aws.String("")}, {Key: aws.String("gone")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "keep" || aws.ToString(out.Errors[0].Code) != "NoSuchVersion" {
		t.Errorf("errors %+v, want one NoSuchVersion for keep", out.Errors)
	}
	if len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "gone" {
		t.Errorf("deleted %+v, want gone only", out.Deleted)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("keep")})
	if err != nil {
		t.Fatalf("keep after an entry with an empty VersionId: %v", err)
	}
	data, _ := io.ReadAll(g.Body)
	g.Body.Close()
	if string(data) != "keep" {
		t.Errorf("keep reads %q", data)
	}
}
