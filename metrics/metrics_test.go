package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/s3seal/s3seal/retry"
	"github.com/s3seal/s3seal/s3api"
	"github.com/s3seal/s3seal/sealstore"
)

var (
	_ s3api.Observer     = (*Metrics)(nil)
	_ retry.Observer     = (*Metrics)(nil)
	_ sealstore.Observer = (*Metrics)(nil)
)

func TestSeries(t *testing.T) {
	m := New("v1.2.3")
	m.Request("PutObject", 200, 1000, 0, 30*time.Millisecond)
	m.Request("PutObject", 200, 500, 0, 2*time.Second)
	m.Request("GetObject", 404, 0, 300, time.Millisecond)
	m.Retry("UploadPart", "SlowDown")
	m.GiveUp("UploadPart", "http_502")
	m.Attempt("UploadPart", "SlowDown", 20*time.Second)
	m.Attempt("UploadPart", "ok", 500*time.Millisecond)
	m.SpoolBytes(4096)
	m.SpoolBytes(-1024)
	m.ListCache(true)
	m.ListCache(false)
	m.ListCache(true)
	m.InFlight(1)

	for _, c := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{m.requests.WithLabelValues("PutObject", "200"), 2},
		{m.requests.WithLabelValues("GetObject", "404"), 1},
		{m.bytesIn.WithLabelValues("PutObject"), 1500},
		{m.bytesOut.WithLabelValues("GetObject"), 300},
		{m.retries.WithLabelValues("UploadPart", "SlowDown"), 1},
		{m.giveUps.WithLabelValues("UploadPart", "http_502"), 1},
		{m.backendRequests.WithLabelValues("UploadPart", "ok"), 1},
		{m.spoolBytes, 3072},
		{m.listCache.WithLabelValues("hit"), 2},
		{m.inFlight, 1},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%v = %v, want %v", c.c, got, c.want)
		}
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`s3seal_requests_total{operation="PutObject",status="200"} 2`,
		`s3seal_backend_retries_total{cause="SlowDown",operation="UploadPart"} 1`,
		`s3seal_build_info{version="v1.2.3"} 1`,
		// Histograms of seconds, by operation only.
		"# TYPE s3seal_request_duration_seconds histogram",
		`s3seal_request_duration_seconds_bucket{operation="PutObject",le="0.025"} 0`,
		`s3seal_request_duration_seconds_bucket{operation="PutObject",le="0.05"} 1`,
		`s3seal_request_duration_seconds_bucket{operation="PutObject",le="2.5"} 2`,
		`s3seal_request_duration_seconds_sum{operation="PutObject"} 2.03`,
		`s3seal_request_duration_seconds_count{operation="PutObject"} 2`,
		`s3seal_request_duration_seconds_bucket{operation="GetObject",le="0.001"} 1`,
		"# TYPE s3seal_backend_request_duration_seconds histogram",
		`s3seal_backend_request_duration_seconds_bucket{operation="UploadPart",le="0.5"} 1`,
		`s3seal_backend_request_duration_seconds_bucket{operation="UploadPart",le="10"} 1`,
		`s3seal_backend_request_duration_seconds_bucket{operation="UploadPart",le="30"} 2`,
		`s3seal_backend_request_duration_seconds_bucket{operation="UploadPart",le="300"} 2`,
		`s3seal_backend_request_duration_seconds_count{operation="UploadPart"} 2`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
