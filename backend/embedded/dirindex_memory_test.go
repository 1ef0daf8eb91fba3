package embedded

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	atLimit := grown * float64(maxIndexedEntries) / float64(b.ix.held)
	t.Logf("heap +%.1f MiB for %d held; at the limit %.0f MiB", grown/(1<<20), b.ix.held, atLimit/(1<<20))
	if atLimit > 128<<20 {
		t.Fatalf("the index would take %.0f MiB at its limit, want at most 128 MiB", atLimit/(1<<20))
	}
}
