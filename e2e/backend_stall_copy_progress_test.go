package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// An UploadPartCopy reads its source through a resuming reader. A source
// whose GET stops mid-body more than once, but moves megabytes between the
// stops, is a slow store making progress, not a dead one: the copy must
// succeed. Each stop here comes after half of what is left was delivered.
func TestBackendStallPartCopyProgressBetweenStalls(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "cpprog")
	putObj(t, c, "cpprog", "big", patternBytes(21, 12*mib))
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("cpprog"), Key: aws.String("pc")})
	if err != nil {
		t.Fatal(err)
	}
	copyPart := func(ctx context.Context, n int32) error {
		_, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("cpprog"), Key: aws.String("pc"),
			UploadId: cr.UploadId, PartNumber: aws.Int32(n), CopySource: aws.String("cpprog/big")})
		return err
	}
	t.Run("two stalls, 6 and 3 MiB of progress after each", func(t *testing.T) {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenStallBody},
			faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 2, Fault: faultproxy.ForwardThenStallBody})
		start := time.Now()
		err := copyPart(ctxT(t), 1)
		t.Logf("%v after %v; store saw %d GETs", err, time.Since(start), len(fp.Requests(faultproxy.GetObject)))
		if err != nil {
			t.Errorf("UploadPartCopy whose source stalled twice, with progress between: %v", err)
		}
	})
	delayed := faultproxy.Rule{Op: faultproxy.UploadPart, Attempt: 1, Fault: faultproxy.Delay, Delay: stallBound * 7 / 10}
	t.Run("control: an answer in 0.7 of the bound", func(t *testing.T) {
		fp.Reset()
		fp.Inject(delayed)
		if err := copyPart(ctxT(t), 3); err != nil {
			t.Errorf("UploadPartCopy whose part upload is answered in 0.7 of the bound: %v", err)
		}
	})
	t.Run("a stall in two calls, then an answer within the bound", func(t *testing.T) {
		// Each call stalls once and is retried, or resumed, with
		// progress. The request's budget then has half a bound left, and
		// every later backend call of it gets that as its bound: a store
		// answering in 0.7 of the configured bound is now cut.
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.HeadObject, Attempt: 1, Fault: faultproxy.Stall},
			faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenStallBody}, delayed)
		start := time.Now()
		err := copyPart(ctxT(t), 2)
		t.Logf("%v after %v; HEADs %d GETs %d part uploads %d", err, time.Since(start), len(fp.Requests(faultproxy.HeadObject)),
			len(fp.Requests(faultproxy.GetObject)), len(fp.Requests(faultproxy.UploadPart)))
		if err != nil {
			t.Errorf("UploadPartCopy: %v", err)
		}
	})
}
