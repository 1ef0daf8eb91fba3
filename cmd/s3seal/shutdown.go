package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"
)

// drain shuts s3seal's servers down gracefully once SIGTERM (or SIGINT)
// came: /readyz answers 503 at once (ready.shutdown), every server keeps
// serving, new connections too, for delay, so that load balancers and
// Kubernetes endpoints stop sending; then each server closes its
// listener (new connections are refused) and waits for the requests in
// flight, up to timeout; those still running then are cut. A signal on
// again ends the waiting at once.
func drain(log *slog.Logger, ready *readiness, delay, timeout time.Duration, again <-chan os.Signal, srvs ...*http.Server) error {
	ready.shutdown()
	log.Info("s3seal shutting down: /readyz answers 503; serving on for --shutdown-delay, then finishing the requests in flight for up to --shutdown-timeout (a second signal stops at once)",
		"shutdown_delay", delay, "shutdown_timeout", timeout)
	start := time.Now()
	wait := time.NewTimer(delay)
	defer wait.Stop()
	select {
	case <-wait.C:
	case <-again:
		log.Warn("s3seal stopping at once (second signal): requests in flight are cut")
		closeAll(srvs)
		return nil
	}
	log.Info("s3seal no longer accepting connections; waiting for the requests in flight")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-again:
			log.Warn("s3seal stopping at once (second signal): requests in flight are cut")
			cancel()
		case <-ctx.Done():
		}
	}()
	errs := make([]error, len(srvs))
	var wg sync.WaitGroup
	for i, srv := range srvs {
		wg.Go(func() { errs[i] = srv.Shutdown(ctx) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			log.Warn("s3seal: requests still in flight after --shutdown-timeout are cut", "shutdown_timeout", timeout)
		}
		closeAll(srvs)
		return nil
	}
	log.Info("s3seal stopped: every request in flight finished", "took", time.Since(start).Round(time.Millisecond))
	return errors.Join(errs...)
}

func closeAll(srvs []*http.Server) {
	for _, srv := range srvs {
		_ = srv.Close()
	}
}
