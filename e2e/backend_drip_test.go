package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// dripWithin is how long a test waits for s3seal's answer when the store
// drips: far more than any promised bound, far less than a dripped body.
const dripWithin = 15 * time.Second

// A store that sends a byte just under the idle bound, forever, is a store
// that has effectively stopped; the client must still get an answer (a 503
// or the data) within the promised bound, not wait as long as the drip.
func TestBackendDrip(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "drip")
	small := patternBytes(3, 1000)
	putObj(t, c, "drip", "small", small)
	every := stallBound * 8 / 10

	t.Run("list", func(t *testing.T) {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.ListObjects, Fault: faultproxy.Drip, Delay: every})
		ctx, cancel := context.WithTimeout(context.Background(), dripWithin)
		defer cancel()
		start := time.Now()
		_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("drip")})
		if d := time.Since(start); d > stallAnswerWithin {
			t.Errorf("ListObjectsV2 on a store dripping a byte every %v: answered after %v (err %v), want within %v", every, d, err, stallAnswerWithin)
		}
	})
	t.Run("get", func(t *testing.T) {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.Drip, Delay: every})
		ctx, cancel := context.WithTimeout(context.Background(), dripWithin)
		defer cancel()
		start := time.Now()
		var n int
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("drip"), Key: aws.String("small")})
		if err == nil {
			var got []byte
			got, err = io.ReadAll(out.Body)
			n = len(got)
			out.Body.Close()
		}
		if d := time.Since(start); d > stallAnswerWithin {
			t.Errorf("GET on a store dripping a byte every %v: ended after %v with %d bytes (err %v), want within %v", every, d, n, err, stallAnswerWithin)
		}
	})
}

// A store that stalls the first attempt of every backend call (and answers
// the retry) must not cost one client request more than its stall budget
// (2.5 timeouts) and the backoffs, however many backend calls the request
// makes. Each stalled call is retried once, so a request of one or two
// backend calls succeeds; one of more calls (a copy, a completion) may
// spend its budget and answer 503, which the client retries.
func TestBackendStallOncePerCall(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "once")
	mustCreateBucket(t, c, "mpfault")
	small := patternBytes(4, 1000)
	putObj(t, c, "once", "src", small)
	stallEachOnce := func() {
		var rules []faultproxy.Rule
		for _, op := range []faultproxy.Op{faultproxy.HeadObject, faultproxy.GetObject, faultproxy.PutObject,
			faultproxy.ListObjects, faultproxy.HeadBucket, faultproxy.CopyObject, faultproxy.Other,
			faultproxy.ListParts, faultproxy.CompleteMultipartUpload, faultproxy.DeleteObject, faultproxy.DeleteObjects,
			faultproxy.ListMultipartUploads} {
			rules = append(rules, faultproxy.Rule{Op: op, Attempt: 1, Fault: faultproxy.Stall})
		}
		fp.Reset()
		fp.Inject(rules...)
	}
	run := func(t *testing.T, what string, mayRefuse bool, f func(ctx context.Context) error) {
		t.Helper()
		stallEachOnce()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		err := f(ctx)
		d := time.Since(start)
		var ops []string
		for _, r := range fp.Requests("") {
			ops = append(ops, string(r.Op))
		}
		t.Logf("%s: %v after %v; the store saw %v", what, err, d, ops)
		if code, status := apiCode(err); err != nil && (!mayRefuse || status != http.StatusServiceUnavailable || code != "ServiceUnavailable") {
			t.Errorf("%s on a store stalling each call once (each retry answered): %v after %v, want it done (a stall is retried once)", what, err, d)
		}
		if d > stallAnswerWithin {
			t.Errorf("%s on a store stalling each call once: answered after %v, want within %v (two timeouts and a backoff)", what, d, stallAnswerWithin)
		}
		fp.Reset()
	}
	t.Run("copy", func(t *testing.T) {
		cp := func(ctx context.Context) error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("once"), Key: aws.String("dst"), CopySource: aws.String("once/src")})
			return err
		}
		run(t, "CopyObject", true, cp)
		if err := cp(ctxT(t)); err != nil { // the client's retry
			t.Fatalf("CopyObject retried once the store answers: %v", err)
		}
		if got := getObj(t, c, "once", "dst"); !bytes.Equal(got, small) {
			t.Error("the copy holds other bytes")
		}
	})
	t.Run("put", func(t *testing.T) {
		run(t, "PutObject", false, func(ctx context.Context) error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("once"), Key: aws.String("put"), Body: bytes.NewReader(small)})
			return err
		})
	})
	t.Run("get", func(t *testing.T) {
		run(t, "GetObject", false, func(ctx context.Context) error {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("once"), Key: aws.String("src")})
			if err != nil {
				return err
			}
			defer out.Body.Close()
			_, err = io.ReadAll(out.Body)
			return err
		})
	})
	t.Run("complete", func(t *testing.T) {
		fp.Reset()
		id, parts := startFaultUpload(t, c, "complete-once", 90)
		run(t, "CompleteMultipartUpload", true, func(ctx context.Context) error {
			_, err := completeRawCtx(ctx, c, "complete-once", id, parts)
			return err
		})
		if _, err := completeRawCtx(ctxT(t), c, "complete-once", id, parts); err != nil { // the client's retry
			t.Fatalf("CompleteMultipartUpload retried once the store answers: %v", err)
		}
		checkObject(t, c, "mpfault", "complete-once", joinParts(parts), mpETag(parts[0].Data, parts[1].Data))
	})
	t.Run("tagging", func(t *testing.T) {
		run(t, "GetObjectTagging", false, func(ctx context.Context) error {
			_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("once"), Key: aws.String("src")})
			return err
		})
	})
}

