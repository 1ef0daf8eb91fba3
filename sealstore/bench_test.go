package sealstore

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// The benchmarks time the same PUT or GET through s3seal ("sealed") and
// straight to the backend underneath ("direct"), side by side in one run,
// so that scripts/bench.sh can report s3seal's cost as a ratio: the
// absolute numbers on a shared machine mean little.
var benchSizes = []int{4 << 10, 64 << 10, 1 << 20, 16 << 20}

func BenchmarkPut(b *testing.B) {
	for _, n := range benchSizes {
		data := randBytes(n, uint64(n))
		for _, mode := range []string{"direct", "sealed"} {
			b.Run(fmt.Sprintf("size=%s/%s", sizeName(n), mode), func(b *testing.B) {
				f := newBenchFixture(b)
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var err error
					if mode == "direct" {
						_, err = f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(data), Size: int64(n)})
					} else {
						_, err = f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader(data), Size: int64(n)})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkGet(b *testing.B) {
	for _, n := range benchSizes {
		data := randBytes(n, uint64(n))
		for _, mode := range []string{"direct", "sealed"} {
			b.Run(fmt.Sprintf("size=%s/%s", sizeName(n), mode), func(b *testing.B) {
				f := newBenchFixture(b)
				if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "raw", Body: bytes.NewReader(data), Size: int64(n)}); err != nil {
					b.Fatal(err)
				}
				if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: "enc", Body: bytes.NewReader(data), Size: int64(n)}); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var body io.ReadCloser
					if mode == "direct" {
						obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "raw"})
						if err != nil {
							b.Fatal(err)
						}
						body = obj.Body
					} else {
						_, rd, err := f.st.Get(f.ctx, bucket, "enc", nil)
						if err != nil {
							b.Fatal(err)
						}
						body = rd
					}
					if m, err := io.Copy(io.Discard, body); err != nil || m != int64(n) {
						b.Fatalf("read %d bytes: %v", m, err)
					}
					body.Close()
				}
			})
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// newBenchFixture is newFixture with s3seal's default options (no
// Content-MD5 to the backend, as for a TLS or embedded backend).
func newBenchFixture(b *testing.B) *fixture {
	f := newFixture(b)
	st, err := New(Direct(f.be), f.kr, Options{SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	f.st = st
	return f
}
