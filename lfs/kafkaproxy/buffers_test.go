package kafkaproxy

import (
	"testing"
	"time"
)

const mib = 1 << 20

// A large request's buffer serves the next request of about its size; a
// small request's is not kept, nor does a small request take a large kept
// buffer.
func TestBufsReuseLargeBuffers(t *testing.T) {
	p := newBufs(8 * mib)
	defer p.close()
	a := make([]byte, 3*mib)
	p.give(a)
	b := p.take(3*mib - 100)
	if cap(b) != cap(a) || &b[:1][0] != &a[0] {
		t.Fatal("the next large request got no kept buffer")
	}
	p.give(b)
	if c := p.take(mib); c != nil {
		t.Fatal("a request of a third of a kept buffer's size took it")
	}
	p.give(make([]byte, 1000))
	if len(p.kept) != 1 {
		t.Fatalf("%d buffers kept, want 1 (a small one is not kept)", len(p.kept))
	}
	p.close()
	if len(p.kept) != 0 || p.bytes != 0 {
		t.Fatal("close kept buffers")
	}
}

// Kept buffers never pass their bound: the least recently used go first.
func TestBufsKeptBounded(t *testing.T) {
	p := newBufs(8 * mib)
	defer p.close()
	first := make([]byte, 3*mib)
	p.give(first)
	p.give(make([]byte, 3*mib))
	p.give(make([]byte, 4*mib))
	if p.bytes > 8*mib || len(p.kept) != 2 {
		t.Fatalf("%d bytes in %d buffers kept, bound 8 MiB", p.bytes, len(p.kept))
	}
	for _, k := range p.kept {
		if &k.b[:1][0] == &first[0] {
			t.Fatal("the oldest buffer was kept over newer ones")
		}
	}
	p.give(make([]byte, 9*mib))
	if p.bytes > 8*mib {
		t.Fatal("a buffer past the bound was kept")
	}
}

// Kept buffers unused for keepFor are dropped.
func TestBufsDropUnused(t *testing.T) {
	p := newBufs(8 * mib)
	defer p.close()
	p.keepFor = 50 * time.Millisecond
	p.give(make([]byte, 2*mib))
	p.give(make([]byte, 5*mib))
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.kept)
		p.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("kept buffers were not dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
