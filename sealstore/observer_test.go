package sealstore

import (
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

type obsRecorder struct {
	mu               sync.Mutex
	spool, spoolPeak int64
	hits, misses     int
}

func (o *obsRecorder) SpoolBytes(d int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.spool += d
	o.spoolPeak = max(o.spoolPeak, o.spool)
}

func (o *obsRecorder) Copy(bool, bool) {}

func (o *obsRecorder) ListCache(hit bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if hit {
		o.hits++
	} else {
		o.misses++
	}
}

func TestObserverSpoolAndListCache(t *testing.T) {
	f := newFixture(t)
	obs := &obsRecorder{}
	// Every body spooled (none in memory): the spool is what is observed.
	st, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true, Observer: obs, MemoryBodies: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	data := randBytes(200_000, 1)
	f.put(t, "a", data)
	if want := crypto.CiphertextSize(int64(len(data))); obs.spoolPeak != want || obs.spool != 0 {
		t.Fatalf("spool peak %d (want %d), in use after the PUT %d (want 0)", obs.spoolPeak, want, obs.spool)
	}

	// A fresh store has an empty cache: the first listing misses, the
	// second hits.
	st2, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := st2.List(f.ctx, backend.ListInput{Bucket: bucket}); err != nil {
			t.Fatal(err)
		}
	}
	if obs.misses != 1 || obs.hits != 1 {
		t.Fatalf("cache misses %d hits %d, want 1 and 1", obs.misses, obs.hits)
	}
}
