package e2e

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A holder of a presigned PUT URL who sends one byte and stops cannot
// take s3seal's request slots: each stalled upload is cut with
// RequestTimeout after --transfer-timeout, and other clients are served.
func TestStalledPresignedPutsAreCut(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{Args: []string{"--max-requests", "2", "--max-requests-per-key", "2", "--transfer-timeout", "1s", "--transfer-min-bytes", "1024"}}, mustCreateBucket, "slow")
	ctx := ctxT(t)
	pc := s3.NewPresignClient(c)
	var conns []net.Conn
	for i := range 2 {
		u, err := pc.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("slow"), Key: aws.String(fmt.Sprint("k", i))})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		path := strings.TrimPrefix(u.URL, p.Endpoint)
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\nx", path, p.Addr)
		conns = append(conns, conn)
	}
	time.Sleep(200 * time.Millisecond) // both uploads hold a slot
	start := time.Now()
	for i := range 4 {
		putObj(t, c, "slow", fmt.Sprint("ok", i), []byte("served"))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("other clients waited %v", d)
	}
	for i, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("stalled upload %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "RequestTimeout") {
			t.Errorf("stalled upload %d: %s %s, want 400 RequestTimeout", i, resp.Status, body)
		}
	}
}

// Over HTTP/2 the deadlines apply per stream: a stalled upload is cut with
// RequestTimeout on its stream while a request on the same connection is
// served.
func TestStalledUploadHTTP2(t *testing.T) {
	t.Parallel()
	tt := newTestTLS(t)
	p := startTLSS3seal(t, tt, sealOpts{Args: []string{"--max-requests", "1", "--transfer-timeout", "1s", "--transfer-min-bytes", "1024"}})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tt.Pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	do := func(method, path string, body io.Reader, size int64) (*http.Response, error) {
		req, _ := http.NewRequest(method, p.Endpoint+path, body)
		req.ContentLength = size
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		if err := v4.NewSigner().SignHTTP(ctxT(t), aws.Credentials{AccessKeyID: p.AccessKey, SecretAccessKey: p.SecretKey},
			req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		return client.Do(req)
	}
	resp, err := do(http.MethodPut, "/h2slow", nil, 0)
	if err != nil || resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Fatalf("create bucket over HTTP/2: %v %v", resp, err)
	}
	resp.Body.Close()

	pr, pw := io.Pipe()
	defer pw.Close()
	stalled := make(chan *http.Response, 1)
	go func() {
		resp, err := do(http.MethodPut, "/h2slow/stalled", pr, 1000)
		if err != nil {
			t.Errorf("stalled upload: %v", err)
		}
		stalled <- resp
	}()
	if _, err := pw.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the upload holds the only slot
	resp, err = do(http.MethodHead, "/h2slow", nil, 0)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("request beside a stalled HTTP/2 upload: %v %v", resp, err)
	}
	resp.Body.Close()
	if r := <-stalled; r != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "RequestTimeout") {
			t.Errorf("stalled HTTP/2 upload: %s %s, want 400 RequestTimeout", r.Status, body)
		}
	}
}
