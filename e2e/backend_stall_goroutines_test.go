package e2e

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// Many requests to a stalled store (no answer, a body stopped mid-stream,
// an upload no longer read, a dripping body whose client gave up) leave
// nothing behind in s3seal once they are answered: no goroutine still
// inside a backend call.
func TestBackendStallsLeaveNothing(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "leak")
	big := patternBytes(10, 3*mib)
	putObj(t, c, "leak", "big", big)
	fp.Reset()
	fp.Inject(faultproxy.Rule{Op: faultproxy.HeadObject, Fault: faultproxy.Stall},
		faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody},
		faultproxy.Rule{Op: faultproxy.PutObject, Fault: faultproxy.StallReading},
		faultproxy.Rule{Op: faultproxy.ListObjects, Fault: faultproxy.Drip, Delay: stallBound / 2})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(4)
		go func() {
			defer wg.Done()
			_, _ = c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("leak"), Key: aws.String("big")})
		}()
		go func() {
			defer wg.Done()
			out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("leak"), Key: aws.String("big")})
			if err == nil {
				_, _ = io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		}()
		go func() {
			defer wg.Done()
			_, _ = c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("leak"), Key: aws.String("p"), Body: bytes.NewReader(big), ContentLength: aws.Int64(int64(len(big)))})
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, _ = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("leak")})
		}()
	}
	wg.Wait()
	fp.Reset()
	if got := getObj(t, c, "leak", "big"); !bytes.Equal(got, big) {
		t.Fatal("other bytes once healed")
	}
	time.Sleep(3 * stallBound)
	p.dumpGoroutines()
	dump := p.Log()
	i := strings.Index(dump, "goroutine ")
	if i < 0 {
		t.Fatal("no goroutine dump")
	}
	dump = dump[i:]
	gs := regexp.MustCompile(`(?m)^\s*goroutine \d+ `).FindAllStringIndex(dump, -1)
	var stuck []string
	for k, g := range gs {
		end := len(dump)
		if k+1 < len(gs) {
			end = gs[k+1][0]
		}
		st := dump[g[0]:end]
		if strings.Contains(st, "s3seal/backend.") || strings.Contains(st, "s3seal/retry.") || strings.Contains(st, "s3seal/sealstore.") || strings.Contains(st, "s3seal/s3api.") {
			stuck = append(stuck, st)
		}
	}
	t.Logf("%d goroutines in s3seal after the stalls", len(gs))
	if len(stuck) > 0 {
		t.Errorf("%d goroutines still in s3seal's request or backend code after every request was answered; first:\n%s", len(stuck), stuck[0])
	}
}
