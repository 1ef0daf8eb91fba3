package sigv4

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	testAK     = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testRegion = "eu-west-3"
)

var (
	testNow   = time.Date(2024, 5, 24, 12, 0, 0, 0, time.UTC)
	testCreds = aws.Credentials{AccessKeyID: testAK, SecretAccessKey: testSecret}
)

// testVerifier is a Verifier at testNow that takes data chunks of any size
// (the tests frame small bodies in small chunks; TestChunkSizeRule checks
// S3's 8 KiB minimum).
func testVerifier(opts ...Option) *Verifier {
	smallChunks := func(v *Verifier) { v.minChunk = 1 }
	return NewVerifier(StaticCredentials{testAK: testSecret}, append([]Option{WithClock(func() time.Time { return testNow }), smallChunks}, opts...)...)
}

// outcome is what the test server saw for one request.
type outcome struct {
	res     *Result
	body    []byte
	err     error // from Verify or from reading the body
	trailer http.Header
	header  http.Header
}

// verifyServer runs Verify and drains Body in a real net/http server, so
// requests are parsed exactly as in production.
type verifyServer struct {
	*httptest.Server
	mu   sync.Mutex
	last []outcome
}

func newVerifyServer(t *testing.T, v *Verifier, tls bool) *verifyServer {
	s := &verifyServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := outcome{header: r.Header.Clone()}
		o.res, o.err = v.Verify(r)
		if o.err == nil {
			o.body, o.err = io.ReadAll(o.res.Body)
			o.trailer = o.res.Trailer()
		}
		s.mu.Lock()
		s.last = append(s.last, o)
		s.mu.Unlock()
		var e *Error
		switch {
		case errors.As(o.err, &e):
			w.WriteHeader(e.StatusCode)
		case o.err != nil:
			w.WriteHeader(500)
		}
	})
	if tls {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *verifyServer) take(t *testing.T) outcome {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last) == 0 {
		t.Fatal("server saw no request")
	}
	o := s.last[len(s.last)-1]
	s.last = nil
	return o
}

// signHeader signs req with the SDK's signer the way the S3 client does.
func signHeader(t testing.TB, req *http.Request, payloadHash string, at time.Time) {
	t.Helper()
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	err := v4.NewSigner().SignHTTP(context.Background(), testCreds, req, payloadHash, "s3", testRegion, at,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
}

// presign returns a presigned URL for req made by the SDK's signer.
func presign(t *testing.T, req *http.Request, at time.Time, expires time.Duration) string {
	t.Helper()
	q := req.URL.Query()
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	req.URL.RawQuery = q.Encode()
	u, _, err := v4.NewSigner().PresignHTTP(context.Background(), testCreds, req, UnsignedPayload, "s3", testRegion, at,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// wantCode asserts err is an *Error with the given code and status.
func wantCode(t *testing.T, err error, code string, status int) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error %s", err, err, code)
	}
	if e.Code != code || e.StatusCode != status {
		t.Fatalf("error = %s/%d %q, want %s/%d", e.Code, e.StatusCode, e.Message, code, status)
	}
	return e
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

// readAll reads r to the end and returns the first non-EOF error.
func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
