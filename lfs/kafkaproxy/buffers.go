package kafkaproxy

import (
	"slices"
	"sync"
	"time"
)

// Request buffers. A request is read into a buffer that grows as its
// bytes arrive (at most twice what arrived), the bytes counted against
// the budget as they come (readBody). The buffer of a large request
// (keepMin or more) is kept when the request has been answered and taken
// by a later request of about its size, instead of being left to the
// garbage collector: Go lets the heap grow to about twice what is live
// before it collects, so the dead buffers of past requests would sit
// beside the live ones, and a fresh buffer's pages are faulted in and
// zeroed again. Kept buffers are bounded apart from the budget (at most
// maxKept bytes; a buffer unused for keepFor is dropped), so memory is at
// most about twice the budget for requests arriving plus maxKept.

const (
	keepMin = 1 << 20
	keepFor = 10 * time.Second
)

type bufs struct {
	maxKept int64
	keepFor time.Duration

	mu    sync.Mutex
	kept  []keptBuf
	bytes int64 // of kept
	timer *time.Timer
}

type keptBuf struct {
	b    []byte
	used time.Time
}

func newBufs(maxKept int64) *bufs {
	return &bufs{maxKept: maxKept, keepFor: keepFor}
}

// take returns a kept buffer (length 0) for a request of n bytes: the
// smallest that fits, if not more than twice n, so that a small request
// does not hold a large buffer. Nil when none fits.
func (p *bufs) take(n int) []byte {
	if n < keepMin {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, k := range p.kept {
		if c := cap(k.b); c >= n && c/2 <= n && (best < 0 || c < cap(p.kept[best].b)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := p.kept[best].b
	p.bytes -= int64(cap(b))
	p.kept = slices.Delete(p.kept, best, best+1)
	return b[:0]
}

// give keeps b for a later request; nothing may refer to it any more.
func (p *bufs) give(b []byte) {
	if cap(b) < keepMin {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.kept) > 0 && p.bytes+int64(cap(b)) > p.maxKept {
		p.drop(0) // the least recently used
	}
	if int64(cap(b)) > p.maxKept {
		return
	}
	p.kept = append(p.kept, keptBuf{b: b[:0], used: time.Now()})
	p.bytes += int64(cap(b))
	if p.timer == nil {
		p.timer = time.AfterFunc(p.keepFor, p.trim)
	} else if len(p.kept) == 1 {
		p.timer.Reset(p.keepFor)
	}
}

// trim drops the buffers unused for keepFor, and comes back for the
// others when theirs has passed.
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

func (p *bufs) drop(i int) {
	p.bytes -= int64(cap(p.kept[i].b))
	p.kept = slices.Delete(p.kept, i, i+1)
}
