package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// flakyLister is a backend whose ListBuckets fails while down is set.
type flakyLister struct {
	backend.Store
	down  atomic.Bool
	calls atomic.Int32
}

func (f *flakyLister) ListBuckets(ctx context.Context) ([]backend.Bucket, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, &backend.Error{Op: "ListBuckets", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	}
	return nil, nil
}

func TestReadinessFollowsTheBackend(t *testing.T) {
	key, _ := crypto.GenerateKey()
	kr, err := crypto.NewKeyring("k", map[string][]byte{"k": key})
	if err != nil {
		t.Fatal(err)
	}
	be := &flakyLister{}
	var logged strings.Builder
	r := newReadiness(be, kr, slog.New(slog.NewTextHandler(&logged, nil)))
	r.ttl = 50 * time.Millisecond
	ctx := context.Background()
	if err := r.check(ctx); err != nil {
		t.Fatalf("ready backend: %v", err)
	}
	be.down.Store(true)
	if err := r.check(ctx); err != nil || be.calls.Load() != 1 {
		t.Fatalf("within the ttl the cached answer counts: %v after %d calls", err, be.calls.Load())
	}
	time.Sleep(60 * time.Millisecond)
	err = r.check(ctx)
	if err == nil || !strings.Contains(err.Error(), "object store") {
		t.Fatalf("backend down: %v", err)
	}
	// The unauthenticated answer names what failed, not the addresses
	// or the store's words; those go to the log.
	if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "refused") {
		t.Fatalf("/readyz reason leaks the backend error: %v", err)
	}
	if !strings.Contains(logged.String(), "connection refused") {
		t.Fatalf("the backend error is not logged: %q", logged.String())
	}
	be.down.Store(false)
	time.Sleep(60 * time.Millisecond)
	if err := r.check(ctx); err != nil {
		t.Fatalf("backend back: %v", err)
	}
}

func TestReadinessChecksTheKeyring(t *testing.T) {
	r := newReadiness(&flakyLister{}, nil, nil)
	if err := r.check(context.Background()); err == nil || !strings.Contains(err.Error(), "keyring") {
		t.Fatalf("no keyring: %v", err)
	}
}
