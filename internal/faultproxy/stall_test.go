package faultproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// doCtx sends a request that gives up after d, and reports how far it got:
// the response (nil when none came), the body bytes read, and the error.
func doCtx(t *testing.T, d time.Duration, method, url, body string) (*http.Response, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return resp, string(got), err
}

func TestStallNeverAnswers(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: HeadObject, Fault: Stall}, Rule{Op: CompleteMultipartUpload, Fault: ForwardThenStall})
	if resp, _, err := doCtx(t, 300*time.Millisecond, "HEAD", p.URL()+"/b/k", ""); resp != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled HEAD: resp=%v err=%v, want no answer", resp, err)
	}
	if len(o.requests()) != 0 {
		t.Fatalf("Stall forwarded: %q", o.requests())
	}
	deadline := time.Now().Add(2 * time.Second)
	for p.Held() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p.Held() != 0 {
		t.Fatalf("%d requests still held after their client went away", p.Held())
	}
	if resp, _, err := doCtx(t, 300*time.Millisecond, "POST", p.URL()+"/b/k?uploadId=u", "x"); resp != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled completion: resp=%v err=%v, want no answer", resp, err)
	}
	if len(o.requests()) != 1 {
		t.Fatalf("ForwardThenStall did not forward: %q", o.requests())
	}
}

func TestStallReadingTakesHalfTheBody(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: UploadPart, Fault: StallReading})
	body := strings.Repeat("x", 8<<20) // more than the socket buffers hold
	if resp, _, err := doCtx(t, 500*time.Millisecond, "PUT", p.URL()+"/b/k?partNumber=1&uploadId=u", body); resp != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("resp=%v err=%v, want the upload stuck", resp, err)
	}
	if len(o.requests()) != 0 {
		t.Fatalf("StallReading forwarded: %q", o.requests())
	}
}

func TestForwardThenStallBody(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: GetObject, Fault: ForwardThenStallBody})
	resp, body, err := doCtx(t, 300*time.Millisecond, "GET", p.URL()+"/b/k", "")
	if resp == nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(o.reply)) {
		t.Fatalf("resp=%v err=%v, want the headers of the whole answer", resp, err)
	}
	if body != o.reply[:len(o.reply)/2] || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read %d bytes, err=%v; want half the body and then nothing", len(body), err)
	}
}

func TestDripMovesABytePerTick(t *testing.T) {
	o := newOrigin(t)
	o.reply = "0123456789"
	p := startProxy(t, o)
	p.Inject(Rule{Op: GetObject, Fault: Drip, Delay: 20 * time.Millisecond})
	start := time.Now()
	resp, body, err := doCtx(t, 5*time.Second, "GET", p.URL()+"/b/k", "")
	if err != nil || resp.StatusCode != 200 || body != o.reply {
		t.Fatalf("resp=%v err=%v body=%q", resp, err, body)
	}
	if d := time.Since(start); d < 9*20*time.Millisecond {
		t.Fatalf("10 bytes dripped in %v, want at least 9 ticks of 20ms", d)
	}
}

func TestCloseEndsStalls(t *testing.T) {
	o := newOrigin(t)
	p := startProxy(t, o)
	p.Inject(Rule{Op: HeadObject, Fault: Stall})
	done := make(chan error, 1)
	go func() {
		_, _, err := doCtx(t, 10*time.Second, "HEAD", p.URL()+"/b/k", "")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	p.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a stalled request got an answer")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close left a stalled request hanging")
	}
}
