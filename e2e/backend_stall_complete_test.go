package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// The store completes an upload and both of s3seal's attempts get no
// answer (headers never come, or the body stops): s3seal finds the object
// at the key is this upload's and answers the completion's success; the
// client's retry of it (as after a 503) succeeds too, never NoSuchUpload.
func TestBackendStallCompleteDoneThenRetried(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "mpfault")
	for i, fault := range []faultproxy.Fault{faultproxy.ForwardThenStall, faultproxy.ForwardThenStallBody} {
		key := []string{"done-stalled", "done-stalled-body"}[i]
		t.Run(key, func(t *testing.T) {
			fp.Reset()
			id, parts := startFaultUpload(t, c, key, uint64(93+i))
			fp.Inject(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Fault: fault})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := completeRawCtx(ctx, c, key, id, parts)
			if err != nil {
				t.Fatalf("completion the store did but never answered: %v", err)
			}
			if got, want := unquote(out.ETag), mpETag(parts[0].Data, parts[1].Data); got != want {
				t.Fatalf("completion ETag %s, want %s", got, want)
			}
			if n := len(fp.Requests(faultproxy.CompleteMultipartUpload)); n != 2 {
				t.Fatalf("the store saw %d completions, want 2 (one retry of a stall)", n)
			}
			fp.Reset()
			_, rerr := completeRawCtx(ctxT(t), c, key, id, parts)
			_, herr := c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("mpfault"), Key: aws.String(key)})
			if rerr != nil {
				t.Fatalf("the client's retry of a completion s3seal answered 503: %v (HEAD of the key: %v)", rerr, herr)
			}
			checkObject(t, c, "mpfault", key, joinParts(parts), mpETag(parts[0].Data, parts[1].Data))
		})
	}
}
