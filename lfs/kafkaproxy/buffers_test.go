package kafkaproxy

import (
	"context"
	"testing"
	"time"
)

const mib = 1 << 20

func getBuf(t *testing.T, p *bufs, n int) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := p.get(ctx, n)
	if err != nil {
		t.Fatalf("get %d: %v", n, err)
	}
	if len(b) != n {
		t.Fatalf("get %d: %d bytes", n, len(b))
	}
	return b
}

// allBack reports whether the whole budget is free again.
func allBack(p *bufs, budget int64) bool {
	if !p.budget.TryAcquire(budget) {
		return false
	}
	p.budget.Release(budget)
	return true
}

// A large request's buffer serves the next request of about its size, and
// holds its bytes of the budget while kept; a small request's is not kept,
// nor does a small request take a large kept buffer.
func TestBufsReuseLargeBuffers(t *testing.T) {
	p := newBufs(8 * mib)
	defer p.close()
	a := getBuf(t, p, 3*mib)
	p.put(a)
	if p.budget.TryAcquire(6 * mib) {
		t.Fatal("a kept buffer does not hold its bytes of the budget")
	}
	b := getBuf(t, p, 3*mib-100)
	if &b[0] != &a[0] {
		t.Fatal("the next large request got a fresh buffer")
	}
	p.put(b)
	c := getBuf(t, p, mib)
	if &c[0] == &a[0] {
		t.Fatal("a request of a third of a kept buffer's size took it")
	}
	p.put(c)
	if len(p.kept) != 2 {
		t.Fatalf("%d buffers kept, want 2", len(p.kept))
	}
	s := getBuf(t, p, 1000)
	p.put(s)
	if len(p.kept) != 2 {
		t.Fatal("a small request's buffer was kept")
	}
	p.close()
	if !allBack(p, 8*mib) {
		t.Fatal("the budget is not whole again after close")
	}
}

// A request that finds no room drops kept buffers for it; one waiting for
// room gets the bytes of a request that ends, which then keeps nothing.
func TestBufsKeptGiveWay(t *testing.T) {
	p := newBufs(4 * mib)
	defer p.close()
	a := getBuf(t, p, 3*mib)
	p.put(a)
	b := getBuf(t, p, 7*mib/5) // less than half the kept one, and no room beside it
	if &b[0] == &a[0] || len(p.kept) != 0 {
		t.Fatal("the kept buffer was not dropped for a request without room")
	}
	got := make(chan []byte)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, _ := p.get(ctx, 3*mib)
		got <- c
	}()
	for {
		p.mu.Lock()
		w := p.waiting
		p.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	p.put(b)
	select {
	case c := <-got:
		if c == nil {
			t.Fatal("the waiting request got no room")
		}
		p.put(c)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting request did not get the bytes of the one that ended")
	}
	if len(p.kept) != 1 {
		t.Fatalf("%d buffers kept, want the waiter's alone", len(p.kept))
	}
}

// Kept buffers unused for keepFor are dropped, their bytes given back.
func TestBufsDropUnused(t *testing.T) {
	p := newBufs(8 * mib)
	defer p.close()
	p.keepFor = 50 * time.Millisecond
	p.put(getBuf(t, p, 2*mib))
	p.put(getBuf(t, p, 5*mib))
	deadline := time.Now().Add(5 * time.Second)
	for !allBack(p, 8*mib) {
		if time.Now().After(deadline) {
			t.Fatal("kept buffers were not dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