// A client that stops reading a GET for several idle bounds is s3seal's
// time, not the store's: the GET must go on and deliver every byte.
func TestBackendSlowClientGet(t *testing.T) {
	t.Parallel()
	p, _ := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "slowget")
	big := patternBytes(5, 24*mib)
	putObj(t, c, "slowget", "big", big)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("slowget"), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	head := make([]byte, 64<<10)
	if _, err := io.ReadFull(out.Body, head); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * stallBound)
	rest, err := io.ReadAll(out.Body)
	if err != nil || !bytes.Equal(append(head, rest...), big) {
		t.Fatalf("a GET whose client paused %v: %d of %d bytes, err %v", 4*stallBound, len(head)+len(rest), len(big), err)
	}
}

// Requests to a store that drips their answers give their slots back
// within the promised bound: other clients are not refused (503 SlowDown)
// for as long as the store keeps dripping.
func TestBackendDripHoldsSlots(t *testing.T) {
	t.Parallel()
	c := startDripping(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		go func() {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("slots"), Key: aws.String("small")})
			if err == nil {
				_, _ = io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		}()
	}
	time.Sleep(stallAnswerWithin + time.Second) // past the bound: both slots should be free again
	hctx, hcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer hcancel()
	start := time.Now()
	_, err := c.ListObjectsV2(hctx, &s3.ListObjectsV2Input{Bucket: aws.String("slots")})
	if err != nil {
		t.Errorf("a listing %v after two GETs on a dripping store: %v after %v", stallAnswerWithin+time.Second, err, time.Since(start))
	}
}

// Clients that give up on GETs to a dripping store free their slots at
// once.
func TestBackendDripClientGoneFreesSlots(t *testing.T) {
	t.Parallel()
	c := startDripping(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for i := 0; i < 2; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("slots"), Key: aws.String("small")})
			if err == nil {
				_, _ = io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	cancel()
	<-done
	<-done
	time.Sleep(200 * time.Millisecond)
	hctx, hcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer hcancel()
	start := time.Now()
	_, err := c.ListObjectsV2(hctx, &s3.ListObjectsV2Input{Bucket: aws.String("slots")})
	if err != nil || time.Since(start) > 2*time.Second {
		t.Errorf("a listing after the dripping GETs' clients left: %v after %v", err, time.Since(start))
	}
}

// startDripping runs s3seal with two request slots on a store that drips
// every GET a byte per 0.8 bounds, with "slots/small" (1000 bytes) stored.
func startDripping(t *testing.T) *s3.Client {
	t.Helper()
	p, fp := startStalling(t, "--max-requests", "2")
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "slots")
	putObj(t, c, "slots", "small", patternBytes(12, 1000))
	fp.Reset()
	// The object's GETs drip; the bucket's documents, which requests read
	// once their cache is older than its TTL, come as the store has them.
	fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Path: "/slots/small", Fault: faultproxy.Drip, Delay: stallBound * 8 / 10})
	return c
}
