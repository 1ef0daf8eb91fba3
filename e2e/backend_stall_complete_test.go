package e2e

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// The store completes an upload and both of s3seal's attempts get no
// answer (headers never come, or the body stops): the client gets 503 and,
// like every S3 client, retries the completion; that retry must succeed
// with the object intact, not fail with NoSuchUpload.
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
			_, err := completeRawCtx(ctx, c, key, id, parts)
			t.Logf("completion with every answer stalled: %v", err)
			if err == nil {
				t.Fatal("completion answered though the store never did")
			}
			wantStatus(t, "completion whose answers stalled", err, http.StatusServiceUnavailable, "ServiceUnavailable")
			fp.Reset()
			_, rerr := completeRawCtx(ctxT(t), c, key, id, parts)
			_, herr := c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("mpfault"), Key: aws.String(key)})
			if rerr != nil {
				t.Fatalf("the client's retry of a completion s3seal answered 503: %v (HEAD of the key: %v)", rerr, herr)
			}
			if got := getObj(t, c, "mpfault", key); !bytes.Equal(got, joinParts(parts)) {
				t.Fatal("the completed object holds other bytes")
			}
		})
	}
}
