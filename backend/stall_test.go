package backend_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/backend/internal/storetest"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// testTimeouts are short bounds for the stall tests.
var testTimeouts = backend.Timeouts{Connect: 300 * time.Millisecond, Response: 300 * time.Millisecond, Idle: 300 * time.Millisecond}

// stallStore is the embedded store behind a fault proxy, reached by a
// client with testTimeouts, and a bucket holding "obj" (2 MiB).
func stallStore(t *testing.T) (*faultproxy.Proxy, *backend.S3, []byte) {
	t.Helper()
	e, err := embedded.Start(t.TempDir())
	storetest.Must(t, err)
	t.Cleanup(func() { e.Close() })
	direct, err := backend.NewS3(e.Config())
	storetest.Must(t, err)
	ctx := context.Background()
	storetest.Must(t, direct.CreateBucket(ctx, "bkt"))
	data := make([]byte, 2<<20)
	rand.Read(data)
	storetest.Put(ctx, t, direct, "bkt", "obj", data, nil, backend.Headers{})
	p, err := faultproxy.Start(e.Config().Endpoint)
	storetest.Must(t, err)
	t.Cleanup(func() { p.Close() })
	cfg := e.Config()
	cfg.Endpoint, cfg.Timeouts, cfg.MaxAttempts = p.URL(), testTimeouts, 1
	st, err := backend.NewS3(cfg)
	storetest.Must(t, err)
	return p, st, data
}

// stallWithin fails the test unless f returns a stall error after at
// least lo and within hi; it returns the error.
func stallWithin(t *testing.T, what string, lo, hi time.Duration, f func() error) error {
	t.Helper()
	start := time.Now()
	err := f()
	d := time.Since(start)
	if !backend.IsStall(err) {
		t.Fatalf("%s: %v after %v, want a stall error", what, err, d)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%s: %v is not a net.Error timeout", what, err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("%s: %v reads as the caller's cancellation", what, err)
	}
	if d < lo || d > hi {
		t.Fatalf("%s: stalled after %v, want between %v and %v", what, d, lo, hi)
	}
	return err
}

func TestStallNoAnswer(t *testing.T) {
	p, st, _ := stallStore(t)
	p.Inject(faultproxy.Rule{Op: faultproxy.HeadObject, Fault: faultproxy.Stall},
		faultproxy.Rule{Op: faultproxy.CompleteMultipartUpload, Fault: faultproxy.ForwardThenStall})
	stallWithin(t, "HEAD", 250*time.Millisecond, 3*time.Second, func() error {
		_, err := st.HeadObject(context.Background(), "bkt", "obj")
		return err
	})
	stallWithin(t, "CompleteMultipartUpload", 250*time.Millisecond, 3*time.Second, func() error {
		_, err := st.CompleteMultipartUpload(context.Background(), backend.CompleteMultipartInput{Bucket: "bkt", Key: "k", UploadID: "u",
			Parts: []backend.CompletedPart{{PartNumber: 1, ETag: "x"}}})
		return err
	})
}

func TestStallTakingTheUpload(t *testing.T) {
	p, st, _ := stallStore(t)
	p.Inject(faultproxy.Rule{Op: faultproxy.PutObject, Fault: faultproxy.StallReading})
	body := make([]byte, 64<<20) // far more than the socket buffers take
	err := stallWithin(t, "PUT", 250*time.Millisecond, 3*time.Second, func() error {
		_, err := st.PutObject(context.Background(), backend.PutInput{Bucket: "bkt", Key: "big", Body: bytes.NewReader(body), Size: int64(len(body))})
		return err
	})
	if !strings.Contains(err.Error(), "request body") {
		t.Fatalf("%v: the stall is not named as the request body's", err)
	}
}

func TestStallMidBody(t *testing.T) {
	p, st, data := stallStore(t)
	p.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody})
	obj, err := st.GetObject(context.Background(), backend.GetInput{Bucket: "bkt", Key: "obj"})
	storetest.Must(t, err)
	defer obj.Body.Close()
	var got bytes.Buffer
	stallWithin(t, "GET body", 250*time.Millisecond, 3*time.Second, func() error {
		_, err := io.Copy(&got, obj.Body)
		return err
	})
	if got.Len() >= len(data) || !bytes.Equal(got.Bytes(), data[:got.Len()]) {
		t.Fatalf("read %d bytes before the stall, want a true prefix of %d", got.Len(), len(data))
	}
}

// A body that moves, however slowly, and time s3seal itself takes are not
// stalls: no whole-request deadline.
func TestNoStallWhileBytesMove(t *testing.T) {
	p, st, data := stallStore(t)
	ctx := context.Background()
	storetest.Put(ctx, t, st, "bkt", "small", data[:12], nil, backend.Headers{})
	p.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.Drip, Delay: 100 * time.Millisecond})
	start := time.Now()
	obj, err := st.GetObject(ctx, backend.GetInput{Bucket: "bkt", Key: "small"})
	storetest.Must(t, err)
	got, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil || !bytes.Equal(got, data[:12]) {
		t.Fatalf("dripped GET: %v, %d bytes", err, len(got))
	}
	if d := time.Since(start); d < 2*testTimeouts.Idle {
		t.Fatalf("the drip took %v: it did not outlast the idle bound, so it proves nothing", d)
	}
	p.Reset()

	// A slow reader of the answer (s3seal's client downloading slowly).
	obj, err = st.GetObject(ctx, backend.GetInput{Bucket: "bkt", Key: "obj"})
	storetest.Must(t, err)
	var buf bytes.Buffer
	for i := 0; ; i++ {
		if i == 1 {
			time.Sleep(3 * testTimeouts.Idle)
		}
		n, err := io.CopyN(&buf, obj.Body, 256<<10)
		if err == io.EOF || n == 0 {
			break
		}
		if err != nil {
			t.Fatalf("slow reader cut after %d bytes: %v", buf.Len(), err)
		}
	}
	obj.Body.Close()
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("slow reader got %d bytes, want %d", buf.Len(), len(data))
	}

	// A slow source of an upload (s3seal's client uploading slowly).
	src := &slowReader{r: bytes.NewReader(data), pause: 3 * testTimeouts.Idle, after: 1 << 20}
	if _, err := st.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "slow", Body: src, Size: int64(len(data))}); err != nil {
		t.Fatalf("slow upload source: %v", err)
	}
}

// slowReader pauses once per pass over its bytes, after the given number
// of bytes (the SDK reads a seekable body once to sign it, then again to
// send it).
type slowReader struct {
	r      *bytes.Reader
	pause  time.Duration
	after  int64
	paused bool
}

func (s *slowReader) Read(p []byte) (int, error) {
	if pos := s.r.Size() - int64(s.r.Len()); !s.paused && pos >= s.after {
		s.paused = true
		time.Sleep(s.pause)
	}
	return s.r.Read(p)
}

func (s *slowReader) Seek(off int64, whence int) (int64, error) {
	s.paused = false
	return s.r.Seek(off, whence)
}

// The caller going away is its cancellation, at once, never a stall.
func TestCallerCancelIsNotAStall(t *testing.T) {
	p, st, _ := stallStore(t)
	p.Inject(faultproxy.Rule{Op: faultproxy.HeadObject, Fault: faultproxy.Stall})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := st.HeadObject(ctx, "bkt", "obj")
	if backend.IsStall(err) || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Fatalf("HEAD under a cancelled context: %v", err)
	}
	if d := time.Since(start); d > testTimeouts.Response {
		t.Fatalf("cancellation took %v", d)
	}
}
