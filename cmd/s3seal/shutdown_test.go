package main

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/crypto"
)

// On SIGTERM /readyz answers 503 "shutting down" at once, though the last
// probe found s3seal ready and its answer is still cached, and without
// asking the backend again.
func TestReadinessShuttingDown(t *testing.T) {
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k", map[string][]byte{"k": key})
	if err != nil {
		t.Fatal(err)
	}
	be := &flakyLister{}
	r := newReadiness(be, kr, nil)
	r.ttl = time.Hour
	if err := r.check(t.Context()); err != nil {
		t.Fatalf("not ready before the shutdown: %v", err)
	}
	calls := be.calls.Load()
	r.shutdown()
	for range 3 {
		if err := r.check(t.Context()); !errors.Is(err, errShuttingDown) || err.Error() != "shutting down" {
			t.Fatalf("during the shutdown: %v, want shutting down", err)
		}
	}
	if be.calls.Load() != calls {
		t.Errorf("the backend was probed during the shutdown")
	}
}

func TestShutdownConfig(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.ShutdownDelay != 5*time.Second || c.ShutdownTimeout != 60*time.Second {
		t.Fatalf("defaults: delay %v timeout %v, want 5s 60s", c.ShutdownDelay, c.ShutdownTimeout)
	}
	c, err = parseConfig([]string{"--shutdown-delay", "2s"}, env(map[string]string{
		"S3SEAL_SHUTDOWN_DELAY": "9s", "S3SEAL_SHUTDOWN_TIMEOUT": "2m"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ShutdownDelay != 2*time.Second || c.ShutdownTimeout != 2*time.Minute {
		t.Fatalf("flag and environment: delay %v timeout %v, want 2s (the flag) 2m", c.ShutdownDelay, c.ShutdownTimeout)
	}
	if c, err = parseConfig([]string{"--shutdown-delay", "0s", "--shutdown-timeout", "0s"}, env(nil)); err != nil || c.ShutdownDelay != 0 {
		t.Fatalf("zero delay and timeout: %v", err)
	}
	for _, bad := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--shutdown-delay", "-1s"}, nil, "--shutdown-delay: -1s is not between 0s and 1h"},
		{[]string{"--shutdown-timeout", "2h"}, nil, "--shutdown-timeout: 2h0m0s is not between 0s and 1h"},
		{nil, map[string]string{"S3SEAL_SHUTDOWN_TIMEOUT": "soon"}, `S3SEAL_SHUTDOWN_TIMEOUT: "soon" is not a duration`},
		{nil, map[string]string{"S3SEAL_SHUTDOWN_DELAY": "-3s"}, "S3SEAL_SHUTDOWN_DELAY: -3s is not between"},
	} {
		_, err := parseConfig(bad.args, env(bad.env))
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v %v: %v, want a usage error with %q", bad.args, bad.env, err, bad.want)
		}
	}
}

// drainFixture serves a slow handler (answers once release is closed) and
// /readyz from the readiness, on a loopback listener.
type drainFixture struct {
	srv     *http.Server
	addr    string
	ready   *readiness
	started chan struct{}
	release chan struct{}
	served  chan error
}

func newDrainFixture(t *testing.T) *drainFixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k", map[string][]byte{"k": key})
	f := &drainFixture{addr: ln.Addr().String(), ready: newReadiness(&flakyLister{}, kr, nil),
		started: make(chan struct{}, 1), release: make(chan struct{}), served: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		f.started <- struct{}{}
		select {
		case <-f.release:
			_, _ = io.WriteString(w, "done")
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := f.ready.check(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
		}
	})
	f.srv = &http.Server{Handler: mux}
	go func() { f.served <- f.srv.Serve(ln) }()
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// get sends a request on a connection of its own.
func (f *drainFixture) get(path string) (int, string, error) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + f.addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// A request in flight at SIGTERM finishes; during the delay /readyz is
// 503 and new connections are still served; after it new connections are
// refused; drain returns once the request finished.
func TestDrainFinishesRequestsInFlight(t *testing.T) {
	f := newDrainFixture(t)
	slow := make(chan error, 1)
	go func() {
		code, body, err := f.get("/slow")
		if err == nil && (code != 200 || body != "done") {
			err = errors.New("slow request: " + body)
		}
		slow <- err
	}()
	<-f.started
	const delay = 400 * time.Millisecond
	drained := make(chan error, 1)
	go func() { drained <- drain(slog.New(slog.DiscardHandler), f.ready, delay, time.Minute, nil, f.srv) }()

	code, body, err := f.get("/readyz") // a new connection during the delay
	if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Fatalf("/readyz during the delay: %d %q %v, want 503 shutting down", code, body, err)
	}
	// After the delay the listener closes: poll (bounded) until a new
	// connection is refused, which must happen while the slow request
	// is still running.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", f.addr, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections still accepted 10s after the shutdown began")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-drained:
		t.Fatalf("drain returned (%v) with a request in flight", err)
	default:
	}
	close(f.release)
	if err := <-slow; err != nil {
		t.Fatalf("the request in flight: %v", err)
	}
	if err := <-drained; err != nil {
		t.Fatalf("drain: %v", err)
	}
}

// A request still running at the end of --shutdown-timeout is cut, and so
// is one running when a second signal comes.
func TestDrainCutsAfterTimeoutOrSecondSignal(t *testing.T) {
	for _, name := range []string{"timeout", "second signal"} {
		t.Run(name, func(t *testing.T) {
			f := newDrainFixture(t)
			slow := make(chan error, 1)
			go func() { _, _, err := f.get("/slow"); slow <- err }()
			<-f.started
			timeout, again := 300*time.Millisecond, make(chan os.Signal, 1)
			if name == "second signal" {
				timeout = time.Hour
			}
			drained := make(chan error, 1)
			go func() { drained <- drain(slog.New(slog.DiscardHandler), f.ready, 0, timeout, again, f.srv) }()
			if name == "second signal" {
				again <- os.Interrupt
			}
			select {
			case <-drained:
			case <-time.After(10 * time.Second):
				t.Fatal("drain did not return")
			}
			if err := <-slow; err == nil {
				t.Fatal("the request still running was not cut")
			}
		})
	}
}
