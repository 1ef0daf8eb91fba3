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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/backend"
)

type reqRecorder struct {
	mu        sync.Mutex
	reqs      []string
	in, out   map[string]int64
	inFlight  int
	integrity int
}

func (o *reqRecorder) Request(op string, status int, in, out int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reqs = append(o.reqs, fmt.Sprintf("%s %d", op, status))
	o.in[op] += in
	o.out[op] += out
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
	// An object that is not s3seal's fails its integrity check.
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
	// The SDK retries a 500: each attempt is a request with an integrity
	// failure.
	want := "CreateBucket 200,PutObject 200,GetObject 200,GetObject 404,GetObject 500"
	if got := strings.Join(obs.reqs, ","); !strings.HasPrefix(got, want) || strings.Count(got, "GetObject 500") != obs.integrity {
		t.Fatalf("requests %q, want %q and retries; integrity failures %d", obs.reqs, want, obs.integrity)
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

func TestReadyzFollowsReadiness(t *testing.T) {
	var mu sync.Mutex
	var fail error = errors.New("backend: connection refused")
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
