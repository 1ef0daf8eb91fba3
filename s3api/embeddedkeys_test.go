package s3api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Through s3seal on the embedded store: directory markers are stored and
// listed, a key under an object is 404 NoSuchKey, and what the store
// cannot hold is a 4xx naming the limit, never a 500 or 503.
func TestEmbeddedKeyShapesThroughS3seal(t *testing.T) {
	_, ctx, c := newBucketServer(t, adminCreds())
	b := aws.String("bkt")
	for _, k := range []string{"photos/", "photos/2024/", "photos/2024/a.jpg", "obj"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader(strings.Repeat("x", len(k)%3))}); err != nil {
			t.Fatalf("PUT %s: %v", k, err)
		}
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("photos/")})
	if err != nil || aws.ToInt64(head.ContentLength) != int64(len("photos/")%3) {
		t.Fatalf("HEAD photos/: %v %v", head, err)
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("photos/"), Delimiter: aws.String("/")})
	if err != nil || len(list.Contents) != 1 || aws.ToString(list.Contents[0].Key) != "photos/" ||
		len(list.CommonPrefixes) != 1 || aws.ToString(list.CommonPrefixes[0].Prefix) != "photos/2024/" {
		t.Fatalf("listing photos/: %+v %v", list, err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("obj/x")})
	checkErr(t, "GET under an object", err, "NoSuchKey", "The specified key does not exist.")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("obj/x")})
	if httpStatus(err) != http.StatusNotFound {
		t.Errorf("HEAD under an object: %v, want 404", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("obj/x"), Body: strings.NewReader("x")})
	if apiCode(err) != "InvalidArgument" || httpStatus(err) != 400 || !strings.Contains(apiMessage(err), "embedded store cannot hold") {
		t.Errorf("PUT under an object: %v, want 400 InvalidArgument naming the limit", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("photos"), Body: strings.NewReader("x")})
	if apiCode(err) != "InvalidArgument" || httpStatus(err) != 400 || !strings.Contains(apiMessage(err), `keys under "photos/" exist`) {
		t.Errorf("PUT beside a prefix: %v, want 400 InvalidArgument naming the limit", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("d/" + strings.Repeat("s", 256)), Body: strings.NewReader("x")})
	if apiCode(err) != "KeyTooLongError" || httpStatus(err) != 400 || !strings.Contains(apiMessage(err), "255 bytes") {
		t.Errorf("PUT with a 256-byte segment: %v, want 400 KeyTooLongError", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("photos/")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("photos/2024/a.jpg")}); err != nil {
		t.Errorf("object under a deleted marker: %v", err)
	}
}
