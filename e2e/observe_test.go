package e2e

// Operators' view: /metrics, /readyz and structured logs with request ids.

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsReadyzAndJSONLogs: the binary serves Prometheus metrics and
// /readyz beside the S3 API, unauthenticated, and logs JSON whose
// request_id is the S3 x-amz-request-id of the request.
func TestMetricsReadyzAndJSONLogs(t *testing.T) {
	p, c := startWithBucket(t, sealOpts{Args: []string{"--log-format", "json", "--log-level", "debug"}}, mustCreateBucket, "obs")
	ctx := ctxT(t)
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("obs"), Key: aws.String("k"),
		Body: strings.NewReader(strings.Repeat("x", 4000))})
	if err != nil {
		t.Fatal(err)
	}
	reqID := requestID(out.ResultMetadata)
	if reqID == "" {
		t.Fatal("no x-amz-request-id on the PUT")
	}
	if code, body := httpGet(t, p.Endpoint+"/readyz"); code != 200 {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	// A HEAD of a key not there: the store's 404 is normal traffic.
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("obs"), Key: aws.String("missing")}); err == nil {
		t.Fatal("HEAD of a missing key succeeded")
	}
	code, body := httpGet(t, p.Endpoint+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`s3seal_requests_total{operation="PutObject",status="200"} 1`,
		`s3seal_requests_total{operation="CreateBucket",status="200"} 1`,
		`s3seal_backend_requests_total{operation="PutObject",outcome="ok"}`,
		`s3seal_requests_in_flight 0`,
		`s3seal_spool_bytes 0`,
		`s3seal_build_info{version=`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The HEAD of a key not there is a 404 of normal traffic: counted
	// apart, so that no backend attempt counts as an error.
	if !strings.Contains(body, `s3seal_backend_requests_total{operation="HeadObject",outcome="not_found"}`) || strings.Contains(body, `outcome="error"`) {
		var counted []string
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "s3seal_backend_requests_total{") {
				counted = append(counted, l)
			}
		}
		t.Errorf("/metrics counts the HEAD of a new key as an error, or not as not_found:\n%s", strings.Join(counted, "\n"))
	}
	// /metrics, the first log line and s3seal version carry one version.
	_, vout := runS3sealExit(t, nil, "version")
	version := strings.TrimSpace(strings.TrimPrefix(vout, "s3seal "))
	if version == "" || !strings.Contains(body, fmt.Sprintf(`s3seal_build_info{version=%q} 1`, version)) {
		t.Errorf("/metrics lacks s3seal_build_info for version %q", version)
	}
	if first, _, _ := strings.Cut(p.Log(), "\n"); !strings.Contains(first, fmt.Sprintf(`"version":%q`, version)) {
		t.Errorf("first log line %q does not name version %q", first, version)
	}
	if !strings.Contains(p.Log(), fmt.Sprintf(`"request_id":"%s"`, reqID)) {
		t.Errorf("no JSON log line with request_id %s:\n%s", reqID, p.Log())
	}
}

func requestID(md middleware.Metadata) string {
	raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	if !ok {
		return ""
	}
	return raw.Header.Get("x-amz-request-id")
}

// TestReadyzReportsADeadBackend: with the object store unreachable,
// /healthz (liveness) still answers 200 but /readyz answers 503 and says
// what failed; --metrics-listen moves /readyz and /metrics to a listener
// of their own, /healthz answering on both.
func TestReadyzReportsADeadBackend(t *testing.T) {
	dead := &motoServer{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	maddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startS3seal(t, sealOpts{Backend: dead, Args: []string{"--metrics-listen", maddr}})
	if code, _ := httpGet(t, p.Endpoint+"/healthz"); code != 200 {
		t.Fatalf("/healthz with a dead backend: %d, want 200", code)
	}
	if code, _ := httpGet(t, "http://"+maddr+"/healthz"); code != 200 {
		t.Fatalf("/healthz on --metrics-listen with a dead backend: %d, want 200", code)
	}
	// The reason names what failed, never the store's address or words.
	code, body := httpGet(t, "http://"+maddr+"/readyz")
	if code != 503 || !strings.Contains(body, "object store") || strings.Contains(body, "127.0.0.1") || strings.Contains(body, "refused") {
		t.Errorf("/readyz with a dead backend: %d %q", code, body)
	}
	// /readyz moved with /metrics: on the S3 listener it is an ordinary
	// path, which an unsigned request may not read.
	if code, body := httpGet(t, p.Endpoint+"/readyz"); code != 403 {
		t.Errorf("/readyz still on the S3 listener with --metrics-listen: %d %q", code, body)
	}
	if code, body := httpGet(t, "http://"+maddr+"/metrics"); code != 200 || !strings.Contains(body, "s3seal_requests_in_flight") {
		t.Errorf("/metrics on --metrics-listen: %d", code)
	}
	if code, body := httpGet(t, p.Endpoint+"/metrics"); strings.Contains(body, "s3seal_requests_in_flight") {
		t.Errorf("/metrics still on the S3 listener with --metrics-listen: %d", code)
	}
}
