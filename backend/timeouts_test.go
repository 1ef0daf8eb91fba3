package backend

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

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// testTimeouts are short bounds for the stall tests.
var testTimeouts = Timeouts{Connect: 300 * time.Millisecond, Response: 300 * time.Millisecond, Idle: 300 * time.Millisecond}

// stallStore is the embedded store behind a fault proxy, reached by a
// client with testTimeouts, and a bucket holding "obj" (2 MiB).
func stallStore(t *testing.T) (*faultproxy.Proxy, *S3, []byte) {
	t.Helper()
	e, direct := startEmbedded(t, t.TempDir())
	ctx := context.Background()
	must(t, direct.CreateBucket(ctx, "bkt"))
	data := make([]byte, 2<<20)
	rand.Read(data)
	put(ctx, t, direct, "bkt", "obj", data, nil, Headers{})
	p, err := faultproxy.Start(e.Config().Endpoint)
	must(t, err)
	t.Cleanup(func() { p.Close() })
	cfg := e.Config()
	cfg.Endpoint, cfg.Timeouts, cfg.MaxAttempts = p.URL(), testTimeouts, 1
	st, err := NewS3(cfg)
	must(t, err)
	return p, st, data
}

// stallWithin fails the test unless f returns a stall error after at
// least lo and within hi; it returns the error.
func stallWithin(t *testing.T, what string, lo, hi time.Duration, f func() error) error {
	t.Helper()
	start := time.Now()
	err := f()
	d := time.Since(start)
	if !IsStall(err) {
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
		_, err := st.CompleteMultipartUpload(context.Background(), CompleteMultipartInput{Bucket: "bkt", Key: "k", UploadID: "u",
			Parts: []CompletedPart{{PartNumber: 1, ETag: "x"}}})
		return err
	})
}

func TestStallTakingTheUpload(t *testing.T) {
	p, st, _ := stallStore(t)
	p.Inject(faultproxy.Rule{Op: faultproxy.PutObject, Fault: faultproxy.StallReading})
	body := make([]byte, 64<<20) // far more than the socket buffers take
	err := stallWithin(t, "PUT", 250*time.Millisecond, 3*time.Second, func() error {
		_, err := st.PutObject(context.Background(), PutInput{Bucket: "bkt", Key: "big", Body: bytes.NewReader(body), Size: int64(len(body))})
		return err
	})
	if !strings.Contains(err.Error(), "request body") {
		t.Fatalf("%v: the stall is not named as the request body's", err)
	}
}

func TestStallMidBody(t *testing.T) {
	p, st, data := stallStore(t)
	p.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.ForwardThenStallBody})
	obj, err := st.GetObject(context.Background(), GetInput{Bucket: "bkt", Key: "obj"})
	must(t, err)
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
	put(ctx, t, st, "bkt", "small", data[:12], nil, Headers{})
	p.Inject(faultproxy.Rule{Op: faultproxy.GetObject, Fault: faultproxy.Drip, Delay: 100 * time.Millisecond})
	start := time.Now()
	obj, err := st.GetObject(ctx, GetInput{Bucket: "bkt", Key: "small"})
	must(t, err)
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
	obj, err = st.GetObject(ctx, GetInput{Bucket: "bkt", Key: "obj"})
	must(t, err)
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
	if _, err := st.PutObject(ctx, PutInput{Bucket: "bkt", Key: "slow", Body: src, Size: int64(len(data))}); err != nil {
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
	if IsStall(err) || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Fatalf("HEAD under a cancelled context: %v", err)
	}
	if d := time.Since(start); d > testTimeouts.Response {
		t.Fatalf("cancellation took %v", d)
	}
}

// A TLS endpoint that takes the connection and never answers the
// handshake is cut at the connect bound.
func TestConnectBoundsTLSHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	st, err := NewS3(S3Config{Endpoint: "https://" + ln.Addr().String(), AccessKey: "a", SecretKey: "s", PathStyle: true,
		MaxAttempts: 1, Timeouts: Timeouts{Connect: 300 * time.Millisecond}})
	must(t, err)
	start := time.Now()
	_, err = st.HeadObject(context.Background(), "bkt", "k")
	if d := time.Since(start); err == nil || d > 3*time.Second {
		t.Fatalf("HEAD over a silent TLS endpoint: %v after %v", err, d)
	}
}

// A refused connection is answered at once.
func TestRefusedAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	st, err := NewS3(S3Config{Endpoint: "http://" + addr, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1, Timeouts: DefaultTimeouts})
	must(t, err)
	start := time.Now()
	if _, err := st.HeadObject(context.Background(), "bkt", "k"); err == nil || IsStall(err) || time.Since(start) > time.Second {
		t.Fatalf("HEAD of a closed port: %v after %v", err, time.Since(start))
	}
}

// Once the answer came, the transport's further reads of the request body
// (it may go on sending after an early answer) no longer move the
// watchdog, which now guards the reads of the response body.
func TestAnsweredIgnoresSending(t *testing.T) {
	cut := make(chan error, 1)
	w := &watchdog{cancel: func(err error) { cut <- err }, t: Timeouts{Response: 50 * time.Millisecond, Idle: 50 * time.Millisecond, MinBytes: 1}}
	w.sending(phaseBody)
	w.answer()
	w.sending(phaseBody)
	w.took(10)
	select {
	case err := <-cut:
		t.Fatalf("cut after the answer by %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	w.reading()
	select {
	case err := <-cut:
		if !strings.Contains(err.Error(), "response body") {
			t.Fatalf("cut by %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the response body's watchdog never fired")
	}
}

// A read window that moved MinBytes starts anew; one that did not keeps
// the store's time: a store dripping a byte just within each Idle is cut.
func TestIdleWindowNeedsMinBytes(t *testing.T) {
	cut := make(chan error, 1)
	w := &watchdog{cancel: func(err error) { cut <- err }, t: Timeouts{Idle: 200 * time.Millisecond, MinBytes: 100}}
	w.answer()
	start := time.Now()
	for i := 0; i < 10; i++ {
		w.reading()
		select {
		case err := <-cut:
			if d := time.Since(start); !strings.Contains(err.Error(), "response body") || d < 150*time.Millisecond || d > time.Second {
				t.Fatalf("cut by %v after %v", err, d)
			}
			return
		case <-time.After(60 * time.Millisecond):
		}
		w.read(1)
	}
	t.Fatal("a byte every 60 ms of a 100-byte-per-200-ms bound was never cut")
}

// storeByHand serves each connection to a loopback listener with handle (a
// store that speaks HTTP by hand, byte by byte) and returns its address.
func storeByHand(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handle(conn)
			}()
		}
	}()
	return ln.Addr().String()
}

// A client request's stall budget shrinks with each stall and comes back
// whole once the store has moved a MiB since the last stall: stalls far
// apart in a long copy do not add up, stalls with nothing between do.
func TestStallBudgetRefillsOnProgress(t *testing.T) {
	b := &stallBudget{}
	if left := b.take(10 * time.Second); left != 10*time.Second {
		t.Fatalf("a new budget holds %v", left)
	}
	b.spend(4 * time.Second)
	b.progress(budgetRefill - 1)
	b.spend(4 * time.Second)
	b.progress(budgetRefill - 1) // counted from the last stall: not enough
	if left := b.take(10 * time.Second); left != 2*time.Second {
		t.Fatalf("after two stalls with less than a MiB between: %v left, want 2s", left)
	}
	b.progress(1)
	if left := b.take(10 * time.Second); left != 10*time.Second {
		t.Fatalf("after a MiB of progress: %v left, want the whole 10s", left)
	}
}
