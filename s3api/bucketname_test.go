package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3's bucket naming rules are applied by s3seal before the backend is
// asked (moto, for one, accepts "a..b").
func TestCreateBucketNameRules(t *testing.T) {
	url := newTestServer(t, adminCreds())
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	for _, name := range []string{
		"ab", "a234567890123456789012345678901234567890123456789012345678901234", "Abc", "a_b", "-ab", "ab-", ".ab", "ab.",
		"a..b", "192.168.5.4", "xn--abc", "sthree-abc", "amzn-s3-demo-abc", "abc-s3alias", "abc--ol-s3", "abc.mrap",
		"abc--table-s3",
	} {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
		checkErr(t, "create "+name, err, "InvalidBucketName", "The specified bucket is not valid.")
	}
	for _, name := range []string{"abc", "a.b-c", "a234567890123456789012345678901234567890123456789012345678901", "192.168.5.a", "my-xn--b"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Errorf("create %s: %v", name, err)
		}
	}
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 5 {
		t.Fatalf("buckets %v (%v), want only the 5 valid ones", lb, err)
	}
	// A name S3 allows but gofakes3's own check refuses (a one-letter
	// label) works on the embedded store like any other.
	b := aws.String("a.b-c")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("put into a.b-c: %v", err)
	}
	l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil || len(l.Contents) != 1 || aws.ToString(l.Contents[0].Key) != "k" || aws.ToInt64(l.Contents[0].Size) != 1 {
		t.Fatalf("list a.b-c: %+v %v", l, err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); err != nil {
		t.Fatalf("delete a.b-c: %v", err)
	}
	// Any other operation on a badly named bucket finds no such bucket.
	_, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("a..b")})
	if code := apiCode(err); code != "NoSuchBucket" && code != "InvalidBucketName" {
		t.Errorf("list a..b: %v", err)
	}
}
