package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/metrics"
	"github.com/s3seal/s3seal/retry"
)

func TestParseConfigRetrySettings(t *testing.T) {
	c, err := parseConfig([]string{"--part-retry-attempts", "7"}, env(map[string]string{
		"S3SEAL_PART_RETRY_ATTEMPTS":     "2", // the flag wins
		"S3SEAL_COMPLETE_RETRY_ATTEMPTS": "6",
		"S3SEAL_COMPLETE_RETRY_BACKOFF":  "250ms",
		"S3SEAL_SOURCE_READ_BACKOFF":     "2s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := c.retryPolicies(nil)
	want := retry.Policies{
		Complete:   retry.Policy{Attempts: 6, Backoff: 250 * time.Millisecond},
		Part:       retry.Policy{Attempts: 7, Backoff: 500 * time.Millisecond},
		SourceRead: retry.Policy{Attempts: 4, Backoff: 2 * time.Second},
	}
	if got != want {
		t.Fatalf("policies = %+v, want %+v", got, want)
	}
	for _, args := range [][]string{
		{"--complete-retry-attempts", "0"}, {"--part-retry-backoff", "0s"},
		{"--source-read-attempts", "-1"}, {"--source-read-backoff", "2h"}, {"--part-retry-backoff", "soon"},
	} {
		if _, err := parseConfig(args, env(nil)); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestBackendSDKMakesOneAttemptPerRetry proves the SDK's own retryer stays
// off in the backend s3seal opens: a backend that always answers 503
// SlowDown sees exactly as many requests as the retry policy has attempts,
// not attempts times the SDK's three.
func TestBackendSDKMakesOneAttemptPerRetry(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
	}))
	defer srv.Close()
	st := openTestBackend(t, srv.URL, nil)
	// The default policy: 4 attempts, full jitter under 0.5, 1, 2 s.
	_, err := st.ListObjects(context.Background(), backend.ListInput{Bucket: "bkt", V2: true})
	if backend.ErrorCode(err) != "SlowDown" || !retry.Retryable(err) {
		t.Fatalf("err = %v, want the transient SlowDown", err)
	}
	if n := requests.Load(); n != 4 {
		t.Fatalf("backend saw %d requests for 4 retry attempts", n)
	}
}

// Every attempt of a backend call is timed on its own in
// s3seal_backend_request_duration_seconds: a backend that takes 100 ms to
// answer 503 SlowDown puts four observations of at least 100 ms there.
func TestBackendAttemptsTimed(t *testing.T) {
	const slow = 100 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(slow)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
	}))
	defer srv.Close()
	mets := metrics.New("test")
	st := openTestBackend(t, srv.URL, mets)
	if _, err := st.ListObjects(context.Background(), backend.ListInput{Bucket: "bkt", V2: true}); backend.ErrorCode(err) != "SlowDown" {
		t.Fatalf("err = %v, want SlowDown", err)
	}
	rec := httptest.NewRecorder()
	mets.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	h := histogram(t, parseMetrics(t, rec.Body), "s3seal_backend_request_duration_seconds", "ListObjects")
	if h.GetSampleCount() != 4 || h.GetSampleSum() < 4*slow.Seconds() {
		t.Fatalf("ListObjects attempts: %d observations, %v s in all; want 4 of at least %v", h.GetSampleCount(), h.GetSampleSum(), slow)
	}
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() < slow.Seconds() && b.GetCumulativeCount() != 0 {
			t.Errorf("%d attempts took at most %v s; each took at least %v", b.GetCumulativeCount(), b.GetUpperBound(), slow)
		}
	}
}

// TestDeadBackendAnsweredAtOnce: a backend that refuses connections costs
// a call two attempts (one backoff under 0.5 s), not the policy's four, so
// the client hears 503 within about a second per backend call.
func TestDeadBackendAnsweredAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	st := openTestBackend(t, "http://"+addr, nil)
	for range 3 {
		start := time.Now()
		_, err := st.HeadObject(context.Background(), "bkt", "k")
		if d := time.Since(start); !errors.Is(err, syscall.ECONNREFUSED) || d > time.Second {
			t.Fatalf("HEAD on a dead backend: %v after %v, want connection refused within 1s", err, d)
		}
	}
}

// openTestBackend opens the backend serve would open for endpoint, as the
// configuration parses it (retry policies, timeouts), its attempts told to
// obs (nil: none), closed with the test.
func openTestBackend(t *testing.T, endpoint string, obs retry.Observer) backend.Store {
	t.Helper()
	cfg, err := parseConfig([]string{"--backend-endpoint", endpoint, "--backend-access-key", "a", "--backend-secret-key", "b",
		"--backend-path-style", "--key", "k", "--access-key", "x", "--secret-key", "y"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	st, closeFn, _, err := openBackend(cfg, obs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return st
}
