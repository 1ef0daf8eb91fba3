package s3api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestRequestBucketNameChecked: a request whose bucket can be no bucket
// ("." and "..", which a store keeping buckets as directories takes for
// the directory of buckets; fewer than 3 characters; characters S3 never
// allowed) is 400 InvalidBucketName before anything else, signed or not;
// a copy source naming one is InvalidArgument. Nothing of the bucket it
// would reach is read or written.
func TestRequestBucketNameChecked(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/./bkt/k", "/../bkt/k", "/./bkt/.s3seal/bucket/owner", "/ab/k", "/a%2Fb/k", "/b$k/k"} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			req, _ := http.NewRequest(method, url+p, strings.NewReader("forged"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "<Code>InvalidBucketName</Code>") {
				t.Errorf("%s %s: %d %s, want 400 InvalidBucketName", method, p, resp.StatusCode, b)
			}
		}
	}
	for _, src := range []string{"./bkt/k", "../bkt/k", "ab/k"} {
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("copy"), CopySource: aws.String(src)}); errCode(err) != "InvalidArgument" {
			t.Errorf("copy from %s: %v, want InvalidArgument", src, err)
		}
	}
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(b) != "secret" {
		t.Errorf("the object after: %q", b)
	}
}
