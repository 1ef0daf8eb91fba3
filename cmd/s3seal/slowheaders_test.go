package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/s3api"
	"github.com/s3seal/s3seal/sealstore"
)

// loadServer runs the S3 API as serve runs it (newAPIServer) over the
// embedded store, with credential ak/sk and a bucket "bkt"; it returns
// the address, the number of connections open to it, and a client that
// opens a connection per request.
func loadServer(t *testing.T, headerTimeout, transferTimeout time.Duration) (string, *atomic.Int64, *http.Client) {
	t.Helper()
	be, closer, err := embedded.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": key})
	store, err := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir(), OwnerPendingAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	api := s3api.New(s3api.Config{Store: store, Credentials: s3api.SingleCredential("ak", "sk"),
		MaxInFlight: 64, MaxInFlightPerKey: 64, TransferTimeout: transferTimeout, TransferMinBytes: 1000})
	srv := newAPIServer(api, headerTimeout, log.New(io.Discard, "", 0), nil)
	conns := &atomic.Int64{}
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			conns.Add(-1)
		}
	}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	addr := ln.Addr().String()
	if resp := signedDo(t, c, http.MethodPut, "http://"+addr+"/bkt", ""); resp.StatusCode != 200 {
		t.Fatalf("create bucket: %d", resp.StatusCode)
	}
	return addr, conns, c
}

// signRaw signs req for ak/sk with an unsigned payload.
func signRaw(t *testing.T, req *http.Request) {
	t.Helper()
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req,
		"UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
}

// signedDo sends one signed request with body and returns its answer,
// body read and closed.
func signedDo(t *testing.T, c *http.Client, method, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	signRaw(t, req)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// frontGoroutines counts the goroutines but those of the embedded store's
// server and of the backend client's pool of idle connections to it
// (backend.idleConns, up to 128 by design, closed when idle long enough).
func frontGoroutines() int {
	buf := make([]byte, 8<<20)
	stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
	store := map[string]bool{}
	for _, st := range stacks {
		if strings.Contains(st, "embedded.Start") && strings.Contains(st, "(*Server).Serve(") {
			id, _, _ := strings.Cut(strings.TrimPrefix(st, "goroutine "), " ")
			store["created by net/http.(*Server).Serve in goroutine "+id] = true
		}
	}
	n := 0
	for _, st := range stacks {
		_, created, _ := strings.Cut(st, "created by ")
		created, _, _ = strings.Cut("created by "+created, "\n")
		if !strings.Contains(st, "persistConn") && !store[created] && !strings.Contains(st, "embedded.Start") {
			n++
		}
	}
	return n
}

// settledGoroutines waits up to 5 s for frontGoroutines to come down to
// at most want and returns their number.
func settledGoroutines(want int) int {
	n := frontGoroutines()
	for deadline := time.Now().Add(5 * time.Second); n > want && time.Now().Before(deadline); n = frontGoroutines() {
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// dribble writes head, then one byte of more every 50 ms, until the
// server closes the connection; it returns how long the server took.
func dribble(addr, head, more string) (time.Duration, error) {
	start := time.Now() // before the server can start its clock
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c) // until the server closes
		close(closed)
	}()
	if _, err := io.WriteString(c, head); err != nil {
		return 0, err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-closed:
			return time.Since(start), nil
		case <-tick.C:
			c.Write([]byte{more[i%len(more)]}) // fails once the server is gone
		case <-time.After(30 * time.Second):
			return 0, fmt.Errorf("still open after 30 s")
		}
	}
}

// attack runs n dribbling connections at once while a normal client is
// served; it checks each is closed between the bound and 1.5 s after it,
// that the normal client is answered within a second meanwhile, and
// that the goroutines come back to what they were.
func attack(t *testing.T, addr string, conns *atomic.Int64, c *http.Client, n int, bound time.Duration, head func() string, more string, normal func() int) {
	t.Helper()
	before := frontGoroutines()
	var heapBefore, heapDuring runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&heapBefore)
	var wg sync.WaitGroup
	took := make([]time.Duration, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took[i], errs[i] = dribble(addr, head(), more)
		}()
	}
	time.Sleep(bound / 2)
	during := frontGoroutines()
	runtime.ReadMemStats(&heapDuring)
	for range 3 {
		start := time.Now()
		if status := normal(); status != 200 || time.Since(start) > time.Second {
			t.Errorf("a normal client during the attack: %d after %v", status, time.Since(start))
		}
		time.Sleep(bound / 4)
	}
	wg.Wait()
	lo, hi := took[0], took[0]
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("connection %d: %v", i, errs[i])
		}
		lo, hi = min(lo, took[i]), max(hi, took[i])
	}
	if lo < bound-100*time.Millisecond || hi > bound+1500*time.Millisecond {
		t.Errorf("%d connections closed after %v to %v, bound %v", n, lo, hi, bound)
	}
	after := settledGoroutines(before + 2)
	if after > before+2 {
		t.Errorf("goroutines: %d before the attack, %d after it", before, after)
	}
	// The normal client's keep-alive connection is its own, not the
	// attack's; the server notices the others closed as it gets to them.
	c.CloseIdleConnections()
	for deadline := time.Now().Add(2 * time.Second); conns.Load() != 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if open := conns.Load(); open != 0 {
		t.Errorf("%d connections still open 2 s after the attack", open)
	}
	t.Logf("%d connections closed after %v to %v (bound %v); goroutines %d before, %d during, %d after; %d connections open after; heap in use %d KiB before, %d KiB during",
		n, lo.Round(time.Millisecond), hi.Round(time.Millisecond), bound, before, during, after, conns.Load(),
		heapBefore.HeapInuse>>10, heapDuring.HeapInuse>>10)
}

