package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// On SIGTERM: /readyz answers 503 "shutting down" at once while s3seal
// still serves new connections for --shutdown-delay; then new connections
// are refused, the upload in flight (a body still dripping in) finishes
// with 200 and is stored whole, and the process exits 0 within the bound.
func TestShutdownDrainsUploadInFlight(t *testing.T) {
	t.Parallel()
	const delay, timeout = 2 * time.Second, 20 * time.Second
	p, c := startWithBucket(t, sealOpts{Args: []string{"--shutdown-delay", delay.String(), "--shutdown-timeout", timeout.String()}}, mustCreateBucket, "drain")
	ctx := ctxT(t)
	u, err := s3.NewPresignClient(c).PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drain"), Key: aws.String("slow")})
	if err != nil {
		t.Fatal(err)
	}
	body := patternBytes(31, 1<<20)
	conn, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const chunk = 16 << 10
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", strings.TrimPrefix(u.URL, p.Endpoint), p.Addr, len(body))
	sent := 0
	send := func(n int) {
		t.Helper()
		n = min(n, len(body)-sent)
		if _, err := conn.Write(body[sent : sent+n]); err != nil {
			t.Fatalf("upload body after %d bytes: %v", sent, err)
		}
		sent += n
	}
	send(chunk)

	term := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// /readyz turns 503 at once, on a new connection, well within the
	// delay; a new S3 request is still served.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	var ready string
	for i := 0; i < 50; i++ {
		resp, err := hc.Get(p.Endpoint + "/readyz")
		if err != nil {
			t.Fatalf("/readyz during the delay: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ready = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ready != "503 not ready: shutting down" || time.Since(term) > delay {
		t.Fatalf("/readyz after SIGTERM: %q after %v, want 503 not ready: shutting down within %v", ready, time.Since(term), delay)
	}
	putObj(t, sdkFor(t, p), "drain", "during-delay", []byte("served during the delay"))
	if time.Since(term) > delay {
		t.Fatalf("the checks during the delay took %v, longer than the delay %v: raise it", time.Since(term), delay)
	}

	// The body keeps dripping; the listener closes after the delay, while
	// the upload is still in flight.
	refusedAt := time.Duration(0)
	for sent < len(body) && refusedAt == 0 {
		send(chunk)
		nc, err := net.DialTimeout("tcp", p.Addr, time.Second)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			refusedAt = time.Since(term)
		case err != nil:
			t.Fatalf("dial during the shutdown: %v", err)
		default:
			nc.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if refusedAt == 0 {
		t.Fatalf("new connections still accepted when the whole body was sent, %v after SIGTERM", time.Since(term))
	}
	if refusedAt < delay {
		t.Errorf("new connections refused %v after SIGTERM, before --shutdown-delay %v", refusedAt, delay)
	}
	send(len(body))
	_ = conn.SetReadDeadline(time.Now().Add(timeout))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the upload in flight got no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Trim(resp.Header.Get("ETag"), `"`) != md5Hex(body) {
		t.Fatalf("the upload in flight: %s %s (ETag %s), want 200 with ETag %s", resp.Status, b, resp.Header.Get("ETag"), md5Hex(body))
	}

	select {
	case <-p.done:
	case <-time.After(delay + timeout):
		t.Fatalf("s3seal still running %v after SIGTERM", time.Since(term))
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("s3seal exited with %d after SIGTERM, want 0:\n%s", code, p.Log())
	}
	if !strings.Contains(p.Log(), "every request in flight finished") {
		t.Errorf("the log does not say the drain finished:\n%s", p.Log())
	}
	// Started again on its data dir: the upload is there, whole.
	p2 := startS3seal(t, sealOpts{DataDir: p.DataDir})
	c2 := sdkFor(t, p2)
	if got := getObj(t, c2, "drain", "slow"); !bytes.Equal(got, body) {
		t.Fatalf("the upload finished during the shutdown reads back %d bytes, want %d identical", len(got), len(body))
	}
	if got := getObj(t, c2, "drain", "during-delay"); string(got) != "served during the delay" {
		t.Fatalf("the upload during the delay reads back %q", got)
	}
}
