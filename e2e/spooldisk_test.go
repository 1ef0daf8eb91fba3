//go:build linux

package e2e

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend/embedded"
)

const (
	spoolDiskSize    = 200 << 20 // the tmpfs under --data-dir
	spoolDiskReserve = 32 << 20  // --spool-reserve
	spoolDiskBody    = 64 << 20  // each PUT and part
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and
// unmounts it when the test ends. It fails the test, naming why, when
// mounting is not permitted: CI runs as root.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Fatalf("mount -t tmpfs -o size=%d on %s: %v (this test needs root, or CAP_SYS_ADMIN, to put --data-dir on a small filesystem; CI runs it as root)", size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the tmpfs on %s: %v", dir, err)
		}
	})
	return dir
}

// diskUse is the bytes in use on the filesystem of dir.
func diskUse(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}

// highWater samples the use of dir's filesystem until stop is called,
// which returns the most it saw.
func highWater(t *testing.T, dir string) (stop func() int64) {
	done, out := make(chan struct{}), make(chan int64)
	go func() {
		var high int64
		for {
			var st syscall.Statfs_t
			if syscall.Statfs(dir, &st) == nil {
				high = max(high, int64(st.Blocks-st.Bfree)*st.Bsize)
			}
			select {
			case <-done:
				out <- high
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 { close(done); return <-out }
}

// patternMD5 is the hex MD5 of the concatenated pattern streams of seeds.
func patternMD5(size int64, seeds ...uint64) string {
	h := md5.New()
	for _, s := range seeds {
		_, _ = io.Copy(h, newPatternReader(s, size))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// spoolLoad is one PUT or part of the load.
type spoolLoad struct {
	seed uint64
	part int32 // 0: a PUT of key "put-<seed>"
	etag string
	err  error
}

func (l *spoolLoad) send(ctx context.Context, c *s3.Client, bucket, uploadID string) {
	body := newPatternReader(l.seed, spoolDiskBody)
	if l.part == 0 {
		var out *s3.PutObjectOutput
		out, l.err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(l.key()),
			Body: body, ContentLength: aws.Int64(spoolDiskBody)})
		if l.err == nil {
			l.etag = unquote(out.ETag)
		}
		return
	}
	var out *s3.UploadPartOutput
	out, l.err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: aws.String(uploadID),
		PartNumber: aws.Int32(l.part), Body: body, ContentLength: aws.Int64(spoolDiskBody)})
	if l.err == nil {
		l.etag = unquote(out.ETag)
	}
}

func (l *spoolLoad) key() string { return "put-" + strconv.FormatUint(l.seed, 10) }

// sendAll sends every load at once.
func sendAll(ctx context.Context, c *s3.Client, bucket, uploadID string, loads []*spoolLoad) {
	var wg sync.WaitGroup
	for _, l := range loads {
		wg.Go(func() { l.send(ctx, c, bucket, uploadID) })
	}
	wg.Wait()
}

// TestSpoolDiskBounded: --data-dir on a 200 MiB tmpfs with a 32 MiB
// reserve; 4 PUTs and 4 parts of 64 MiB at once. Those that do not fit
// get 503 SlowDown (a throttle the SDK's retryer retries) before their
// body is read; the disk never goes past its size less the reserve; the
// others read back byte for byte; nothing refused is visible; sent again,
// with the SDK's standard retries, every one succeeds; and the tmpfs is
// as empty afterwards as before.
func TestSpoolDiskBounded(t *testing.T) {
	dir := mountTmpfs(t, spoolDiskSize)
	emb, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emb.Close() })
	cfg := emb.Config()
	p := startS3seal(t, sealOpts{DataDir: dir, Backend: &motoServer{Endpoint: emb.Endpoint()},
		Args: []string{"--backend-access-key", cfg.AccessKey, "--backend-secret-key", cfg.SecretKey,
			"--spool-reserve", strconv.Itoa(spoolDiskReserve)}})
	// aws-sdk-go-v2 sends Expect: 100-continue with a body over 2 MiB but
	// does not wait for the go-ahead (its requests carry no protocol
	// version, which net/http needs to wait): a refusal must reach a
	// client that is sending its body.
	c := sdkFor(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const bucket = "spooldisk"
	mustCreateBucket(t, c, bucket)
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(cr.UploadId)
	base := diskUse(t, dir)

	var loads []*spoolLoad
	for i := range 8 {
		l := &spoolLoad{seed: uint64(100 + i)}
		if i%2 == 1 {
			l.part = int32(len(loads)/2 + 1)
		}
		loads = append(loads, l)
	}
	stop := highWater(t, dir)
	start := time.Now()
	sendAll(ctx, c, bucket, id, loads)
	high := stop()
	t.Logf("8 x 64 MiB at once in %v: disk high-water %d MiB of %d MiB (%d MiB reserved), %d MiB before",
		time.Since(start).Round(time.Millisecond), high>>20, spoolDiskSize>>20, spoolDiskReserve>>20, base>>20)
	if limit := int64(spoolDiskSize - spoolDiskReserve + 1<<20); high > limit {
		t.Errorf("disk use went up to %d bytes, above the %d the reserve leaves (1 MiB of slack)", high, limit)
	}

	var refused []*spoolLoad
	slowDowns := 0
	for _, l := range loads {
		switch code, status := apiCode(l.err); {
		case l.err == nil:
		case status == http.StatusServiceUnavailable && (code == "SlowDown" || code == ""):
			// The SDK closes the body it is still sending once the
			// answer came, and so its own connection, racing its read
			// of the error document: then it has the status alone,
			// which its retryer retries too.
			if code == "SlowDown" && retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(l.err) != aws.TrueTernary {
				t.Errorf("the SDK's retryer does not take %v for a throttle", l.err)
			}
			if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(l.err) != aws.TrueTernary {
				t.Errorf("the SDK's retryer does not retry %v", l.err)
			}
			if code == "SlowDown" {
				slowDowns++
			}
			refused = append(refused, l)
		default:
			t.Errorf("seed %d (part %d): %v, want success or 503 SlowDown", l.seed, l.part, l.err)
		}
	}
	t.Logf("%d of 8 refused with 503 (%d with the SlowDown document read)", len(refused), slowDowns)
	if len(refused) == 0 || len(refused) == len(loads) {
		t.Fatalf("%d of %d refused; want some refused and some served", len(refused), len(loads))
	}
	parts, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[int32]bool{}
	for _, pt := range parts.Parts {
		listed[aws.ToInt32(pt.PartNumber)] = true
	}
	for _, l := range loads {
		switch {
		case l.part == 0 && l.err != nil:
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(l.key())})
			wantStatus(t, "HEAD of a refused PUT", err, http.StatusNotFound, "")
		case l.part == 0:
			checkPatternObject(t, ctx, c, bucket, l.key(), patternMD5(spoolDiskBody, l.seed))
		case listed[l.part] != (l.err == nil):
			t.Errorf("part %d: listed %v, refused %v", l.part, listed[l.part], l.err != nil)
		}
	}

	// Load dropped: the refused ones again, at once, as a client with the
	// SDK's standard retries sends them.
	rc := s3.New(c.Options(), func(o *s3.Options) {
		o.Retryer = retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts, o.MaxBackoff = 20, 2*time.Second })
	})
	sendAll(ctx, rc, bucket, id, refused)
	for _, l := range refused {
		if l.err != nil {
			t.Fatalf("seed %d (part %d) sent again with retries: %v", l.seed, l.part, l.err)
		}
		if l.part == 0 {
			checkPatternObject(t, ctx, c, bucket, l.key(), patternMD5(spoolDiskBody, l.seed))
		}
	}
	var done []types.CompletedPart
	var seeds []uint64
	for _, l := range loads {
		if l.part != 0 {
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(l.part), ETag: aws.String(l.etag)})
			seeds = append(seeds, l.seed)
		}
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mp"),
		UploadId: aws.String(id), MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatal(err)
	}
	checkPatternObject(t, ctx, c, bucket, "mp", patternMD5(spoolDiskBody, seeds...))

	if after := diskUse(t, dir); after != base {
		t.Errorf("the tmpfs holds %d bytes after the load, %d before: spool space not given back", after, base)
	}
	entries, err := os.ReadDir(dir + "/spool")
	if err != nil || len(entries) != 0 {
		t.Errorf("spool directory after the load: %d entries (%v)", len(entries), err)
	}
}

// checkPatternObject GETs an object and compares the MD5 of its content.
func checkPatternObject(t *testing.T, ctx context.Context, c *s3.Client, bucket, key, wantMD5 string) {
	t.Helper()
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Errorf("GET %s: %v", key, err)
		return
	}
	defer out.Body.Close()
	h := md5.New()
	if _, err := io.Copy(h, out.Body); err != nil {
		t.Errorf("GET %s body: %v", key, err)
		return
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantMD5 {
		t.Errorf("GET %s: content MD5 %s, want %s", key, got, wantMD5)
	}
}
