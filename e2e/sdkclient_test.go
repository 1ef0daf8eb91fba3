package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// hostRecorder is an http.RoundTripper that remembers the Host of every
// request, so a test can check which addressing style was used.
type hostRecorder struct {
	next  http.RoundTripper
	mu    sync.Mutex
	hosts []string
}

func (h *hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts = append(h.hosts, r.URL.Host)
	h.mu.Unlock()
	return h.next.RoundTrip(r)
}

func (h *hostRecorder) Hosts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hosts...)
}

// loopbackTransport dials every "localhost" and "*.localhost" name on
// 127.0.0.1, so virtual-hosted style (bucket.localhost:PORT) works without
// a resolver entry.
func loopbackTransport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if host == "localhost" || strings.HasSuffix(host, ".localhost") {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
}

// newSDKClient builds an aws-sdk-go-v2 S3 client by hand: no
// config.LoadDefaultConfig, so AWS_CA_BUNDLE and the user's ~/.aws files do
// not apply. Retries are off so that a test sees the server's first answer.
func newSDKClient(t testing.TB, endpoint, ak, sk string, pathStyle bool) *s3.Client {
	t.Helper()
	c, _ := newRecordingSDKClient(t, endpoint, ak, sk, pathStyle)
	return c
}

// newRecordingSDKClient is newSDKClient that also records request hosts.
func newRecordingSDKClient(t testing.TB, endpoint, ak, sk string, pathStyle bool) (*s3.Client, *hostRecorder) {
	t.Helper()
	tr := loopbackTransport()
	t.Cleanup(tr.CloseIdleConnections)
	rec := &hostRecorder{next: tr}
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, ""),
		HTTPClient:  &http.Client{Transport: rec},
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = pathStyle
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return c, rec
}

// sdkFor returns a path-style client for a running s3seal.
func sdkFor(t *testing.T, p *sealProc) *s3.Client {
	t.Helper()
	return newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
}

// motoClient returns a client that talks to moto directly (the backend view).
func motoClient(t *testing.T, m *motoServer) *s3.Client {
	t.Helper()
	return newSDKClient(t, m.Endpoint, "x", "y", true)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func md5Hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// unquote strips the quotes of an ETag.
func unquote(s *string) string { return strings.Trim(aws.ToString(s), `"`) }

// patternBytes returns n deterministic pseudo-random bytes for seed.
func patternBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), 0xe2})
	_, _ = r.Read(b)
	return b
}

func mustCreateBucket(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	if _, err := c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", bucket, err)
	}
}

// startWithBucket starts s3seal with o and makes bucket through it with
// create (mustCreateBucket, mustCreateVersionedBucket or
// mustCreateLockedBucket); it returns the process and its path-style
// client.
func startWithBucket(t *testing.T, o sealOpts, create func(*testing.T, *s3.Client, string), bucket string) (*sealProc, *s3.Client) {
	t.Helper()
	p := startS3seal(t, o)
	c := sdkFor(t, p)
	create(t, c, bucket)
	return p, c
}

// mustCreateLockedBucket creates bucket with Object Lock enabled (which
// turns its versioning on).
func mustCreateLockedBucket(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	if _, err := c.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String(bucket), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatalf("CreateBucket %s with Object Lock: %v", bucket, err)
	}
}

// mustEnableVersioning turns bucket's versioning on.
func mustEnableVersioning(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	if _, err := c.PutBucketVersioning(ctxT(t), &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("PutBucketVersioning %s Enabled: %v", bucket, err)
	}
}

// mustCreateVersionedBucket creates bucket and turns its versioning on.
func mustCreateVersionedBucket(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	mustCreateBucket(t, c, bucket)
	mustEnableVersioning(t, c, bucket)
}

// putObj PUTs body and checks that the returned ETag is its hex MD5.
func putObj(t *testing.T, c *s3.Client, bucket, key string, body []byte) {
	t.Helper()
	out, err := c.PutObject(ctxT(t), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
	})
	if err != nil {
		t.Fatalf("PutObject %s/%s: %v", bucket, key, err)
	}
	if got, want := unquote(out.ETag), md5Hex(body); got != want {
		t.Fatalf("PutObject %s/%s ETag = %q, want MD5 %q", bucket, key, got, want)
	}
}

// getObj GETs a whole object and checks its length header and ETag.
func getObj(t *testing.T, c *s3.Client, bucket, key string) []byte {
	t.Helper()
	out, err := c.GetObject(ctxT(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObject %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("GetObject %s/%s body: %v", bucket, key, err)
	}
	if out.ContentLength != nil && *out.ContentLength != int64(len(b)) {
		t.Errorf("GetObject %s/%s Content-Length %d, body %d bytes", bucket, key, *out.ContentLength, len(b))
	}
	if got, want := unquote(out.ETag), md5Hex(b); got != want {
		t.Errorf("GetObject %s/%s ETag = %q, want MD5 of body %q", bucket, key, got, want)
	}
	return b
}

// apiCode returns the S3 error code and HTTP status of err ("" and 0 if none).
func apiCode(err error) (string, int) {
	var code string
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return code, re.HTTPStatusCode()
	}
	return code, 0
}

// wantStatus fails unless err is an API error with the given HTTP status
// (and code, when code is not empty).
func wantStatus(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want HTTP %d %s", what, status, code)
		return
	}
	gotCode, gotStatus := apiCode(err)
	if gotStatus != status || (code != "" && gotCode != code) {
		t.Errorf("%s: got HTTP %d %q (%v), want HTTP %d %q", what, gotStatus, gotCode, err, status, code)
	}
}
