package checksum

import (
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// CRC64NVME is computed by github.com/minio/crc64nvme, which uses
// carry-less multiplication; it must agree with the table-driven
// hash/crc64 over the NVMe polynomial for every length and alignment, and
// when the data arrives in pieces of any size.
func TestCRC64NVMEMatchesTableCRC(t *testing.T) {
	table := crc64.MakeTable(crc64NVMEPoly)
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20+77)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, n := range []int{0, 1, 7, 8, 15, 16, 63, 64, 127, 128, 255, 256, 4095, 4096, 65536, 65537, 1 << 20, len(buf)} {
		for _, off := range []int{0, 1, 3, 8} {
			if off+n > len(buf) {
				continue
			}
			data := buf[off : off+n]
			want := crc64.Checksum(data, table)
			h := CRC64NVME.New()
			// Feed it in uneven pieces, as a request body arrives.
			for rest := data; len(rest) > 0; {
				k := min(len(rest), 1+r.IntN(9000))
				h.Write(rest[:k])
				rest = rest[k:]
			}
			var got uint64
			for _, b := range h.Sum(nil) {
				got = got<<8 | uint64(b)
			}
			if got != want {
				t.Fatalf("n=%d off=%d: crc64nvme %016x, hash/crc64 %016x", n, off, got, want)
			}
		}
	}
}

// BenchmarkHasherCRC64NVME measures the default checksum of every PUT.
func BenchmarkHasherCRC64NVME(b *testing.B) {
	buf := make([]byte, 1<<20)
	h := CRC64NVME.New()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		h.Write(buf)
	}
}
