package backend

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A TLS endpoint that takes the connection and never answers the
// handshake is cut at the connect bound.
func TestConnectBoundsTLSHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	st, err := NewS3(S3Config{Endpoint: "https://" + ln.Addr().String(), AccessKey: "a", SecretKey: "s", PathStyle: true,
		MaxAttempts: 1, Timeouts: Timeouts{Connect: 300 * time.Millisecond}})
	must(t, err)
	start := time.Now()
	_, err = st.HeadObject(context.Background(), "bkt", "k")
	if d := time.Since(start); err == nil || d > 3*time.Second {
		t.Fatalf("HEAD over a silent TLS endpoint: %v after %v", err, d)
	}
}

// A refused connection is answered at once.
func TestRefusedAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	st, err := NewS3(S3Config{Endpoint: "http://" + addr, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1, Timeouts: DefaultTimeouts})
	must(t, err)
	start := time.Now()
	if _, err := st.HeadObject(context.Background(), "bkt", "k"); err == nil || IsStall(err) || time.Since(start) > time.Second {
		t.Fatalf("HEAD of a closed port: %v after %v", err, time.Since(start))
	}
}

// Once the answer came, the transport's further reads of the request body
// (it may go on sending after an early answer) no longer move the
// watchdog, which now guards the reads of the response body.
func TestAnsweredIgnoresSending(t *testing.T) {
	cut := make(chan error, 1)
	w := &watchdog{cancel: func(err error) { cut <- err }, t: Timeouts{Response: 50 * time.Millisecond, Idle: 50 * time.Millisecond, MinBytes: 1}}
	w.sending(phaseBody)
	w.answer()
	w.sending(phaseBody)
	w.took(10)
	select {
	case err := <-cut:
		t.Fatalf("cut after the answer by %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	w.reading()
	select {
	case err := <-cut:
		if !strings.Contains(err.Error(), "response body") {
			t.Fatalf("cut by %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the response body's watchdog never fired")
	}
}

// A read window that moved MinBytes starts anew; one that did not keeps
// the store's time: a store dripping a byte just within each Idle is cut.
func TestIdleWindowNeedsMinBytes(t *testing.T) {
	cut := make(chan error, 1)
	w := &watchdog{cancel: func(err error) { cut <- err }, t: Timeouts{Idle: 200 * time.Millisecond, MinBytes: 100}}
	w.answer()
	start := time.Now()
	for i := 0; i < 10; i++ {
		w.reading()
		select {
		case err := <-cut:
			if d := time.Since(start); !strings.Contains(err.Error(), "response body") || d < 150*time.Millisecond || d > time.Second {
				t.Fatalf("cut by %v after %v", err, d)
			}
			return
		case <-time.After(60 * time.Millisecond):
		}
		w.read(1)
	}
	t.Fatal("a byte every 60 ms of a 100-byte-per-200-ms bound was never cut")
}

// storeByHand serves each connection to a loopback listener with handle (a
// store that speaks HTTP by hand, byte by byte) and returns its address.
func storeByHand(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handle(conn)
			}()
		}
	}()
	return ln.Addr().String()
}

// A client request's stall budget shrinks with each stall and comes back
// whole once the store has moved a MiB since the last stall: stalls far
// apart in a long copy do not add up, stalls with nothing between do.
func TestStallBudgetRefillsOnProgress(t *testing.T) {
	b := &stallBudget{}
	if left := b.take(10 * time.Second); left != 10*time.Second {
		t.Fatalf("a new budget holds %v", left)
	}
	b.spend(4 * time.Second)
	b.progress(budgetRefill - 1)
	b.spend(4 * time.Second)
	b.progress(budgetRefill - 1) // counted from the last stall: not enough
	if left := b.take(10 * time.Second); left != 2*time.Second {
		t.Fatalf("after two stalls with less than a MiB between: %v left, want 2s", left)
	}
	b.progress(1)
	if left := b.take(10 * time.Second); left != 10*time.Second {
		t.Fatalf("after a MiB of progress: %v left, want the whole 10s", left)
	}
}
