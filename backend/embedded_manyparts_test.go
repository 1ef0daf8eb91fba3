package backend

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestEmbeddedPartCostFlat: a part costs the embedded store the same
// about the same whatever number of parts its upload already has. It used
// to list and stat every part file under the upload's lock, so 10,000
// parts cost 10,000² stats: nine minutes through s3seal, 1.5 now.
func TestEmbeddedPartCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 parts skipped with -short")
	}
	root := t.TempDir()
	if err := os.Mkdir(root+"/objects", 0o700); err != nil {
		t.Fatal(err)
	}
	fb, err := newFixedBackend(root + "/objects")
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	m, err := newMPStore(root+"/multipart", fb)
	if err != nil {
		t.Fatal(err)
	}
	id, err := m.create("bkt", "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	const n, window = 3000, 300
	var first, last time.Duration
	for i := 1; i <= n; i++ {
		b := fmt.Appendf(nil, "part %d", i)
		start := time.Now()
		if _, err := m.uploadPart("bkt", "k", id, int32(i), bytes.NewReader(b), int64(len(b)), ""); err != nil {
			t.Fatal(err)
		}
		switch d := time.Since(start); {
		case i <= window:
			first += d
		case i > n-window:
			last += d
		}
	}
	t.Logf("parts 1-%d: %v; parts %d-%d: %v", window, first, n-window+1, n, last)
	// Measured on two busy cores: 8x before (every part file listed and
	// statted), 3x after (the directory's names read, nothing statted).
	if last > 5*first+50*time.Millisecond {
		t.Errorf("the last %d parts took %v, the first %d %v: a part's cost grows with the parts before it", window, last, window, first)
	}
}
