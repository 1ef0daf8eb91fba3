package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseMetrics parses a /metrics answer in the Prometheus text format.
func parseMetrics(t *testing.T, body io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// histogram is the series of the histogram name whose operation label is
// op, or nil.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name, op string) *dto.Histogram {
	t.Helper()
	f := fams[name]
	if f == nil {
		return nil
	}
	if f.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s is a %v, not a histogram", name, f.GetType())
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetName() == "operation" && m.GetLabel()[0].GetValue() == op {
			return m.GetHistogram()
		}
	}
	return nil
}

// syncBuffer is a log that tests read while serve writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServe runs serve with args on loopback addresses the system picks
// (--listen, and --metrics-listen when args give it as 127.0.0.1:0) and
// returns the addresses it logged (metrics "" without --metrics-listen).
// serve stops with the test.
func startServe(t *testing.T, args ...string) (s3Addr, metricsAddr string) {
	t.Helper()
	s3Addr, metricsAddr, _ = startServeWithLog(t, args...)
	return s3Addr, metricsAddr
}

// startServeWithLog is startServe that also returns serve's log, which
// goes on being written while the test reads it.
func startServeWithLog(t *testing.T, args ...string) (s3Addr, metricsAddr string, log *syncBuffer) {
	t.Helper()
	args = append([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--shutdown-delay", "0s"}, args...)
	c, err := parseConfig(args, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log = &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, c, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	s3Line := regexp.MustCompile(`s3seal listening on http://([0-9.:]+)`)
	metricsLine := regexp.MustCompile(`metrics on http://([0-9.:]+)/metrics`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			done <- err // for the clean-up, which waits on it
			t.Fatalf("serve ended: %v\n%s", err, log.String())
		default:
		}
		out := log.String()
		m := s3Line.FindStringSubmatch(out)
		mm := metricsLine.FindStringSubmatch(out)
		if m != nil && (mm != nil || c.MetricsListen == "") {
			if mm != nil {
				metricsAddr = mm[1]
			}
			return m[1], metricsAddr, log
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve logged no listening address:\n%s", out)
		}
	}
}

// httpGet answers GET url with its status and body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// serve with --metrics-listen and --pprof: the S3 requests a client made
// are in the duration histograms on the metrics listener, by operation,
// and so is every backend attempt; Go's profiles answer there and not on
// the S3 listener.
func TestServeDurationsAndPprofOnMetricsListener(t *testing.T) {
	s3Addr, metricsAddr := startServe(t, "--metrics-listen", "127.0.0.1:0", "--pprof")
	c := s3.New(s3.Options{BaseEndpoint: aws.String("http://" + s3Addr), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(devAccessKey, devSecretKey, "")})
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("hello")}); err != nil {
		t.Fatal(err)
	}
	putTook := time.Since(start)

	code, body := httpGet(t, "http://"+metricsAddr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	fams := parseMetrics(t, strings.NewReader(body))
	for _, op := range []string{"CreateBucket", "PutObject"} {
		h := histogram(t, fams, "s3seal_request_duration_seconds", op)
		if h == nil || h.GetSampleCount() != 1 || h.GetSampleSum() <= 0 {
			t.Fatalf("s3seal_request_duration_seconds{operation=%q} = %v, want one observation", op, h)
		}
	}
	if h := histogram(t, fams, "s3seal_request_duration_seconds", "PutObject"); h.GetSampleSum() > putTook.Seconds() {
		t.Errorf("PutObject took %v by the histogram, more than its client waited (%v)", h.GetSampleSum(), putTook)
	}
	// One observation per backend attempt: as many as the attempts counted
	// by outcome, for every backend operation.
	attempts := map[string]uint64{}
	for _, m := range fams["s3seal_backend_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" {
				attempts[l.GetValue()] += uint64(m.GetCounter().GetValue())
			}
		}
	}
	if attempts["PutObject"] == 0 {
		t.Fatalf("no backend PutObject counted: %v", attempts)
	}
	for op, n := range attempts {
		if h := histogram(t, fams, "s3seal_backend_request_duration_seconds", op); h.GetSampleCount() != n {
			t.Errorf("s3seal_backend_request_duration_seconds{operation=%q} has %d observations; %d attempts counted",
				op, h.GetSampleCount(), n)
		}
	}

	const index, goroutines = "Types of profiles available", "goroutine profile:"
	if code, body := httpGet(t, "http://"+metricsAddr+"/debug/pprof/"); code != 200 || !strings.Contains(body, index) {
		t.Fatalf("/debug/pprof/ on the metrics listener: %d %.200q", code, body)
	}
	if code, body := httpGet(t, "http://"+metricsAddr+"/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, goroutines) {
		t.Fatalf("/debug/pprof/goroutine on the metrics listener: %d %.200q", code, body)
	}
	// The command line may hold a secret given as a flag.
	if code, _ := httpGet(t, "http://"+metricsAddr+"/debug/pprof/cmdline"); code != 404 {
		t.Errorf("/debug/pprof/cmdline on the metrics listener: %d, want 404", code)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/profile?seconds=1"} {
		if code, body := httpGet(t, "http://"+s3Addr+path); code == 200 || strings.Contains(body, index) || strings.Contains(body, goroutines) {
			t.Errorf("%s on the S3 listener: %d %.200q", path, code, body)
		}
	}
}

// Without --pprof the metrics listener serves no profiles.
func TestMetricsListenerWithoutPprof(t *testing.T) {
	srv := httptest.NewServer(metricsMux(http.NotFoundHandler(), func(context.Context) error { return nil }, false))
	defer srv.Close()
	if code, _ := httpGet(t, srv.URL+"/readyz"); code != 200 {
		t.Fatalf("/readyz: %d", code)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		if code, _ := httpGet(t, srv.URL+path); code != 404 {
			t.Errorf("%s without --pprof: %d, want 404", path, code)
		}
	}
}

// --pprof (or S3SEAL_PPROF) needs --metrics-listen: the S3 listener faces
// clients.
func TestPprofNeedsMetricsListen(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil || c.PProf {
		t.Fatalf("default: pprof %v, %v", c.PProf, err)
	}
	for _, ok := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--pprof", "--metrics-listen", "127.0.0.1:9100"}, nil},
		{nil, map[string]string{"S3SEAL_PPROF": "true", "S3SEAL_METRICS_LISTEN": "127.0.0.1:9100"}},
	} {
		if c, err := parseConfig(ok.args, env(ok.env)); err != nil || !c.PProf {
			t.Errorf("%v %v: pprof %v, %v", ok.args, ok.env, c != nil && c.PProf, err)
		}
	}
	for _, bad := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--pprof"}, nil, "--pprof needs --metrics-listen: "},
		{nil, map[string]string{"S3SEAL_PPROF": "true"}, "S3SEAL_PPROF needs --metrics-listen: "},
	} {
		_, err := parseConfig(bad.args, env(bad.env))
		var ue *usageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%v %v: %v, want a usage error beginning %q", bad.args, bad.env, err, bad.want)
		}
	}
	code, _, errOut := runCmd([]string{"serve", "--pprof", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, nil)
	if code != 2 || !strings.HasPrefix(errOut, "s3seal: --pprof needs --metrics-listen: ") || !strings.Contains(errOut, "S3 API") {
		t.Errorf("serve --pprof: exit %d, %q", code, errOut)
	}
}
