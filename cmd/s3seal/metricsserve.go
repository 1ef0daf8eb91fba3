package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	netpprof "net/http/pprof"
	"time"
)

// startMetrics serves /metrics, /healthz and /readyz on a listener of
// their own (--metrics-listen), for those who must not expose them with
// the S3 API, and with pprof set Go's profiles (--pprof). The caller
// closes the returned server.
func startMetrics(addr string, metrics http.Handler, ready func(context.Context) error, pprof bool, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--metrics-listen %s: %v", addr, err)
	}
	srv := &http.Server{Handler: metricsMux(metrics, ready, pprof), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	log.Info(fmt.Sprintf("metrics on http://%s/metrics", ln.Addr()))
	if pprof {
		log.Info(fmt.Sprintf("pprof on http://%s/debug/pprof/", ln.Addr()))
	}
	return srv, nil
}

// healthz is liveness: 200 while the process serves; it says nothing and
// needs no credential.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
}

// metricsMux routes the metrics listener's requests.
func metricsMux(metrics http.Handler, ready func(context.Context) error, pprof bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := ready(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	if pprof {
		// The index serves the runtime's profiles by name (heap,
		// goroutine, allocs, block, mutex, threadcreate). The command
		// line (/debug/pprof/cmdline) is left out: a secret given as a
		// flag (--secret-key, for tests) would be in it.
		mux.HandleFunc("GET /debug/pprof/", netpprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", netpprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", netpprof.Symbol)
		mux.HandleFunc("POST /debug/pprof/symbol", netpprof.Symbol) // as go tool pprof asks
		mux.HandleFunc("GET /debug/pprof/trace", netpprof.Trace)
	}
	return mux
}
