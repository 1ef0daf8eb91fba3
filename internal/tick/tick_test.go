package tick

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: f is called again and again while ctx lasts, and Every
// returns once ctx ends, calling f no more.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var calls atomic.Int64
	done := make(chan struct{})
	go func() {
		Every(ctx, time.Millisecond, func() {
			if calls.Add(1) == 3 {
				cancel()
			}
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("f called %d times; the context ended at the third", n)
	}
}
