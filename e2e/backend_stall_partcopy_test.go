package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// UploadPartCopy reads its source through a resuming reader: a source GET
// that stops mid-body once is resumed (the copy succeeds); one that stops
// every time ends in 503 within the bound.
func TestBackendStallPartCopySourceMidBody(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "mpfault")
	putObj(t, c, "mpfault", "big", patternBytes(11, 6*mib))
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("mpfault"), Key: aws.String("pc")})
	if err != nil {
		t.Fatal(err)
	}
	copyPart := func(ctx context.Context) error {
		_, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("mpfault"), Key: aws.String("pc"),
			UploadId: cr.UploadId, PartNumber: aws.Int32(1), CopySource: aws.String("mpfault/big")})
		return err
	}
	t.Run("once", func(t *testing.T) {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenStallBody})
		start := time.Now()
		err := copyPart(ctxT(t))
		t.Logf("%v after %v; store saw %d GETs", err, time.Since(start), len(fp.Requests(faultproxy.GetObject)))
		if err != nil {
			t.Errorf("UploadPartCopy whose source stalled mid-body once: %v", err)
		}
	})
	t.Run("always", func(t *testing.T) {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody})
		wantStalled(t, "UploadPartCopy whose source always stalls mid-body", copyPart)
	})
	_ = http.StatusOK
}
