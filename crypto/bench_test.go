package crypto

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// Memory: a Writer or reader holds one pooled 64 KiB buffer while it runs
// and allocates O(1) per stream (the Writer or reader struct; see
// TestConstantAllocs), never per segment. Run with
//
//	go test ./crypto -run XXX -bench . -benchmem

var benchSizes = []int{64 << 10, 1 << 20, 64 << 20}

func benchName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

func BenchmarkWriter(b *testing.B) {
	dk, err := NewDataKey()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes {
		plain := make([]byte, n)
		b.Run(benchName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				w := NewWriter(io.Discard, dk, Stream{})
				if _, err := w.Write(plain); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReader(b *testing.B) {
	dk, err := NewDataKey()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes {
		ct := seal(b, dk, 0, make([]byte, n), 0)
		src := bytes.NewReader(ct)
		b.Run(benchName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(ct)
				r, err := NewReader(src, dk, Stream{}, int64(n), 0, int64(n))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
