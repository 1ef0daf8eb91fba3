package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// stallBound is the backend timeout the stall tests give s3seal (response
// headers and body idle alike).
const stallBound = time.Second

// stallAnswerWithin is the longest a client may wait for s3seal's answer
// when the store stalls: the request's stall budget (2.5 bounds) and the
// backoffs between attempts (below 0.5 s and 1 s), with room for a loaded
// machine.
const stallAnswerWithin = 5*stallBound/2 + 4*time.Second

// startStalling runs s3seal on moto behind a fault proxy, with backend
// timeouts of stallBound and the extra flags.
func startStalling(t *testing.T, extra ...string) (*sealProc, *faultproxy.Proxy) {
	t.Helper()
	_, fp := motoBehindProxy(t)
	args := append([]string{"--backend-response-timeout", stallBound.String(), "--backend-idle-timeout", stallBound.String()}, fastRetries...)
	return startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Args: append(args, extra...)}), fp
}

// wantStalled runs f, which must fail with 503 ServiceUnavailable after at
// least one backend timeout and within stallAnswerWithin.
func wantStalled(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	d := time.Since(start)
	wantStatus(t, what, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	if d < stallBound || d > stallAnswerWithin {
		t.Errorf("%s: answered after %v, want between %v and %v", what, d, stallBound, stallAnswerWithin)
	}
}

// TestBackendStalls: for each class of operation, a store that stops
// answering (or stops taking or sending bytes) costs the client a 503
// within the bound, not a hang; the request's slot is freed (s3seal serves
// the next request), and an attempt that stalled once is retried.
func TestBackendStalls(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "mpfault")
	small := patternBytes(1, 1000)
	putObj(t, c, "mpfault", "small", small)
	big := patternBytes(2, 6*mib)
	putObj(t, c, "mpfault", "big", big)
	stall := func(rules ...faultproxy.Rule) { fp.Reset(); fp.Inject(rules...) }
	heal := func(t *testing.T) {
		t.Helper()
		fp.Reset()
		if got := getObj(t, c, "mpfault", "small"); !bytes.Equal(got, small) {
			t.Fatal("s3seal serves other bytes once the store answers again")
		}
	}

	t.Run("head", func(t *testing.T) {
		stall(faultproxy.Rule{Op: faultproxy.HeadObject, Fault: faultproxy.Stall})
		wantStalled(t, "HEAD", func(ctx context.Context) error {
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("small")})
			return err
		})
		if n := len(fp.Requests(faultproxy.HeadObject)); n != 2 {
			t.Errorf("the store saw %d HEADs, want 2 (a stalled attempt is retried once)", n)
		}
		heal(t)
	})
	t.Run("list", func(t *testing.T) {
		stall(faultproxy.Rule{Op: faultproxy.ListObjects, Fault: faultproxy.Stall})
		wantStalled(t, "ListObjectsV2", func(ctx context.Context) error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("mpfault")})
			return err
		})
		heal(t)
	})
	t.Run("put", func(t *testing.T) {
		stall(faultproxy.Rule{Op: faultproxy.PutObject, Fault: faultproxy.StallReading})
		wantStalled(t, "PutObject", func(ctx context.Context) error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("stalled"),
				Body: bytes.NewReader(big), ContentLength: aws.Int64(int64(len(big)))})
			return err
		})
		heal(t)
		_, err := c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("stalled")})
		wantStatus(t, "HEAD of the stalled PUT's key", err, http.StatusNotFound, "")
	})
	t.Run("get-mid-stream", func(t *testing.T) {
		stall(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("big")})
		if err != nil {
			// No byte came before the store stalled: a 503 is right too.
			wantStatus(t, "GET stalled before its first byte", err, http.StatusServiceUnavailable, "ServiceUnavailable")
		} else {
			got, rerr := io.ReadAll(out.Body)
			out.Body.Close()
			if rerr == nil || len(got) >= len(big) {
				t.Fatalf("GET whose store stalled mid-body ended cleanly with %d of %d bytes (err %v): a broken transfer must look broken", len(got), len(big), rerr)
			}
			if !bytes.Equal(got, big[:len(got)]) {
				t.Fatal("the bytes before the break are not the object's")
			}
		}
		if d := time.Since(start); d > stallAnswerWithin {
			t.Errorf("GET broke off after %v, want within %v", d, stallAnswerWithin)
		}
		heal(t)
	})
	t.Run("get-cut", func(t *testing.T) {
		// A backend answer cut short of its Content-Length is the
		// connection's failure, never damage: read again before the first
		// byte, 503 when every answer is cut, and no integrity alarm.
		stall(faultproxy.Rule{Op: faultproxy.GetObject, Attempt: 1, Fault: faultproxy.ForwardThenCut})
		if got := getObj(t, c, "mpfault", "small"); !bytes.Equal(got, small) {
			t.Fatal("GET read again after a cut answer gave other bytes")
		}
		stall(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenCut})
		_, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("small")})
		wantStatus(t, "GET whose every answer is cut", err, http.StatusServiceUnavailable, "ServiceUnavailable")
		// Cut after the client had bytes: a broken transfer.
		out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("big")})
		if err != nil {
			t.Fatalf("GET of an object cut mid-answer: %v before its first bytes", err)
		}
		got, rerr := io.ReadAll(out.Body)
		out.Body.Close()
		if rerr == nil || len(got) >= len(big) || !bytes.Equal(got, big[:len(got)]) {
			t.Fatalf("GET cut mid-answer: %d of %d bytes, err %v; want a broken transfer of a true prefix", len(got), len(big), rerr)
		}
		if v := metricValue(soakGet(t, p.Endpoint+"/metrics"), "s3seal_integrity_failures_total"); v != 0 {
			t.Errorf("cut answers counted as %v integrity failures", v)
		}
		heal(t)
	})
	t.Run("upload-part-retried", func(t *testing.T) {
		stall(faultproxy.Rule{Op: faultproxy.UploadPart, Part: 1, Attempt: 1, Fault: faultproxy.StallReading})
		parts := faultParts(80)
		etag := mpUpload(t, c, "mpfault", "part-stalled-once", parts)
		checkObject(t, c, "mpfault", "part-stalled-once", joinParts(parts), etag)
		if n := len(fp.Requests(faultproxy.UploadPart)); n != 3 {
			t.Errorf("the store saw %d UploadParts, want 3 (part 1 twice)", n)
		}
	})
	t.Run("upload-part", func(t *testing.T) {
		fp.Reset()
		id, parts := startFaultUpload(t, c, "part-stalled", 81)
		stall(faultproxy.Rule{Op: faultproxy.UploadPart, Fault: faultproxy.Stall})
		wantStalled(t, "UploadPart", func(ctx context.Context) error {
			_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpfault"), Key: aws.String("part-stalled"),
				UploadId: aws.String(id), PartNumber: aws.Int32(1), Body: bytes.NewReader(parts[0].Data), ContentLength: aws.Int64(int64(len(parts[0].Data)))})
			return err
		})
		heal(t)
	})
	t.Run("upload-part-copy", func(t *testing.T) {
		fp.Reset()
		cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("mpfault"), Key: aws.String("copy-stalled")})
		if err != nil {
			t.Fatal(err)
		}
		// s3seal copies a part by reading and sealing the source: the
		// store may stall either side.
		for _, op := range []faultproxy.Op{faultproxy.GetObject, faultproxy.UploadPart} {
			stall(faultproxy.Rule{Op: op, Fault: faultproxy.Stall})
			wantStalled(t, "UploadPartCopy with "+string(op)+" stalled", func(ctx context.Context) error {
				_, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("mpfault"), Key: aws.String("copy-stalled"),
					UploadId: cr.UploadId, PartNumber: aws.Int32(1), CopySource: aws.String("mpfault/big")})
				return err
			})
		}
		heal(t)
	})
	t.Run("complete", func(t *testing.T) {
		fp.Reset()
		id, parts := startFaultUpload(t, c, "complete-stalled", 82)
		stall(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Fault: faultproxy.Stall})
		wantStalled(t, "CompleteMultipartUpload", func(ctx context.Context) error {
			_, err := completeRawCtx(ctx, c, "complete-stalled", id, parts)
			return err
		})
		// The store did nothing: once it answers, the client's retry
		// completes the upload.
		fp.Reset()
		etag := mpComplete(t, c, "mpfault", "complete-stalled", id, parts)
		checkObject(t, c, "mpfault", "complete-stalled", joinParts(parts), etag)
	})
	t.Run("complete-done-then-stalled", func(t *testing.T) {
		fp.Reset()
		id, parts := startFaultUpload(t, c, "complete-done-stalled", 83)
		// The store completes the upload and its answer never comes:
		// s3seal's retry finds it completed.
		stall(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.ForwardThenStall})
		etag := mpComplete(t, c, "mpfault", "complete-done-stalled", id, parts)
		checkObject(t, c, "mpfault", "complete-done-stalled", joinParts(parts), etag)
		wantCompletions(t, fp, 2)
	})
	t.Run("client-gone", func(t *testing.T) {
		stall(faultproxy.Rule{Op: faultproxy.HeadObject, Fault: faultproxy.Stall})
		// The proxy cannot see that s3seal dropped an upload it stopped
		// reading (StallReading above): those stay counted.
		before := fp.Held()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("small")})
			done <- err
		}()
		waitFor(t, "s3seal's HEAD to reach the stalled store", func() bool { return fp.Held() == before+1 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("HEAD cancelled by its client: %v", err)
		}
		// Within a fraction of the backend timeout, s3seal gives up its
		// backend call.
		start := time.Now()
		waitFor(t, "s3seal to drop its backend call", func() bool { return fp.Held() == before })
		if d := time.Since(start); d > stallBound/2 {
			t.Errorf("the backend call outlived its client by %v", d)
		}
		heal(t)
	})
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited 10s for %s", what)
}

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
}

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
}

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
