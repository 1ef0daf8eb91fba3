package checksum

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

func sumOf(a Algorithm, b []byte) string {
	h := a.New()
	h.Write(b)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// TestCombineFullObject: the CRC combined from the parts' CRCs is the CRC
// of the whole object, for part sizes around the edges.
func TestCombineFullObject(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range []Algorithm{CRC32, CRC32C, CRC64NVME} {
		for _, sizes := range [][]int{{0}, {1}, {5, 0}, {1, 1, 1}, {65536, 65537, 3}, {100000, 0, 77}, {1 << 20, 1}} {
			var whole []byte
			var parts []PartSum
			for _, n := range sizes {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				whole = append(whole, b...)
				parts = append(parts, PartSum{Size: int64(n), Value: sumOf(a, b)})
			}
			got, err := Combine(a, FullObject, parts)
			if err != nil || got != sumOf(a, whole) {
				t.Errorf("%s %v: %s, %v; want %s", a, sizes, got, err, sumOf(a, whole))
			}
		}
	}
}

func TestCombineComposite(t *testing.T) {
	p1, p2 := bytes.Repeat([]byte("a"), 10), []byte("b")
	for _, a := range []Algorithm{CRC32, CRC32C, SHA1, SHA256, SHA512, MD5, XXHASH64, XXHASH3, XXHASH128} {
		parts := []PartSum{{10, sumOf(a, p1)}, {1, sumOf(a, p2)}}
		raw1, _ := base64.StdEncoding.DecodeString(parts[0].Value)
		raw2, _ := base64.StdEncoding.DecodeString(parts[1].Value)
		want := sumOf(a, append(raw1, raw2...)) + "-2"
		if got, err := Combine(a, Composite, parts); err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", a, got, err, want)
		}
	}
	if _, err := Combine(CRC64NVME, Composite, nil); err == nil {
		t.Error("COMPOSITE CRC64NVME accepted")
	}
	if _, err := Combine(SHA256, FullObject, nil); err == nil {
		t.Error("FULL_OBJECT SHA256 accepted")
	}
	if _, err := Combine(CRC32, Composite, []PartSum{{1, "AAAA"}}); err == nil || !strings.Contains(err.Error(), "part 1") {
		t.Errorf("short part checksum: %v", err)
	}
}
