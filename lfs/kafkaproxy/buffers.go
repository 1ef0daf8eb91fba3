package kafkaproxy

import (
	"context"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Request buffers. A request is read whole into one buffer, taken from the
// budget (MaxRequest × MaxInFlight bytes). The buffer of a large request
// (keepMin or more) is kept when the request ends and reused by a later
// request of about its size, instead of being left to the garbage
// collector: Go lets the heap grow to about twice what is live before it
// collects, so the dead buffers of past requests would sit beside the live
// ones, and a fresh buffer's pages are faulted in and zeroed again. A kept
// buffer keeps its bytes of the budget, so buffers in use and kept never
// pass the budget together: a request that finds no room drops kept
// buffers first, a request that ends while another waits for room gives
// its bytes back, and a buffer unused for keepFor is dropped.

const (
	keepMin = 1 << 20
	keepFor = 10 * time.Second
)

type bufs struct {
	budget  *semaphore.Weighted
	keepFor time.Duration

	mu      sync.Mutex
	kept    []keptBuf
	waiting int // requests waiting for room
	timer   *time.Timer
}

type keptBuf struct {
	b    []byte
	used time.Time
}

func newBufs(budget int64) *bufs {
	return &bufs{budget: semaphore.NewWeighted(budget), keepFor: keepFor}
}

// get returns a buffer of n bytes, which holds cap of the budget until put
// gives it back, waiting for room until ctx ends.
func (p *bufs) get(ctx context.Context, n int) ([]byte, error) {
	p.mu.Lock()
	if n >= keepMin {
		// The smallest kept buffer that fits, if it is not more than
		// twice n: a small request does not hold a large buffer's bytes.
		best := -1
		for i, k := range p.kept {
			if c := cap(k.b); c >= n && c/2 <= n && (best < 0 || c < cap(p.kept[best].b)) {
				best = i
			}
		}
		if best >= 0 {
			b := p.kept[best].b
			p.remove(best)
			p.mu.Unlock()
			return b[:n], nil
		}
	}
	for !p.budget.TryAcquire(int64(n)) {
		if len(p.kept) == 0 {
			p.waiting++
			p.mu.Unlock()
			err := p.budget.Acquire(ctx, int64(n))
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return make([]byte, n), nil
		}
		p.drop(0) // the least recently used
	}
	p.mu.Unlock()
	return make([]byte, n), nil
}

// put gives back a buffer get returned, once nothing refers to it.
func (p *bufs) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cap(b) < keepMin || p.waiting > 0 {
		p.budget.Release(int64(cap(b)))
		return
	}
	p.kept = append(p.kept, keptBuf{b: b, used: time.Now()})
	if p.timer == nil {
		p.timer = time.AfterFunc(p.keepFor, p.trim)
	} else if len(p.kept) == 1 {
		p.timer.Reset(p.keepFor)
	}
}

// trim drops the buffers unused for keepFor, and comes back for the others
// when theirs has passed.
func (p *bufs) trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.kept) > 0 && time.Since(p.kept[0].used) >= p.keepFor {
		p.drop(0)
	}
	if len(p.kept) > 0 {
		p.timer.Reset(p.keepFor - time.Since(p.kept[0].used))
	}
}

// close drops every kept buffer.
func (p *bufs) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.kept) > 0 {
		p.drop(0)
	}
	if p.timer != nil {
		p.timer.Stop()
	}
}

// drop lets kept buffer i go, and its bytes of the budget.
func (p *bufs) drop(i int) {
	p.budget.Release(int64(cap(p.kept[i].b)))
	p.remove(i)
}

func (p *bufs) remove(i int) {
	p.kept = slices.Delete(p.kept, i, i+1)
}
