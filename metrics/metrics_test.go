package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

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
	m.Request("PutObject", 200, 1000, 0)
	m.Request("PutObject", 200, 500, 0)
	m.Request("GetObject", 404, 0, 300)
	m.Retry("UploadPart", "SlowDown")
	m.GiveUp("UploadPart", "http_502")
	m.Attempt("UploadPart", "SlowDown")
	m.Attempt("UploadPart", "ok")
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
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
