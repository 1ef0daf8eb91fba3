package e2e

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// The store throttles HEADs (503 SlowDown, outlasting s3seal's retries)
// while ListMultipartUploads works: `aws s3api list-multipart-uploads`
// through s3seal lists the upload, without the checksum its unreadable
// state would give.
func TestThrottledStateHeadsListMultipartUploadsAWSCLI(t *testing.T) {
	p, fp := startFaultyOn(t, "moto")
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "throttled-heads")
	if _, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("throttled-heads"), Key: aws.String("k"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256}); err != nil {
		t.Fatal(err)
	}
	fp.Inject(faultproxy.Rule{Op: faultproxy.HeadObject, Fault: faultproxy.SlowDown})
	a := newAWSCLI(t, p)
	out, errOut, err := tryTool(t, a.env, "aws", "--endpoint-url", a.endpoint, "s3api", "list-multipart-uploads", "--bucket", "throttled-heads")
	if err != nil || !strings.Contains(out, `"k"`) {
		t.Fatalf("list-multipart-uploads fails when only the state HEADs are throttled: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if strings.Contains(out, "SHA256") {
		t.Errorf("the upload whose state could not be read is listed with a checksum:\n%s", out)
	}
	if n := len(fp.Requests(faultproxy.ListMultipartUploads)); n == 0 {
		t.Errorf("the backend saw no ListMultipartUploads")
	}
}

// TestListUploadsDelimiterPagingAWSCLI, with a real client: `aws s3api
// list-multipart-uploads --delimiter / --page-size 1` through s3seal on
// moto lists the common prefix "a/" and then "b": a page after key-marker
// "a/" must not roll its keys up into "a/" again, or botocore's paginator
// stops with "The same next token was received twice".
func TestListUploadsDelimiterPagingAWSCLI(t *testing.T) {
	p, c := startWithBucket(t, sealOpts{Backend: startMoto(t)}, mustCreateBucket, "uploads-paging")
	for _, k := range []string{"a/1", "a/2", "b"} {
		if _, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("uploads-paging"), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	a := newAWSCLI(t, p)
	out, errOut, err := tryTool(t, a.env, "aws", "--endpoint-url", a.endpoint, "s3api", "list-multipart-uploads",
		"--bucket", "uploads-paging", "--delimiter", "/", "--page-size", "1")
	if err != nil || !strings.Contains(out, `"b"`) {
		t.Errorf("aws s3api list-multipart-uploads --delimiter / --page-size 1: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}
