package embedded

import (
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestDirIndexMemoryBoundWithLongKeys: the index starts again empty at its
// limit so that its memory stays about 100 MiB whatever the bucket holds
// (docs/DESIGN.md, "Listings are paged"). Long keys in deep trees (here
// four segments of 240 bytes, one directory per entry) cost far more per
// entry than short ones; the heap the index takes, scaled to its limit,
// must stay within 128 MiB.
func TestDirIndexMemoryBoundWithLongKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 5,000 files")
	}
	root := t.TempDir()
	seg := strings.Repeat("s", 240)
	for i := 0; i < 5000; i++ {
		k := fmt.Sprintf("%s%06d/%s/%s/%s", seg, i, seg, seg, seg)
		p := filepath.Join(root, "buckets", "bkt", filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := newFixedBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	if err := b.eachKey("bkt", "", func(string) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(b)
	if n != 5000 {
		t.Fatalf("%d keys walked, want 5000", n)
	}
	grown := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	atLimit := grown * float64(b.ix.limit) / float64(b.ix.held)
	t.Logf("heap +%.1f MiB for %d bytes held; at the limit %.0f MiB", grown/(1<<20), b.ix.held, atLimit/(1<<20))
	if atLimit > 128<<20 {
		t.Fatalf("the index would take %.0f MiB at its limit, want at most 128 MiB", atLimit/(1<<20))
	}
}

// TestDirIndexStartingAgainKeepsPagesRight: with a limit so small that
// the index starts again empty many times within each page (a listing
// held by one walk dropped under another), every page still matches the
// brute-force model, writes between pages included.
func TestDirIndexStartingAgainKeepsPagesRight(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	b, err := newFixedBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b.ix.limit = 600 // a few small directories
	if err := b.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 80; i++ {
			k := randomKey(r)
			if putKey(t, b, "bkt", k) == nil {
				stored[k] = true
			}
		}
		keys := slices.Sorted(maps.Keys(stored))
		for _, k := range keys[:len(keys)/4] {
			if _, err := b.DeleteObject("bkt", k); err != nil {
				t.Fatal(err)
			}
			delete(stored, k)
		}
		keys = slices.Sorted(maps.Keys(stored))
		for _, prefix := range []string{"", "a", "a/", "é"} {
			for _, delim := range []string{"", "/", "-"} {
				for _, start := range []string{"", "a/", keys[r.Intn(len(keys))]} {
					for _, maxKeys := range []int64{1, 3, 1000} {
						pageAll(t, b, "bkt", keys, prefix, delim, start, maxKeys)
					}
				}
			}
		}
		b.ix.mu.Lock()
		held, dirs := b.ix.held, len(b.ix.dirs)
		b.ix.mu.Unlock()
		if held > b.ix.limit+4096 || dirs > 20 {
			t.Fatalf("round %d: %d bytes in %d listings held, limit %d", round, held, dirs, b.ix.limit)
		}
	}
}
