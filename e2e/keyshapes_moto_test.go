package e2e

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestKeyShapesAndNamesOnMoto: in front of moto, which takes what S3
// takes, the key layouts the embedded store refuses all work through
// s3seal (a directory marker, an object beside keys under its name), a key
// under an object is NoSuchKey, and a bucket name S3 refuses is refused by
// s3seal although moto would take it.
func TestKeyShapesAndNamesOnMoto(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c := sdkFor(t, p)
	ctx := ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("a..b")})
	wantStatus(t, "create a..b", err, http.StatusBadRequest, "InvalidBucketName")
	if _, err := motoClient(t, m).HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("a..b")}); err == nil {
		t.Errorf("a..b reached moto")
	}
	mustCreateBucket(t, c, "shapes")
	b := aws.String("shapes")
	for _, k := range []string{"dir/", "obj", "obj/x", "obj/"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: bytes.NewReader([]byte(k))}); err != nil {
			t.Fatalf("PUT %s on moto: %v", k, err)
		}
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil || len(list.Contents) != 4 {
		t.Fatalf("listing: %+v %v", list, err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("obj/x/y")})
	wantStatus(t, "GET a key under an object", err, http.StatusNotFound, "NoSuchKey")
}
