package e2e

// The LFS listener's metrics.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLFSMetricsServed: the LFS listener serves the module's metrics on
// /metrics in Prometheus format:
// after a produce, uploads, bytes and requests by topic show.
func TestLFSMetricsServed(t *testing.T) {
	kafka := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p, base := startLFS(t, sealOpts{Args: []string{"--lfs-dev-kafka", kafka}})
	code, body := lfsPost(t, base+"/lfs/produce", map[string]string{"X-Kafka-Topic": "orders"},
		bytes.NewReader(bytes.Repeat([]byte("x"), 5000)))
	if code != 200 {
		t.Fatalf("produce: %d %s", code, body)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`s3seal_lfs_uploads_total{topic="orders"} 1`, "s3seal_lfs_upload_bytes_total 5000",
		`s3seal_lfs_requests_total{status="ok",topic="orders",type="produce"} 1`, "s3seal_lfs_orphan_objects_total 0"} {
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Fatalf("GET /metrics: %d, no %q in\n%s", resp.StatusCode, want, b)
		}
	}
	// s3seal's own /metrics shows the module's series too.
	resp, err = http.Get(p.Endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `s3seal_lfs_uploads_total{topic="orders"} 1`) || !strings.Contains(string(b), "s3seal_backend_requests_total") {
		t.Fatalf("GET %s/metrics: %d, no LFS or backend series in\n%s", p.Endpoint, resp.StatusCode, b)
	}
}
