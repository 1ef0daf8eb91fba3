package e2e

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// fastRetries are retry settings for fault tests: the default attempts,
// backoffs of 10 ms.
var fastRetries = []string{"--part-retry-backoff", "10ms", "--complete-retry-backoff", "10ms"}

// startFaultyOn runs s3seal with its backend behind a fault proxy: the
// embedded store started in the test process, or moto_server.
func startFaultyOn(t *testing.T, be string) (*sealProc, *faultproxy.Proxy) {
	t.Helper()
	if be == "embedded" {
		cfg, fp := embeddedBehindProxy(t)
		return startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()},
			Args: append([]string{"--backend-access-key", cfg.AccessKey, "--backend-secret-key", cfg.SecretKey}, fastRetries...)}), fp
	}
	_, fp := motoBehindProxy(t)
	return startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}, Args: fastRetries}), fp
}

// faultParts is a two-part upload: 5 MiB and 1 MiB + 1.
func faultParts(seed uint64) []mpPart {
	return []mpPart{{1, patternBytes(seed, 5*mib)}, {2, patternBytes(seed+1, mib+1)}}
}

// wantSameResends checks that the backend saw n UploadParts of part and
// that they all carried the same bytes.
func wantSameResends(t *testing.T, fp *faultproxy.Proxy, part int32, n int) {
	t.Helper()
	var seen []faultproxy.Request
	for _, r := range fp.Requests(faultproxy.UploadPart) {
		if r.Part == part {
			seen = append(seen, r)
		}
	}
	if len(seen) != n {
		t.Fatalf("backend saw %d UploadParts of part %d, want %d", len(seen), part, n)
	}
	for _, r := range seen[1:] {
		if r.BodySHA256 != seen[0].BodySHA256 || r.BodyLen != seen[0].BodyLen {
			t.Fatalf("attempt %d of part %d sent other bytes than the first (%d vs %d bytes)", r.Attempt, part, r.BodyLen, seen[0].BodyLen)
		}
	}
}

func wantCompletions(t *testing.T, fp *faultproxy.Proxy, n int) {
	t.Helper()
	if got := len(fp.Requests(faultproxy.CompleteMultipartUpload)); got != n {
		t.Fatalf("backend saw %d completions, want %d", got, n)
	}
}

