package e2e

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// A store that sends an answer's headers (200) and then stops in the middle
// of its XML body (a listing, a completion, a sub-resource) stalled like
// one that never answered: the client gets 503 ServiceUnavailable within
// two timeouts.
func TestBackendStallsAfterHeaders(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "hdrs")
	for _, k := range []string{"a", "b", "c"} {
		putObj(t, c, "hdrs", k, patternBytes(6, 100))
	}
	check := func(t *testing.T, op faultproxy.Op, f func(ctx context.Context) error) {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: op, Fault: faultproxy.ForwardThenStallBody})
		wantStalled(t, string(op), f)
		fp.Reset()
	}
	t.Run("list", func(t *testing.T) {
		check(t, faultproxy.ListObjects, func(ctx context.Context) error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("hdrs")})
			return err
		})
	})
	t.Run("tagging", func(t *testing.T) {
		// s3seal forwards GET ?tagging to the store as it is.
		check(t, faultproxy.GetObject, func(ctx context.Context) error {
			_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("hdrs"), Key: aws.String("a")})
			return err
		})
	})
	t.Run("get-small", func(t *testing.T) {
		// The store stops within the object's first segment: s3seal has
		// sent nothing yet and can answer 503.
		check(t, faultproxy.GetObject, func(ctx context.Context) error {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("hdrs"), Key: aws.String("a")})
			if err == nil {
				_, err = io.ReadAll(out.Body)
				out.Body.Close()
			}
			return err
		})
	})
	t.Run("list-parts", func(t *testing.T) {
		mustCreateBucket(t, c, "mpfault")
		fp.Reset()
		id, _ := startFaultUpload(t, c, "listparts-hdrs", 92)
		check(t, faultproxy.ListParts, func(ctx context.Context) error {
			_, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("mpfault"), Key: aws.String("listparts-hdrs"), UploadId: aws.String(id)})
			return err
		})
	})
	t.Run("complete", func(t *testing.T) {
		fp.Reset()
		id, parts := startFaultUpload(t, c, "complete-hdrs", 91)
		fp.Inject(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Fault: faultproxy.ForwardThenStallBody})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err := completeRawCtx(ctx, c, "complete-hdrs", id, parts)
		d := time.Since(start)
		t.Logf("CompleteMultipartUpload whose answer stalled mid-body: %v after %v", err, d)
		if err != nil {
			wantStatus(t, "CompleteMultipartUpload", err, 503, "ServiceUnavailable")
		}
		if d > stallAnswerWithin {
			t.Errorf("CompleteMultipartUpload answered after %v, want within %v", d, stallAnswerWithin)
		}
		fp.Reset()
	})
	_ = time.Second
}
