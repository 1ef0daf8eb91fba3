package s3api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// rawPut opens a connection and sends the header of a signed PUT of size
// bytes (UNSIGNED-PAYLOAD) and nothing else; the caller sends the body.
func rawPut(t *testing.T, srv *httptest.Server, ak, sk, path string, size int) net.Conn {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+path, nil)
	req.ContentLength = int64(size)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk}, req,
		"UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, req.Host, size)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	return c
}

// readStatus reads one response from c, within limit.
func readStatus(c net.Conn, limit time.Duration) (int, string, error) {
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// waitSlots waits until n requests hold slots of ch.
func waitSlots(t *testing.T, ch chan struct{}, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(ch) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests in flight, want %d", len(ch), n)
		}
	}
}

// Clients that stall, or trickle slower than the minimum rate, are cut
// with RequestTimeout and free their slots, so other clients keep being
// served; a client that is slow but above the minimum rate is not cut.
func TestSlowClientsAreCut(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk"), MaxInFlight: 2, MaxInFlightPerKey: 2,
		QueueTimeout: 3 * time.Second, TransferTimeout: 400 * time.Millisecond, TransferMinBytes: 1000})
	api := srv.Config.Handler.(*Server)
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}

	// One client sends 1 byte of 1000 and stops; one sends a byte every
	// 100 ms: progress, but 4 bytes per 400 ms where 1000 are due.
	stalled := rawPut(t, srv, "ak", "sk", "/bkt/stalled", 1000)
	io.WriteString(stalled, "x")
	drip := rawPut(t, srv, "ak", "sk", "/bkt/drip", 1000)
	stopDrip := make(chan struct{})
	defer close(stopDrip)
	go func() {
		for {
			select {
			case <-stopDrip:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := io.WriteString(drip, "x"); err != nil {
					return
				}
			}
		}
	}()
	waitSlots(t, api.slots, 2)

	// Both slots are taken; the next requests are served once the slow
	// clients are cut, well within the queue timeout.
	start := time.Now()
	for i := range 3 {
		if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}, func(o *s3.Options) { o.RetryMaxAttempts = 1 }); err != nil {
			t.Fatalf("request %d while slow clients hold the slots: %v after %v", i, err, time.Since(start))
		}
	}
	for name, conn := range map[string]net.Conn{"stalled": stalled, "drip": drip} {
		code, body, err := readStatus(conn, 5*time.Second)
		if err != nil || code != http.StatusBadRequest || !strings.Contains(body, "<Code>RequestTimeout</Code>") {
			t.Errorf("%s client: %d %q (%v), want 400 RequestTimeout", name, code, body, err)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("stalled")}); apiCode(err) != "NotFound" {
		t.Errorf("the cut upload was published: %v", err)
	}

	// Slow but above the rate: 3000 bytes in pieces of 500 every 150 ms.
	slow := rawPut(t, srv, "ak", "sk", "/bkt/slow", 3000)
	for range 6 {
		time.Sleep(150 * time.Millisecond)
		if _, err := io.WriteString(slow, strings.Repeat("s", 500)); err != nil {
			t.Fatal(err)
		}
	}
	if code, body, err := readStatus(slow, 5*time.Second); err != nil || code != http.StatusOK {
		t.Fatalf("slow client above the minimum rate: %d %q (%v)", code, body, err)
	}
}

// A response the client does not read is cut after the timeout too: the
// request's slot frees although the handler was blocked writing.
func TestSlowReaderIsCut(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: SingleCredential("ak", "sk"), MaxInFlight: 1, MaxInFlightPerKey: 1,
		QueueTimeout: 3 * time.Second, TransferTimeout: 400 * time.Millisecond, TransferMinBytes: 1000})
	api := srv.Config.Handler.(*Server)
	ctx := context.Background()
	c := sdkClient(srv.URL, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("b", 32<<20) // more than the socket buffers hold
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("big"), Body: strings.NewReader(big)}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/bkt/big", nil)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req,
		"UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	waitSlots(t, api.slots, 1)
	// The reader never reads; the next request gets the slot.
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}, func(o *s3.Options) { o.RetryMaxAttempts = 1 }); err != nil {
		t.Fatalf("request while a client does not read its response: %v", err)
	}
}

// One access key cannot take every slot: beyond MaxInFlightPerKey its
// requests wait, then get SlowDown, while other keys are still served.
func TestMaxInFlightPerKey(t *testing.T) {
	creds := Credentials{
		"a": {AccessKey: "a", SecretKey: "sa", Read: []string{"*"}, Write: []string{"*"}},
		"b": {AccessKey: "b", SecretKey: "sb", Read: []string{"*"}, Write: []string{"*"}},
	}
	creds = oneAccount(creds) // one account, as every credential was before owners (issue 22)
	srv := newTestServerWith(t, Config{Credentials: creds, MaxInFlight: 4, MaxInFlightPerKey: 2, QueueTimeout: 300 * time.Millisecond})
	api := srv.Config.Handler.(*Server)
	ctx := context.Background()
	a, b := sdkClient(srv.URL, "a", "sa"), sdkClient(srv.URL, "b", "sb")
	if _, err := a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		io.WriteString(rawPut(t, srv, "a", "sa", fmt.Sprintf("/bkt/held%d", i), 1000), "x")
	}
	waitSlots(t, api.slots, 2)
	once := func(o *s3.Options) { o.RetryMaxAttempts = 1 }
	start := time.Now()
	_, err := a.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}, once)
	if code := httpStatus(err); code != http.StatusServiceUnavailable || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("third request of key a: status %d after %v (%v), want 503 after the queue timeout", code, time.Since(start), err)
	}
	if _, err := b.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}, once); err != nil {
		t.Fatalf("key b while key a is at its limit: %v", err)
	}
}

// A request refused before its body is read still gets its answer when the
// client stalls mid-body: net/http discards the unread body before it sends
// the answer, and that discard is bounded too.
func TestRefusedStalledBodyIsAnswered(t *testing.T) {
	creds := Credentials{"ro": {AccessKey: "ro", SecretKey: "sr", Read: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, TransferTimeout: 300 * time.Millisecond, TransferMinBytes: 1000})
	conn := rawPut(t, srv, "ro", "sr", "/bkt/k", 1000)
	io.WriteString(conn, "x")
	code, body, err := readStatus(conn, 3*time.Second)
	if err != nil || code != http.StatusForbidden {
		t.Fatalf("refused PUT with a stalled body: %d %q (%v), want 403", code, body, err)
	}
}