// TestMultipartFaults: one fault of a flaky store at a time while the Go
// SDK (retries off) uploads through s3seal; s3seal retries and the client
// sees one clean success with the right bytes and ETag, or, for failures
// that do not heal, the right error at once.
func TestMultipartFaults(t *testing.T) {
	t.Parallel()
	for _, be := range []string{"embedded", "moto"} {
		t.Run(be, func(t *testing.T) {
			t.Parallel()
			p, fp := startFaultyOn(t, be)
			c := sdkFor(t, p)
			mustCreateBucket(t, c, "mpfault")
			ok := func(name string, seed uint64, rule faultproxy.Rule, after func(t *testing.T)) {
				t.Run(name, func(t *testing.T) {
					fp.Reset()
					fp.Inject(rule)
					parts := faultParts(seed)
					etag := mpUpload(t, c, "mpfault", name, parts)
					checkObject(t, c, "mpfault", name, joinParts(parts), etag)
					after(t)
				})
			}
			ok("part-error-in-body", 10, faultproxy.Rule{Op: faultproxy.UploadPart, Part: 1, Attempt: 1, Fault: faultproxy.ErrorInBody},
				func(t *testing.T) { wantSameResends(t, fp, 1, 2); wantSameResends(t, fp, 2, 1) })
			ok("part-stored-then-error", 20, faultproxy.Rule{Op: faultproxy.UploadPart, Part: 2, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody},
				func(t *testing.T) { wantSameResends(t, fp, 2, 2) })
			ok("part-answer-cut", 30, faultproxy.Rule{Op: faultproxy.UploadPart, Part: 1, Attempt: 1, Fault: faultproxy.ForwardThenCut},
				func(t *testing.T) { wantSameResends(t, fp, 1, 2) })
			ok("complete-then-error", 40, faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody},
				func(t *testing.T) {
					wantCompletions(t, fp, 2)
					// moto keeps a completed upload and completes it again; the
					// embedded store (like AWS) answers NoSuchUpload, and s3seal
					// must recover.
					if be == "embedded" && !strings.Contains(p.Log(), "completion recovered") {
						t.Errorf("no recovery event in the log")
					}
				})
			ok("complete-slowdown", 50, faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.SlowDown},
				func(t *testing.T) { wantCompletions(t, fp, 2) })

			t.Run("complete-access-denied", func(t *testing.T) {
				fp.Reset()
				fp.Inject(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Fault: faultproxy.ErrorInBody, Code: "AccessDenied", Message: "Access Denied"})
				id, parts := startFaultUpload(t, c, "denied", 60)
				_, err := completeRaw(t, c, "denied", id, parts)
				wantStatus(t, "completion the backend denies", err, http.StatusForbidden, "AccessDenied")
				wantCompletions(t, fp, 1)
				_, err = c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String("mpfault"), Key: aws.String("denied")})
				wantStatus(t, "HEAD after the denied completion", err, http.StatusNotFound, "")
				// The backend did nothing: the upload is still there.
				fp.Reset()
				etag := mpComplete(t, c, "mpfault", "denied", id, parts)
				checkObject(t, c, "mpfault", "denied", joinParts(parts), etag)
			})

			t.Run("complete-lost-upload-not-assembled", func(t *testing.T) {
				old := patternBytes(70, 1000)
				putObj(t, c, "mpfault", "lost", old)
				fp.Reset()
				fp.Inject(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.ErrorInBody},
					faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 2, Fault: faultproxy.NoSuchUpload})
				id, parts := startFaultUpload(t, c, "lost", 71)
				_, err := completeRaw(t, c, "lost", id, parts)
				wantStatus(t, "completion whose retry finds no upload and no object", err, http.StatusNotFound, "NoSuchUpload")
				wantCompletions(t, fp, 2)
				if !strings.Contains(p.Log(), "completion not recovered") {
					t.Errorf("no 'completion not recovered' event in the log")
				}
				if got := getObj(t, c, "mpfault", "lost"); !bytes.Equal(got, old) {
					t.Errorf("the object at the key is no longer the earlier PUT (%d bytes)", len(got))
				}
			})

			t.Run("part-always-fails", func(t *testing.T) {
				fp.Reset()
				fp.Inject(faultproxy.Rule{Op: faultproxy.UploadPart, Fault: faultproxy.ErrorInBody})
				cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("mpfault"), Key: aws.String("never")})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err = c.UploadPart(ctxT(t), &s3.UploadPartInput{Bucket: aws.String("mpfault"), Key: aws.String("never"),
					UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(patternBytes(80, 100000))})
				took := time.Since(start)
				code, status := apiCode(err)
				if err == nil || !(status == 500 && code == "InternalError" || status == 503 && (code == "SlowDown" || code == "ServiceUnavailable")) {
					t.Errorf("UploadPart while the backend always fails: %v (HTTP %d %s), want 500 InternalError or 503", err, status, code)
				}
				if took > 5*time.Second {
					t.Errorf("UploadPart took %v to give up", took)
				}
				wantSameResends(t, fp, 1, 4)
			})
		})
	}
}

// startFaultUpload creates an upload for key in mpfault and sends
// faultParts(seed) without faults.
func startFaultUpload(t *testing.T, c *s3.Client, key string, seed uint64) (string, []mpPart) {
	t.Helper()
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("mpfault"), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	parts := faultParts(seed)
	mpSendParts(t, c, "mpfault", key, aws.ToString(cr.UploadId), parts)
	return aws.ToString(cr.UploadId), parts
}

// completeRaw completes an upload of mpfault and returns the SDK's answer.
func completeRaw(t *testing.T, c *s3.Client, key, id string, parts []mpPart) (*s3.CompleteMultipartUploadOutput, error) {
	t.Helper()
	return completeRawCtx(ctxT(t), c, key, id, parts)
}

