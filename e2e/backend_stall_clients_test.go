package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// pausingReader is a seekable body that stops for pause each time a read
// crosses at: a client whose upload goes quiet for a while.
// It has no WriteTo, so every copy of it goes through Read; it counts the
// pauses it made.
type pausingReader struct {
	r      *bytes.Reader
	at     int64
	pause  time.Duration
	paused int
}

func (r *pausingReader) Seek(off int64, whence int) (int64, error) { return r.r.Seek(off, whence) }

func (r *pausingReader) Read(p []byte) (int, error) {
	off := r.r.Size() - int64(r.r.Len())
	if off < r.at && off+int64(len(p)) >= r.at {
		p = p[:r.at-off]
		n, err := r.r.Read(p)
		time.Sleep(r.pause)
		r.paused++
		return n, err
	}
	return r.r.Read(p)
}

// A client whose upload pauses for several backend idle bounds is slow
// itself; the store is waiting on s3seal, not the other way round: the
// upload must go through.
func TestBackendSlowClientUpload(t *testing.T) {
	t.Parallel()
	p, _ := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "slowput")
	data := patternBytes(7, 12*mib)
	pause := 3 * stallBound
	t.Run("put", func(t *testing.T) {
		body := &pausingReader{r: bytes.NewReader(data), at: 6 * mib, pause: pause}
		start := time.Now()
		_, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("slowput"), Key: aws.String("obj"),
			Body: body, ContentLength: aws.Int64(int64(len(data)))})
		t.Logf("PutObject: %d pauses, %v", body.paused, time.Since(start))
		if err != nil {
			t.Fatalf("PutObject whose client paused %v: %v", pause, err)
		}
		if got := getObj(t, c, "slowput", "obj"); !bytes.Equal(got, data) {
			t.Fatal("other bytes stored")
		}
	})
	t.Run("part", func(t *testing.T) {
		cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("slowput"), Key: aws.String("mp")})
		if err != nil {
			t.Fatal(err)
		}
		body := &pausingReader{r: bytes.NewReader(data), at: 6 * mib, pause: pause}
		start := time.Now()
		_, err = c.UploadPart(ctxT(t), &s3.UploadPartInput{Bucket: aws.String("slowput"), Key: aws.String("mp"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), Body: body, ContentLength: aws.Int64(int64(len(data)))})
		t.Logf("UploadPart: %d pauses, %v", body.paused, time.Since(start))
		if err != nil {
			t.Fatalf("UploadPart whose client paused %v: %v", pause, err)
		}
	})
}

// curl, which checks nothing but the HTTP framing, sees a GET whose store
// stopped mid-body as a broken transfer: fewer bytes than the
// Content-Length it announced, and curl's exit code 18 (partial file), for
// a whole GET and for a range.
func TestBackendStallMidGetCurl(t *testing.T) {
	t.Parallel()
	curl := requireTool(t, "curl")
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "curl")
	big := patternBytes(9, 6*mib)
	putObj(t, c, "curl", "big", big)
	clRE := regexp.MustCompile(`(?i)\ncontent-length: *(\d+)`)
	for _, rng := range []string{"", "bytes=100-5000000"} {
		t.Run("range="+rng, func(t *testing.T) {
			fp.Reset()
			fp.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody})
			dir := t.TempDir()
			out, hdr := filepath.Join(dir, "body"), filepath.Join(dir, "headers")
			args := []string{"-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", p.AccessKey + ":" + p.SecretKey,
				"-D", hdr, "-o", out, "--max-time", "30",
				"-H", "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
			if rng != "" {
				args = append(args, "-H", "Range: "+rng)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, curl, append(args, p.Endpoint+"/curl/big")...)
			cmd.Env = append(os.Environ(), "AWS_CA_BUNDLE=")
			msg, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			h, _ := os.ReadFile(hdr)
			b, _ := os.ReadFile(out)
			t.Logf("curl exit %d, %d bytes; %s\n%s", code, len(b), msg, h)
			if !regexp.MustCompile(`^HTTP/1.1 20[06]`).Match(h) {
				// No byte came before the store stalled: an error answer.
				t.Logf("answered with an error: %s", b)
				return
			}
			m := clRE.FindSubmatch(h)
			if len(m) == 0 {
				if code == 0 {
					t.Fatalf("no Content-Length and curl ended cleanly with %d bytes", len(b))
				}
				return
			}
			cl, _ := strconv.Atoi(string(m[1]))
			if code == 0 || len(b) >= cl {
				t.Fatalf("curl exit %d with %d of Content-Length %d bytes: a broken GET looks clean", code, len(b), cl)
			}
		})
	}
}

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
		if strings.Contains(st, "s3seal/internal/tick.Every") {
			continue // a loop of the process's life (the listing cache's saver)
		}
		if strings.Contains(st, "s3seal/backend.") || strings.Contains(st, "s3seal/retry.") || strings.Contains(st, "s3seal/sealstore.") || strings.Contains(st, "s3seal/s3api.") {
			stuck = append(stuck, st)
		}
	}
	t.Logf("%d goroutines in s3seal after the stalls", len(gs))
	if len(stuck) > 0 {
		t.Errorf("%d goroutines still in s3seal's request or backend code after every request was answered; first:\n%s", len(stuck), stuck[0])
	}
}

// `s3seal verify` and `s3seal gc` on a store that stops answering end with
// a failure within a few backend timeouts per call, not a hang.
func TestBackendStallTools(t *testing.T) {
	t.Parallel()
	p, fp := startStalling(t)
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "tools")
	for _, k := range []string{"a", "b"} {
		putObj(t, c, "tools", k, patternBytes(8, 2000))
	}
	base := []string{"--data-dir", filepath.Join(t.TempDir(), "tool"),
		"--backend-endpoint", fp.URL(), "--backend-path-style", "--backend-access-key", "x", "--backend-secret-key", "y",
		"--key", p.Key, "--backend-response-timeout", stallBound.String(), "--backend-idle-timeout", stallBound.String()}
	for _, tc := range []struct {
		name  string
		rules []faultproxy.Rule
		args  []string
	}{
		{"verify-list", []faultproxy.Rule{{Op: faultproxy.ListObjects, Fault: faultproxy.Stall}}, []string{"verify", "--bucket", "tools"}},
		{"verify-deep-get", []faultproxy.Rule{{Op: faultproxy.GetObject, Fault: faultproxy.Stall}, {Op: faultproxy.HeadObject, Fault: faultproxy.Stall}}, []string{"verify", "--deep", "--bucket", "tools"}},
		{"verify-deep-midbody", []faultproxy.Rule{{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody}}, []string{"verify", "--deep", "--bucket", "tools"}},
		{"gc-list", []faultproxy.Rule{{Op: faultproxy.ListObjects, Fault: faultproxy.Stall}, {Op: faultproxy.ListMultipartUploads, Fault: faultproxy.Stall}, {Op: faultproxy.ListBuckets, Fault: faultproxy.Stall}}, []string{"gc", "--bucket", "tools"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp.Reset()
			fp.Inject(tc.rules...)
			start := time.Now()
			code, out := runS3sealExit(t, nil, append(tc.args, base...)...)
			d := time.Since(start)
			t.Logf("%v: exit %d after %v\n%s", tc.args, code, d, out)
			if code == 0 {
				t.Errorf("%v on a stalled store: exit 0", tc.args)
			}
			if d > 20*time.Second {
				t.Errorf("%v on a stalled store: ended after %v", tc.args, d)
			}
			fp.Reset()
		})
	}
}
