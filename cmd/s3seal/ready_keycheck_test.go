package main

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// stallingKeys is a keyring check whose store stalls until the probe's
// context ends while stall is set, and finds the keyring wrong otherwise.
type stallingKeys struct {
	stall    atomic.Bool
	failures atomic.Uint64
	calls    atomic.Int32
}

func (s *stallingKeys) CheckKeyring(ctx context.Context) error {
	s.calls.Add(1)
	if s.stall.Load() {
		<-ctx.Done()
		return nil // as sealstore's: a store that fails is no finding
	}
	return &sealstore.KeyringMismatch{Expected: []string{"k"}, Has: []string{"k"}, Buckets: []string{"secret-bucket-name"}}
}

func (s *stallingKeys) KeyFailures() uint64 { return s.failures.Load() }

// A store that stalls during the keyring check leaves /readyz bounded by
// its timeout, for every caller at once (they share the probe), without a
// race on the check's fields; a key failure after it has the keyring
// checked again, and the bucket names sampled stay out of the answer.
func TestReadinessKeyCheckBoundedWhenTheStoreStalls(t *testing.T) {
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k", map[string][]byte{"k": key})
	keys := &stallingKeys{}
	keys.stall.Store(true)
	r := newReadiness(&flakyLister{}, kr, nil)
	r.store, r.ttl, r.timeout = keys, 20*time.Millisecond, 300*time.Millisecond
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = r.check(context.Background())
			keys.failures.Add(1)
		}()
	}
	wg.Wait()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("8 concurrent /readyz with the store stalling in the key check took %v", d)
	}
	keys.stall.Store(false)
	keys.failures.Add(1)
	time.Sleep(30 * time.Millisecond)
	err := r.check(context.Background())
	if err == nil {
		t.Fatalf("after a key failure the wrong keyring is not found again (%d checks)", keys.calls.Load())
	}
	if s := err.Error(); !strings.Contains(s, "another key under the same id") || strings.Contains(s, "secret-bucket-name") {
		t.Fatalf("/readyz answer: %q", s)
	}
}

// A keyring check that finds the sampled buckets sealed under another key
// makes s3seal not ready only once one of its own requests failed to open
// a data key: the buckets may be another deployment's on the same store
// account, which this one never serves.
func TestReadinessWaitsForARequestThatFailedOnTheKey(t *testing.T) {
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k", map[string][]byte{"k": key})
	keys := &stallingKeys{}
	r := newReadiness(&flakyLister{}, kr, nil)
	r.store, r.ttl = keys, 0
	// As serve does at start: the check's finding, the counter after it.
	r.keysErr, r.keysAt = keys.CheckKeyring(context.Background()), keys.KeyFailures()
	if err := r.check(context.Background()); err != nil {
		t.Fatalf("ready with no request refused yet: %v", err)
	}
	keys.failures.Add(1)
	if err := r.check(context.Background()); err == nil || !strings.Contains(err.Error(), "keyring") {
		t.Fatalf("after a request failed on the key: %v", err)
	}
}
