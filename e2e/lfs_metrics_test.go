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

// TestLFSMetricsBehindAPIKey: with --lfs-api-key, the LFS listener's
// /metrics, which names every topic produced to, answers 401 without the
// key and the series with it; s3seal's own /metrics on the S3 listener,
// unauthenticated, names no topic; /healthz on the LFS listener needs no
// key. With --metrics-listen (private) s3seal's /metrics keeps the
// module's series.
func TestLFSMetricsBehindAPIKey(t *testing.T) {
	const key, topic = "lfs-metrics-key-0123456789", "payroll-exports"
	get := func(url string, h map[string]string) (int, string) {
		t.Helper()
		code, b := lfsDo(t, http.MethodGet, url, h, nil)
		return code, string(b)
	}
	for _, private := range []bool{false, true} {
		o := sealOpts{Args: []string{"--lfs-dev-kafka", fmt.Sprintf("127.0.0.1:%d", freePort(t))}, Env: []string{"S3SEAL_LFS_API_KEY=" + key}}
		metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		if private {
			o.Args = append(o.Args, "--metrics-listen", metricsAddr)
		}
		p, base := startLFS(t, o)
		if code, body := lfsPost(t, base+"/lfs/produce", map[string]string{"X-Kafka-Topic": topic, "X-API-Key": key},
			bytes.NewReader([]byte("blob"))); code != 200 {
			t.Fatalf("produce with the key: %d %s", code, body)
		}
		if code, body := get(base+"/metrics", nil); code != http.StatusUnauthorized || strings.Contains(body, topic) {
			t.Errorf("LFS /metrics without the key: %d %s; want 401 naming no topic", code, body)
		}
		if code, body := get(base+"/metrics", map[string]string{"X-API-Key": "wrong"}); code != http.StatusUnauthorized {
			t.Errorf("LFS /metrics with a wrong key: %d %s; want 401", code, body)
		}
		for _, h := range []map[string]string{{"X-API-Key": key}, {"Authorization": "Bearer " + key}} {
			if code, body := get(base+"/metrics", h); code != 200 || !strings.Contains(body, `s3seal_lfs_uploads_total{topic="`+topic+`"} 1`) {
				t.Errorf("LFS /metrics with the key (%v): %d, no series of the topic in\n%s", h, code, body)
			}
		}
		if code, _ := get(base+"/healthz", nil); code != 200 {
			t.Errorf("LFS /healthz without the key: %d, want 200", code)
		}
		if private {
			code, body := get("http://"+metricsAddr+"/metrics", nil)
			if code != 200 || !strings.Contains(body, `s3seal_lfs_uploads_total{topic="`+topic+`"} 1`) {
				t.Errorf("--metrics-listen /metrics: %d, no LFS series in\n%s", code, body)
			}
		} else {
			code, body := get(p.Endpoint+"/metrics", nil)
			if code != 200 || strings.Contains(body, topic) || !strings.Contains(body, "s3seal_build_info") {
				t.Errorf("S3 listener's /metrics with an LFS API key: %d, want s3seal's series and no topic in\n%s", code, body)
			}
		}
		p.Stop()
	}
}