// completeRawCtx is completeRaw under ctx.
func completeRawCtx(ctx context.Context, c *s3.Client, key, id string, parts []mpPart) (*s3.CompleteMultipartUploadOutput, error) {
	var cps []types.CompletedPart
	for _, p := range parts {
		cps = append(cps, types.CompletedPart{PartNumber: aws.Int32(p.N), ETag: aws.String(md5Hex(p.Data))})
	}
	return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpfault"), Key: aws.String(key),
		UploadId: aws.String(id), MultipartUpload: &types.CompletedMultipartUpload{Parts: cps}})
}

// TestMultipartFaultsAWSCLI: aws s3 cp (retries off) of 12 MiB + 5 in two
// parts while the backend stores part 2 but answers an error, and
// assembles the object but answers the completion with an error: the copy
// succeeds, and the object is right.
func TestMultipartFaultsAWSCLI(t *testing.T) {
	t.Parallel()
	p, fp := startFaultyOn(t, "embedded")
	a := newMultipartCLI(t, p)
	data := patternBytes(90, 12*mib+5)
	src := writeFile(t, t.TempDir(), "f.bin", data)
	a.run("s3", "mb", "s3://mpclifault")
	fp.Inject(faultproxy.Rule{Op: faultproxy.UploadPart, Part: 2, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody},
		faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.ForwardThenErrorInBody})
	a.run("s3", "cp", "--no-progress", src, "s3://mpclifault/f.bin")
	wantSameResends(t, fp, 2, 2)
	wantCompletions(t, fp, 2)
	etag, size := a.headETagSize("mpclifault", "f.bin")
	if want := splitETag(data, 8*mib); etag != want || size != int64(len(data)) {
		t.Errorf("head-object: ETag %s size %d, want %s %d", etag, size, want, len(data))
	}
	dst := filepath.Join(t.TempDir(), "down.bin")
	a.run("s3", "cp", "--no-progress", "s3://mpclifault/f.bin", dst)
	if got := readFile(t, dst); !bytes.Equal(got, data) {
		t.Errorf("aws s3 cp down: %d bytes, want %d identical", len(got), len(data))
	}
}

// TestMultipartCompletionRetriedByClient: a client gives up waiting for a
// slow completion and sends it again (every SDK does after a timeout).
// The backend holds the first completion for a second; the second
// completes the object; then the first reaches the backend and gets
// NoSuchUpload. The object must stay whole and readable, also by a
// process that has not cached its manifest (a replica, or after a
// restart). Deterministic form of TestMultipartRacingCompletions, on the
// embedded store (which, like AWS, forgets a completed upload).
func TestMultipartCompletionRetriedByClient(t *testing.T) {
	t.Parallel()
	cfg, fp := embeddedBehindProxy(t)
	o := sealOpts{Backend: &motoServer{Endpoint: fp.URL()},
		Args: append([]string{"--backend-access-key", cfg.AccessKey, "--backend-secret-key", cfg.SecretKey}, fastRetries...)}
	pa := startS3seal(t, o)
	o.Key = pa.Key
	c, other := sdkFor(t, pa), sdkFor(t, startS3seal(t, o))
	mustCreateBucket(t, c, "mpfault")
	id, parts := startFaultUpload(t, c, "retried", 100)
	fp.Reset()
	fp.Inject(faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Attempt: 1, Fault: faultproxy.Delay, Delay: time.Second})
	first := make(chan error, 1)
	go func() { _, err := completeRaw(t, c, "retried", id, parts); first <- err }()
	for deadline := time.Now().Add(10 * time.Second); len(fp.Requests(faultproxy.CompleteMultipartUpload)) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first completion never reached the backend")
		}
		time.Sleep(10 * time.Millisecond)
	}
	etag := mpComplete(t, c, "mpfault", "retried", id, parts)
	err := <-first
	if code, _ := apiCode(err); err != nil && code != "NoSuchUpload" {
		t.Errorf("first completion: %v, want success or NoSuchUpload", err)
	}
	checkObject(t, other, "mpfault", "retried", joinParts(parts), etag)
	checkObject(t, c, "mpfault", "retried", joinParts(parts), etag)
}
