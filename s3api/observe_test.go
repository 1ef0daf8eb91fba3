package s3api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
)

type reqRecorder struct {
	mu        sync.Mutex
	reqs      []string
	in, out   map[string]int64
	times     []time.Duration // of each request, as reqs
	inFlight  int
	integrity int
}

func (o *reqRecorder) Request(op string, status int, in, out int64, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reqs = append(o.reqs, fmt.Sprintf("%s %d", op, status))
	o.times = append(o.times, d)
	if o.in != nil {
		o.in[op] += in
		o.out[op] += out
	}
}
func (o *reqRecorder) InFlight(d int) { o.mu.Lock(); o.inFlight += d; o.mu.Unlock() }
func (o *reqRecorder) SlotWait()      {}
func (o *reqRecorder) IntegrityFailure() {
	o.mu.Lock()
	o.integrity++
	o.mu.Unlock()
}

func TestObserverSeesOperationStatusAndBytes(t *testing.T) {
	obs := &reqRecorder{in: map[string]int64{}, out: map[string]int64{}}
	var raw backend.Store
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk"), Observer: obs},
		func(b backend.Store) backend.Store { raw = b; return b })
	c := sdkClient(srv.URL, "ak", "sk")
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("x", 1000)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, out.Body)
	out.Body.Close()
	if err := get(ctx, c, "bkt", "missing"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("GET of a missing key: %v", err)
	}
	// An object that is not s3seal's is refused (403, not retried) and
	// counted as an integrity failure.
	if _, err := raw.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "plain", Body: strings.NewReader("abc"), Size: 3}); err != nil {
		t.Fatal(err)
	}
	if err := get(ctx, c, "bkt", "plain"); err == nil {
		t.Fatal("GET of a plaintext object succeeded")
	}
	// Unsigned probes are not S3 operations.
	if resp, err := http.Get(srv.URL + "/healthz"); err == nil {
		resp.Body.Close()
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := "CreateBucket 200,PutObject 200,GetObject 200,GetObject 404,GetObject 403"
	if got := strings.Join(obs.reqs, ","); got != want || obs.integrity != 1 {
		t.Fatalf("requests %q, want %q; integrity failures %d, want 1", obs.reqs, want, obs.integrity)
	}
	if obs.in["PutObject"] < int64(len(body)) {
		t.Errorf("bytes in of PutObject %d, want at least %d", obs.in["PutObject"], len(body))
	}
	if obs.out["GetObject"] < int64(len(body)) {
		t.Errorf("bytes out of GetObject %d, want at least %d", obs.out["GetObject"], len(body))
	}
	if obs.inFlight != 0 {
		t.Errorf("in flight %d after all requests ended", obs.inFlight)
	}
}

// slowBody is a backend whose GET bodies pause for delay once a MiB of
// them has been read: the answer's headers have gone out by then.
type slowBody struct {
	backend.Store
	delay time.Duration
}

func (s slowBody) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	o, err := s.Store.GetObject(ctx, in)
	if err == nil {
		o.Body = &pausingBody{ReadCloser: o.Body, at: 1 << 20, delay: s.delay}
	}
	return o, err
}

type pausingBody struct {
	io.ReadCloser
	n, at int64
	delay time.Duration
}

func (b *pausingBody) Read(p []byte) (int, error) {
	if b.n >= b.at && b.delay > 0 {
		time.Sleep(b.delay)
		b.delay = 0
	}
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// The time reported of a request runs to the end of its response, not to
// its headers: a GET whose body the store delivers slowly reports the
// store's pause; and no request reports more than its client waited.
func TestObserverTimesRequestsToTheirEnd(t *testing.T) {
	const pause = 300 * time.Millisecond
	obs := &reqRecorder{}
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk"), Observer: obs},
		func(b backend.Store) backend.Store { return slowBody{Store: b, delay: pause} })
	c := sdkClient(srv.URL, "ak", "sk")
	ctx := context.Background()
	var waited []time.Duration // by the client, of each request
	timed := func(f func() error) {
		t.Helper()
		start := time.Now()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		waited = append(waited, time.Since(start))
	}
	timed(func() error {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")})
		return err
	})
	body := strings.Repeat("x", 4<<20)
	timed(func() error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader(body)})
		return err
	})
	var headers time.Duration
	timed(func() error {
		start := time.Now()
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
		if err != nil {
			return err
		}
		headers = time.Since(start)
		defer out.Body.Close()
		n, err := io.Copy(io.Discard, out.Body)
		if err == nil && n != int64(len(body)) {
			err = fmt.Errorf("GET read %d bytes of %d", n, len(body))
		}
		return err
	})
	if headers >= pause {
		t.Logf("the GET's headers came after %v, not before the store's pause", headers)
	}

	// The client may have its last byte before the handler has returned
	// and its time is reported: wait for the report, and allow the
	// handler that moment after the client's end.
	const lag = 100 * time.Millisecond
	deadline := time.Now().Add(5 * time.Second)
	for {
		obs.mu.Lock()
		if len(obs.reqs) == 3 || time.Now().After(deadline) {
			break
		}
		obs.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	defer obs.mu.Unlock()
	if want := "CreateBucket 200,PutObject 200,GetObject 200"; strings.Join(obs.reqs, ",") != want {
		t.Fatalf("requests %q, want %s", obs.reqs, want)
	}
	for i, d := range obs.times {
		if d <= 0 || d > waited[i]+lag {
			t.Errorf("%s: reported %v; its client waited %v", obs.reqs[i], d, waited[i])
		}
	}
	if d := obs.times[2]; d < pause {
		t.Errorf("GET reported %v, less than the store's pause of %v in its body", d, pause)
	}
}

func TestReadyzFollowsReadiness(t *testing.T) {
	var mu sync.Mutex
	fail := errors.New("backend: connection refused")
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk"), Readiness: func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return fail
	}})
	probe := func() (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := probe(); code != 503 || !strings.Contains(body, "connection refused") {
		t.Fatalf("readyz while failing: %d %q", code, body)
	}
	if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz (liveness) while not ready: %v %v", resp, err)
	}
	mu.Lock()
	fail = nil
	mu.Unlock()
	if code, body := probe(); code != 200 || body != "ready\n" {
		t.Fatalf("readyz once ready: %d %q", code, body)
	}
}
