package retry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// Forwarded reads are retried as the Store's calls are; forwarded writes
// are sent once.
func TestForwarderRetriesReadsOnly(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
	}))
	defer srv.Close()
	st, err := backend.NewS3(backend.S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := NewForwarder(st, Policy{Attempts: 3, Backoff: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		method string
		want   int32
	}{{http.MethodGet, 3}, {http.MethodHead, 3}, {http.MethodPut, 1}, {http.MethodDelete, 1}} {
		requests.Store(0)
		_, err := f.Forward(context.Background(), backend.RawRequest{Method: c.method, Bucket: "bkt", Query: map[string][]string{"tagging": {""}}})
		if !Retryable(err) { // a HEAD's answer has no body: its status only
			t.Fatalf("%s: %v, want the transient SlowDown", c.method, err)
		}
		if n := requests.Load(); n != c.want {
			t.Errorf("%s forwarded %d times, want %d", c.method, n, c.want)
		}
	}
}