// Slowloris: 200 connections each sending its header a byte at a time
// are closed at --header-timeout while a normal client is served, and
// leave nothing behind.
func TestSlowHeadersClosedAtTimeout(t *testing.T) {
	const bound = 1500 * time.Millisecond
	addr, conns, c := loadServer(t, bound, 30*time.Second)
	attack(t, addr, conns, c, 200, bound, func() string { return "GET /bkt HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: " }, "abcdefgh",
		func() int { return signedDo(t, c, http.MethodGet, "http://"+addr+"/bkt", "").StatusCode })
}

// Slow bodies: 50 uploads each sending its body a byte at a time are cut
// at --transfer-timeout with S3's 400 RequestTimeout while a normal
// upload is served, and leave nothing behind.
func TestSlowBodiesCutAtTimeout(t *testing.T) {
	const bound = 1500 * time.Millisecond
	addr, conns, c := loadServer(t, 30*time.Second, bound)
	head := func() string {
		req, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/bkt/slow", nil)
		req.ContentLength = 1 << 20
		signRaw(t, req)
		var b strings.Builder
		fmt.Fprintf(&b, "PUT /bkt/slow HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", addr, req.ContentLength)
		req.Header.Write(&b)
		return b.String() + "\r\n"
	}
	attack(t, addr, conns, c, 50, bound, head, "x",
		func() int { return signedDo(t, c, http.MethodPut, "http://"+addr+"/bkt/normal", "normal").StatusCode })
	// What a cut upload is told.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, head()+"x")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "<Code>RequestTimeout</Code>") {
		t.Fatalf("a stalled upload: %d %s", resp.StatusCode, body)
	}
}

// The header section: past S3's 8 KiB, in one header or many, s3seal
// answers S3's 400 RequestHeaderSectionTooLarge; past maxHeaderBytes
// net/http stops reading and answers 431 without reaching s3seal.
func TestHeaderSectionBounds(t *testing.T) {
	addr, _, _ := loadServer(t, 30*time.Second, 30*time.Second)
	send := func(extra string) (int, string) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go io.WriteString(conn, "GET /bkt/k HTTP/1.1\r\nHost: "+addr+"\r\n"+extra+"\r\n")
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	many := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "X-Many-%d: v\r\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, extra string
		status      int
		code        string
	}{
		{"one header of 9 KiB", "X-Pad: " + strings.Repeat("p", 9<<10) + "\r\n", 400, "RequestHeaderSectionTooLarge"},
		{"1000 small headers", many(1000), 400, "RequestHeaderSectionTooLarge"},
		{"one header of 60 KiB", "X-Pad: " + strings.Repeat("p", 60<<10) + "\r\n", 400, "RequestHeaderSectionTooLarge"},
		{"one header of 100 KiB", "X-Pad: " + strings.Repeat("p", 100<<10) + "\r\n", 431, ""},
		{"20000 small headers", many(20000), 431, ""},
		{"a header of 1 KiB", "X-Pad: " + strings.Repeat("p", 1<<10) + "\r\n", 403, "AccessDenied"},
	} {
		status, body := send(tc.extra)
		if status != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%s (%d bytes): %d %.200s, want %d %s", tc.name, len(tc.extra), status, body, tc.status, tc.code)
		}
	}
}

// --header-timeout: 30 s unless given, 1 s to 10 m.
func TestHeaderTimeoutConfig(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil || c.HeaderTimeout != 30*time.Second {
		t.Fatalf("default: %v %v, want 30s", c.HeaderTimeout, err)
	}
	if c, err = parseConfig(nil, env(map[string]string{"S3SEAL_HEADER_TIMEOUT": "2s"})); err != nil || c.HeaderTimeout != 2*time.Second {
		t.Fatalf("from the environment: %v %v, want 2s", c.HeaderTimeout, err)
	}
	for _, bad := range []string{"500ms", "0s", "11m"} {
		if _, err := parseConfig([]string{"--header-timeout", bad}, env(nil)); err == nil || !strings.Contains(err.Error(), "is not between 1s and 10m") {
			t.Errorf("--header-timeout %s: %v", bad, err)
		}
	}
}
