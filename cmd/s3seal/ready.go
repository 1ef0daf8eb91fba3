package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// readiness answers /readyz: can s3seal serve? It asks the backend for its
// buckets (an authenticated request, so credentials, clock skew and
// reachability are all checked) and round-trips a data key through the
// primary master key. The answer is kept for ttl, so that probes cost the
// backend at most one request per ttl.
type readiness struct {
	be      backend.Store // without retries: a probe must answer quickly
	kr      *crypto.Keyring
	ttl     time.Duration
	timeout time.Duration

	mu  sync.Mutex
	at  time.Time
	err error
}

func newReadiness(be backend.Store, kr *crypto.Keyring) *readiness {
	return &readiness{be: be, kr: kr, ttl: 5 * time.Second, timeout: 5 * time.Second}
}

// check returns nil when ready, else what is wrong. Concurrent callers
// share one probe.
func (r *readiness) check(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && time.Since(r.at) < r.ttl {
		return r.err
	}
	// A probe cut short by its own client says nothing about s3seal.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	r.err = r.probe(pctx)
	r.at = time.Now()
	return r.err
}

func (r *readiness) probe(ctx context.Context) error {
	if err := r.checkKeyring(); err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	if _, err := r.be.ListBuckets(ctx); err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	return nil
}

func (r *readiness) checkKeyring() error {
	if r.kr == nil || !r.kr.Has(r.kr.Primary()) {
		return fmt.Errorf("no primary master key")
	}
	dk, err := crypto.NewDataKey()
	if err != nil {
		return err
	}
	name := crypto.Name{Bucket: "readyz", Key: "probe"}
	env, err := r.kr.Wrap(dk, "", name, crypto.Binding{})
	if err != nil {
		return err
	}
	_, _, err = r.kr.Unwrap(env, name)
	return err
}
